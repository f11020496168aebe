#!/usr/bin/env python3
"""Tests of scripts/plot.py: the exponent fit against numpy (an independent second method), the t quantile
table against known values, and the figures on synthetic sweep output (files written, summaries right).

    python3 tests/sweep/plot_test.py SOURCE_DIR
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

SRC = sys.argv[1]
sys.path.insert(0, os.path.join(SRC, "scripts"))
import plot  # noqa: E402

FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL:", what, file=sys.stderr)


# The fit: an exact power law is recovered exactly; a noisy one agrees with numpy's polyfit and its
# covariance-based standard error, and the 95% interval covers the true exponent.
Ns = [100 * 2 ** k for k in range(8)]
f = plot.loglog_fit(Ns, [3.0 * N ** 0.5 for N in Ns])
check(abs(f["b"] - 0.5) < 1e-12 and abs(f["a"] - 3.0) < 1e-9 and f["se_b"] < 1e-12, "exact power law recovered")
noise = [1.05, 0.97, 1.02, 0.95, 1.04, 0.99, 1.01, 0.96]
ys = [2.0 * N ** 0.45 * e for N, e in zip(Ns, noise)]
f = plot.loglog_fit(Ns, ys)
(b, la), cov = np.polyfit(np.log(Ns), np.log(ys), 1, cov="unscaled")
resid = np.log(ys) - (b * np.log(Ns) + la)
se = math.sqrt(cov[0][0] * float(resid @ resid) / (len(Ns) - 2))
check(abs(f["b"] - b) < 1e-12 and abs(f["se_b"] - se) < 1e-12, "slope and standard error equal numpy's")
check(f["ci95_b"][0] < 0.45 < f["ci95_b"][1], "95% interval covers the true exponent")
check(abs((f["ci95_b"][1] - f["b"]) / f["se_b"] - 2.447) < 1e-9, "interval uses t(0.975, 6) = 2.447")
check(plot.t975(1) == 12.706 and plot.t975(10) == 2.228 and abs(plot.t975(1000) - 1.962) < 1e-3, "t quantiles")
check(all(plot.t975(k) > plot.t975(k + 1) for k in range(1, 60)), "t quantiles decrease with df")
try:
    plot.loglog_fit([1, 2], [1, 2])
    check(False, "a fit on 2 points must be refused (no degrees of freedom for the interval)")
except ValueError:
    pass

# Figures from synthetic sweep output.
work = tempfile.mkdtemp(prefix="memcert_plot.")
fig2 = os.path.join(work, "fig2")
os.makedirs(fig2)
with open(os.path.join(fig2, "results.jsonl"), "w") as out:
    i = 0
    for H in (1, 2, 4):
        for n in (2, 4):
            for dh in (2, 4):
                T = H * (min(n, dh) - 1) + 1
                cert = T if (H, n, dh) != (4, 4, 2) else T - 1  # one cell certified below T*
                sat = [{"head": h + 1, "c": "0" if h == 0 else f"{h}/3", "c_minimal": None if h == 0 else "0"} for h in range(H)]
                out.write(json.dumps({"cell": i, "params": {"heads": H, "n": n, "d": 8, "dh": dh, "T": T}, "seed": 1,
                                      "verdict": "holds", "certified": {"T_certified": cert},
                                      "result": {"saturation": sat, "d_out": 1}}) + "\n")
                i += 1
p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "plot.py"), "figure2", fig2, "--out",
                    os.path.join(work, "f2")], capture_output=True, text=True)
check(p.returncode == 0, f"figure2 plot runs ({p.stderr})")
for ext in ("png", "svg", "json"):
    check(os.path.exists(os.path.join(work, "f2." + ext)), f"figure2 writes .{ext}")
with open(os.path.join(work, "f2.png"), "rb") as fh:
    check(fh.read(8) == b"\x89PNG\r\n\x1a\n", "a real PNG")
with open(os.path.join(work, "f2.json")) as fh:
    s = json.load(fh)
check(s["cells"] == 12 and s["certified_equals_T_star"] == 11 and len(s["certified_below_T_star"]) == 1,
      "figure2 summary counts cells matching H(min(n,d_h)-1)+1")
p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "plot.py"), "saturation", fig2, "--out",
                    os.path.join(work, "sat")], capture_output=True, text=True)
check(p.returncode == 0 and "c_weyl" in p.stdout, f"saturation plot runs and names what is absent ({p.stdout} {p.stderr})")
# ks-growth: the measured crossings are the first swept N whose count is below N, bracketed by the swept
# N before it; the non-zero count can cross while the total does not (computed here by hand).
ksd = os.path.join(work, "ks")
os.makedirs(ksd)
ks_N = [1000 * 4 ** k for k in range(6)]               # 1,000 .. 1,024,000
with open(os.path.join(ksd, "results.jsonl"), "w") as out:
    for i, N in enumerate(ks_N):
        total, nonzero = int(2000 * N ** 0.5), int(300 * N ** 0.5)
        out.write(json.dumps({"cell": i, "params": {"N": N, "n": 16, "d": 32}, "seed": 1, "verdict": "holds",
                              "certified": {"parameters": total, "nonzero_parameters": nonzero},
                              "result": {"C": 10, "bounds": {"log2_R": 20.0}}}) + "\n")
p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "plot.py"), "ks-growth", ksd, "--out",
                    os.path.join(work, "ksg")], capture_output=True, text=True)
check(p.returncode == 0, f"ks-growth plot runs ({p.stderr})")
with open(os.path.join(work, "ksg.json")) as fh:
    s = json.load(fh)
nz_first = next(N for N in ks_N if int(300 * N ** 0.5) < N)          # 300 sqrt(N) < N  <=>  N > 90,000
tot_first = next((N for N in ks_N if int(2000 * N ** 0.5) < N), None)  # N > 4,000,000: not swept
check(s["nonzero_below_N_measured"] == nz_first == 256000 and s["nonzero_below_N_bracket"] == [64000, 256000],
      f"non-zero crossing measured and bracketed ({s.get('nonzero_below_N_bracket')})")
check(tot_first is None and s["parameters_below_N_measured"] is None and s["parameters_below_N_bracket"] is None,
      "no total crossing claimed where none was swept")
check("non-zero parameters < N: measured at 256000" in p.stdout and "no swept N (up to 1024000)" in p.stdout,
      f"ks-growth says both ({p.stdout})")
# A sweep directory without results.jsonl (unfinished, or a resume re-running cells): one line, no plot.
unfinished = os.path.join(work, "unfinished")
os.makedirs(os.path.join(unfinished, "cells"))
p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "plot.py"), "figure4", unfinished, "--out",
                    os.path.join(work, "f4")], capture_output=True, text=True)
check(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and "results.jsonl: expected" in p.stderr
      and not os.path.exists(os.path.join(work, "f4.png")), f"no results.jsonl: one line, nothing plotted ({p.stderr!r})")
subprocess.run(["rm", "-rf", work])
print(f"{'FAILED' if FAILED else 'passed'}: {len(FAILED)} failure(s)")
sys.exit(1 if FAILED else 0)
