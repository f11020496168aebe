#!/usr/bin/env python3
"""Figures from `memcert sweep` output (DIR/results.jsonl), as PNG and SVG (matplotlib, Agg backend).

    python3 scripts/plot.py figure2 DIR --out PREFIX      certified capacity vs H, n, d_h against H(n-1)+1
    python3 scripts/plot.py figure4 DIR --out PREFIX      general position: certified T vs H(n-1)+1, H(d-1)+1, H d
    python3 scripts/plot.py saturation DIR --out PREFIX   the saturation scale per head (c_proof, c_weyl, ...)
    python3 scripts/plot.py ks-growth DIR --out PREFIX    ks25 parameters vs N, fitted exponent with its 95% CI
    python3 scripts/plot.py compare --theorem1 DIR --ks DIR [--dana24 DIR] --out PREFIX

Each command also prints the figures it plotted (and writes PREFIX.json with them), so a reader can check
a plot against the numbers. Only certified numbers are plotted: a theorem1 cell's capacity is the sweep's
certified size (the independent checker verified the certificate), never a float estimate.
"""
import argparse
import json
import math
import os
import sys

# Student t quantiles t_{0.975, df} for df = 1..30 (two-sided 95% intervals); beyond 30 the normal
# quantile plus the first-order correction 2.4/df is within 1e-3 of the exact value.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    """The 97.5% quantile of Student's t with df degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError("need at least 1 degree of freedom")
    return T975[df - 1] if df <= 30 else 1.960 + 2.4 / df


def loglog_fit(xs, ys):
    """Least squares of log(y) = log(a) + b log(x). Returns dict with a, b, the standard error of b and
    the 95% confidence interval of b (t distribution, n - 2 degrees of freedom)."""
    n = len(xs)
    if n < 3:
        raise ValueError("a fit with a confidence interval needs at least 3 points")
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / n, sum(ly) / n
    sxx = sum((u - mx) ** 2 for u in lx)
    b = sum((u - mx) * (v - my) for u, v in zip(lx, ly)) / sxx
    la = my - b * mx
    rss = sum((v - la - b * u) ** 2 for u, v in zip(lx, ly))
    se = math.sqrt(rss / (n - 2) / sxx)
    t = t975(n - 2)
    return {"a": math.exp(la), "b": b, "se_b": se, "ci95_b": [b - t * se, b + t * se], "points": n}


def load(d):
    """The rows of a finished sweep. `memcert sweep` writes results.jsonl only once every cell has run or
    been re-verified against its certificate in that run (docs/SWEEP.md, "Resume"); without it there is
    nothing certified to plot."""
    path = os.path.join(d, "results.jsonl")
    if not os.path.isfile(path):
        sys.exit(f"plot.py: {path}: expected the results of a finished sweep (run or resume `memcert sweep` until it exits 0)")
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "axes.grid": True, "grid.alpha": 0.3})
    return plt


def save(fig, prefix, summary):
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=130)
    fig.savefig(prefix + ".svg")
    with open(prefix + ".json", "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {prefix}.png, {prefix}.svg, {prefix}.json")


def certified_T(r):
    """A theorem1 row's certified number of memorized examples (capacity search result when present)."""
    if r.get("capacity"):
        return r["capacity"]["certified"]
    return r.get("certified", {}).get("T_certified", 0)


def theorem_T(p):
    """Theorem 1's T* = H(min(n, d_h) - 1) + 1 from the cell's parameters (recomputed, not read)."""
    return p["heads"] * (min(p["n"], p.get("dh", p["n"])) - 1) + 1


def theorem1_cells(rows):
    cells = []
    for r in rows:
        p = r["params"]
        cells.append({"H": p["heads"], "n": p["n"], "d": p["d"], "dh": p.get("dh", p["n"]), "seed": r["seed"],
                      "certified": certified_T(r), "T_star": theorem_T(p), "ceiling": p["heads"] * (p["n"] - 1) + 1,
                      "verdict": r["verdict"]})
    return cells


def best_over_seeds(cells, key):
    out = {}
    for c in cells:
        k = tuple(c[x] for x in key)
        out[k] = max(out.get(k, 0), c["certified"])
    return out


def cmd_figure2(a):
    cells = theorem1_cells(load(a.dir))
    plt = pyplot()
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.8))
    best = best_over_seeds(cells, ("H", "n", "dh"))
    Hs = sorted({c["H"] for c in cells})
    ns = sorted({c["n"] for c in cells})
    dhs = sorted({c["dh"] for c in cells})
    dmax = max(dhs)
    # (a) vs H at the largest d_h (d_h >= n: r = n), one line per n, with H(n-1)+1 dashed.
    for i, n in enumerate(ns):
        xs = [H for H in Hs if (H, n, dmax) in best]
        col = f"C{i}"
        ax[0].plot(xs, [H * (n - 1) + 1 for H in xs], "-", color=col, lw=7, alpha=0.2, label=f"H({n}-1)+1")
        ax[0].plot(xs, [best[(H, n, dmax)] for H in xs], "o-", color=col, ms=4, lw=1, label=f"n={n} certified")
    ax[0].set(xlabel="heads H", ylabel="examples memorized (certified)", title=f"(a) vs H, d_h={dmax}; wide: H(n-1)+1")
    # (b) vs n, one line per H.
    for i, H in enumerate(Hs):
        xs = [n for n in ns if (H, n, dmax) in best]
        col = f"C{i}"
        ax[1].plot(xs, [H * (n - 1) + 1 for n in xs], "-", color=col, lw=7, alpha=0.2)
        ax[1].plot(xs, [best[(H, n, dmax)] for n in xs], "o-", color=col, ms=4, lw=1, label=f"H={H} certified")
    ax[1].set(xlabel="context size n", title=f"(b) vs n, d_h={dmax}; wide: H(n-1)+1")
    # (c) vs d_h at the largest H, one line per n: the theorem gains nothing beyond d_h = n; below it,
    # generic weights (construct theorem1 --beyond generic) certify past T* up to the Prop. 2 ceiling.
    Hm = max(Hs)
    for i, n in enumerate(ns):
        xs = [dh for dh in dhs if (Hm, n, dh) in best]
        col = f"C{i}"
        ax[2].plot(xs, [Hm * (min(n, dh) - 1) + 1 for dh in xs], "-", color=col, lw=7, alpha=0.2)
        ax[2].plot(xs, [Hm * (n - 1) + 1 for dh in xs], ":", color=col, lw=1)
        ax[2].plot(xs, [best[(Hm, n, dh)] for dh in xs], "o-", color=col, ms=4, lw=1, label=f"n={n} certified (theorem/generic)")
    ax[2].set(xlabel="head dimension d_h",
              title=f"(c) vs d_h, H={Hm}; wide: theorem's T*,\ndotted: Prop. 2 ceiling H(n-1)+1", )
    for x in ax:
        x.legend(fontsize=7)
    d = sorted({c["d"] for c in cells})
    fig.suptitle(f"mahdavi24 Figure 2 with certificates (shared context, d={','.join(map(str, d))})", fontsize=10)
    match = sum(1 for c in cells if c["certified"] == c["T_star"])
    above = [c for c in cells if c["certified"] > c["T_star"]]
    below = [c for c in cells if c["certified"] < c["T_star"]]
    summary = {"cells": len(cells), "certified_equals_T_star": match, "certified_above_T_star": above,
               "certified_below_T_star": below, "table": cells}
    at_ceiling = sum(1 for c in cells if c["certified"] == c["ceiling"])
    summary["certified_equals_ceiling"] = at_ceiling
    print(f"figure2: {len(cells)} cells; certified == H(min(n,d_h)-1)+1 in {match}, above in {len(above)}, below in {len(below)}; "
          f"certified == Prop. 2 ceiling H(n-1)+1 in {at_ceiling}")
    save(fig, a.out, summary)


def cmd_figure4(a):
    cells = theorem1_cells(load(a.dir))
    plt = pyplot()
    ds = sorted({c["d"] for c in cells})
    fig, ax = plt.subplots(1, len(ds), figsize=(4 * len(ds), 3.8), squeeze=False)
    verdicts = []
    for k, d in enumerate(ds):
        x = ax[0][k]
        sub = [c for c in cells if c["d"] == d]
        Hs = sorted({c["H"] for c in sub})
        for i, n in enumerate(sorted({c["n"] for c in sub})):
            pts = sorted((c["H"], c["certified"]) for c in sub if c["n"] == n)
            x.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=f"C{i}", label=f"n={n} certified")
            x.plot(Hs, [H * (n - 1) + 1 for H in Hs], ":", color=f"C{i}", alpha=0.6)
        x.plot(Hs, [H * (d - 1) + 1 for H in Hs], "k--", label="H(d-1)+1 (conjecture)")
        x.plot(Hs, [H * d for H in Hs], "k:", lw=1, label="H d (rank(Z) <= H d for any weights)")
        x.set(xlabel="heads H", ylabel="examples memorized (certified)", title=f"d={d}; dotted: H(n-1)+1")
        x.legend(fontsize=7)
        for c in sorted(sub, key=lambda c: (c["H"], c["n"])):
            target = c["H"] * (d - 1) + 1
            verdicts.append({"H": c["H"], "d": d, "n": c["n"], "conjectured": target, "certified": c["certified"],
                             "theorem_T_star": c["T_star"], "rank_bound": c["H"] * d,
                             "status": "certified" if c["certified"] >= target else "not established",
                             "exceeds_conjecture": c["certified"] > target})
    fig.suptitle("mahdavi24 Figure 4 conjecture under general position: largest certified T per (H, d, n) "
                 "(theorem or generic weights)", fontsize=10)
    n_eq = [v for v in verdicts if v["n"] == v["d"]]
    n_lt = [v for v in verdicts if v["n"] < v["d"]]
    print(f"figure4: n = d: H(d-1)+1 certified in {sum(v['status'] == 'certified' for v in n_eq)} of {len(n_eq)} cells; "
          f"n < d: certified in {sum(v['status'] == 'certified' for v in n_lt)} of {len(n_lt)} cells, "
          f"largest certified = H(n-1)+1 in {sum(v['certified'] == v['theorem_T_star'] for v in n_lt)} of them")
    print(f"figure4: certified above H(d-1)+1 in {sum(v['exceeds_conjecture'] for v in verdicts)} of {len(verdicts)} cells, "
          f"certified = H d (the bound on rank(Z) for any weights) in {sum(v['certified'] == v['rank_bound'] for v in verdicts)}")
    for v in verdicts:
        print(f"  H={v['H']:3d} d={v['d']:3d} n={v['n']:3d}: H(d-1)+1 = {v['conjectured']:5d}, certified {v['certified']:5d}"
              f" (T* = {v['theorem_T_star']}): {v['status']}")
    save(fig, a.out, {"pairs": verdicts, "table": cells})


def cmd_saturation(a):
    rows = [r for r in load(a.dir) if r.get("result") and r["result"].get("saturation")]
    if not rows:
        sys.exit("saturation: no row with a \"saturation\" list")
    r = max(rows, key=lambda r: (len(r["result"]["saturation"]), certified_T(r)))
    sat = r["result"]["saturation"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    heads = [s["head"] for s in sat]
    series = {}
    for key, label in (("c_proof", "c (proof)"), ("c", "c (proof)"), ("c_weyl", "c_weyl"), ("c_minimal", "c_minimal")):
        vals = [s.get(key) for s in sat]
        if any(v is not None for v in vals) and label not in series:
            series[label] = [None if v is None else float(eval_exact(v)) for v in vals]
    for i, (label, vals) in enumerate(series.items()):
        pts = [(h, v) for h, v in zip(heads, vals) if v is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=f"C{i}", label=label)
    cn = r["result"].get("c_network")
    if cn is not None:
        ax.axhline(float(eval_exact(cn)), color="k", ls="--", label="c_network")
    ax.set_yscale("symlog", linthresh=1e-2)
    ax.set_ylim(bottom=0)  # scales are >= 0 (symlog only so that c = 0 can be drawn)
    p = r["params"]
    ax.set(xlabel="head", ylabel="saturation scale c", title=f"saturation scale per head (Theorem 1): H={p['heads']}, n={p['n']}, d={p['d']}, d_h={p.get('dh')}")
    ax.legend(fontsize=7)
    absent = [k for k in ("c_weyl", "c_network") if k not in json.dumps(r["result"])]
    if absent:
        print("saturation: not reported by this build (not plotted):", ", ".join(absent))
    save(fig, a.out, {"params": p, "series": series, "c_network": cn, "absent": absent})


def eval_exact(v):
    """An exact number as the CLI writes it ("p/q", decimal string, or JSON number) as a float for plotting."""
    if isinstance(v, (int, float)):
        return v
    if "/" in v:
        num, den = v.split("/")
        return int(num) / int(den)
    return float(v)


def paper_parameters(N, b):
    """ks25 Theorem B.1's parameter expression d + sqrt(N log N) + sqrt(N / log N) max(log R, log C), with
    log R = log R(N0) + 5 log(N / N0) from the row's reported bounds at N0 (the other terms of log R do
    not depend on N for this generator: same d, n, r, delta)."""
    N0, lr0, d = b["N"], b["log2_R"], b["d"]
    lg = max(1.0, math.log2(N))
    lr = lr0 + 5 * math.log2(N / N0)
    mx = max(lr, math.log2(max(2, b["C"])))
    return d + math.sqrt(N * lg) + math.sqrt(N / lg) * mx


def cmd_ks_growth(a):
    rows = [r for r in load(a.dir) if r["verdict"] == "holds" and r["certified"].get("parameters")]
    rows.sort(key=lambda r: r["params"]["N"])
    Ns = [r["params"]["N"] for r in rows]
    P = [r["certified"]["parameters"] for r in rows]
    NZ = [r["certified"]["nonzero_parameters"] for r in rows]
    fit_p, fit_nz = loglog_fit(Ns, P), loglog_fit(Ns, NZ)
    last = rows[-1]
    b = {"N": Ns[-1], "log2_R": last["result"]["bounds"]["log2_R"], "d": last["params"]["d"], "C": last["result"]["C"]}
    paper = [paper_parameters(N, b) for N in Ns]
    fit_paper = loglog_fit(Ns, paper)
    # Reference shapes over the same N: sqrt(N) has exponent 1/2; sqrt(N log N) has a larger local exponent
    # (1/2 + 1/(2 ln N)), which is what a confidence interval must exclude to tell the two apart.
    ref_sqrt_nlogn = loglog_fit(Ns, [math.sqrt(N * math.log(N)) for N in Ns])["b"]
    scale = math.exp(sum(math.log(p / q) for p, q in zip(P, paper)) / len(P))  # the constant the paper's <~ hides
    measured_below = next((N for N, p in zip(Ns, P) if p < N), None)
    nonzero_below = next((N for N, q in zip(Ns, NZ) if q < N), None)

    def bracket(counts):  # the swept N on either side of the first measured crossing (count < N)
        for i, (N, c) in enumerate(zip(Ns, counts)):
            if c < N:
                return [Ns[i - 1] if i else None, N]
        return None

    def cross(f):  # a N^b = N  =>  N = a^(1/(1-b)) (only when b < 1)
        return f["a"] ** (1 / (1 - f["b"])) if f["b"] < 1 else None

    # The paper's formula (scaled to the measured points): the first N with scale*expr(N) < N.
    N, paper_cross = float(Ns[0]), None  # from the first swept N: the crossing may lie inside the sweep
    while N < 1e15:
        if scale * paper_parameters(N, b) < N:
            paper_cross = N
            break
        N *= 1.01
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.loglog(Ns, P, "o", color="C0", label=f"parameters (certified): exponent {fit_p['b']:.3f} "
                                              f"[{fit_p['ci95_b'][0]:.3f}, {fit_p['ci95_b'][1]:.3f}]")
    ax.loglog(Ns, NZ, "s", color="C1", label=f"non-zero parameters: exponent {fit_nz['b']:.3f} "
                                               f"[{fit_nz['ci95_b'][0]:.3f}, {fit_nz['ci95_b'][1]:.3f}]")
    xs = [Ns[0] * (Ns[-1] / Ns[0]) ** (i / 50) for i in range(51)]
    ax.loglog(xs, [fit_p["a"] * x ** fit_p["b"] for x in xs], "-", color="C0", alpha=0.5)
    ax.loglog(xs, [fit_nz["a"] * x ** fit_nz["b"] for x in xs], "-", color="C1", alpha=0.5)
    ax.loglog(xs, [scale * paper_parameters(x, b) for x in xs], "k--",
              label=f"paper's formula x {scale:.3g} (local exponent {fit_paper['b']:.3f})")
    ax.loglog(xs, xs, ":", color="gray", label="parameters = N")
    # The measured crossings: the first swept N whose certified construction has fewer (non-zero)
    # parameters than N; a figure without one says so in its title.
    for N_cross, color, what in ((measured_below, "C0", "parameters"), (nonzero_below, "C1", "non-zero")):
        if N_cross is not None:
            ax.axvline(N_cross, color=color, alpha=0.35, lw=1)
            ax.annotate(f"{what} < N\nmeasured at N = {N_cross:,}", (N_cross, N_cross), fontsize=7, color=color,
                        xytext=(4, -22), textcoords="offset points")
    ax.set(xlabel="N (sequences memorized)", ylabel="parameters",
           title="ks25 Theorem 4.1 construction: parameters vs N (95% CI of the exponent)")
    ax.legend(fontsize=7)
    summary = {"N": Ns, "parameters": P, "nonzero_parameters": NZ, "fit_parameters": fit_p, "fit_nonzero": fit_nz,
               "paper_formula": paper, "paper_formula_exponent": fit_paper["b"], "paper_scale": scale,
               "sqrt_N_log_N_exponent": ref_sqrt_nlogn,
               "parameters_below_N_measured": measured_below,
               "nonzero_below_N_measured": nonzero_below,
               "parameters_below_N_bracket": bracket(P), "nonzero_below_N_bracket": bracket(NZ),
               "parameters_below_N_extrapolated_fit": cross(fit_p),
               "nonzero_below_N_extrapolated_fit": cross(fit_nz),
               "parameters_below_N_extrapolated_paper_formula": paper_cross}
    print(f"ks-growth: {len(Ns)} N from {Ns[0]} to {Ns[-1]}; parameters ~ {fit_p['a']:.4g} N^{fit_p['b']:.3f}, "
          f"95% CI [{fit_p['ci95_b'][0]:.3f}, {fit_p['ci95_b'][1]:.3f}]; non-zero ~ N^{fit_nz['b']:.3f} "
          f"[{fit_nz['ci95_b'][0]:.3f}, {fit_nz['ci95_b'][1]:.3f}]; paper's formula has local exponent {fit_paper['b']:.3f}; "
          f"sqrt(N log N) has {ref_sqrt_nlogn:.3f} over these N")
    print(f"  non-zero parameters < N: measured at {nonzero_below if nonzero_below else f'no swept N (up to {Ns[-1]})'}")
    print(f"  parameters < N: measured at {measured_below if measured_below else f'no swept N (up to {Ns[-1]})'}; "
          f"extrapolated by the fit at N ~ {cross(fit_p):.3g}, by the paper's formula (scaled) at N ~ "
          f"{paper_cross if paper_cross is None else format(paper_cross, '.3g')}")
    if not measured_below:
        fig.suptitle(f"total parameters not below N at any swept N (up to {Ns[-1]:,})", fontsize=7, y=0.02)
    save(fig, a.out, summary)


def cmd_compare(a):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    summary = {}
    if a.theorem1:
        pts = []
        for r in load(a.theorem1):
            p, T = r["params"], certified_T(r)
            if T <= 0:
                continue
            dv = r["result"].get("d_out", 1)
            # Theorem 1's layer: per head W_Q, W_K (d x d_h), W_V (d x d_v); W_O (H d_v x d); read-out W_D (d x d_out).
            params = p["heads"] * (2 * p["d"] * p["dh"] + p["d"] * dv) + p["heads"] * dv * p["d"] + p["d"] * r["result"].get("d_out", 1)
            pts.append((T, params))
        pts.sort()
        ax.loglog([q[0] for q in pts], [q[1] for q in pts], "o", label="mahdavi24 Theorem 1 (one MHA layer)")
        summary["theorem1"] = pts
    if a.ks:
        pts = sorted((r["params"]["N"], r["certified"]["parameters"]) for r in load(a.ks) if r["certified"].get("parameters"))
        ax.loglog([q[0] for q in pts], [q[1] for q in pts], "s-", label="ks25 Theorem 4.1 (width 14, deep)")
        summary["ks25"] = pts
    if a.dana24:
        pts = sorted((r["certified"].get("memorized_count") or 0, r["certified"].get("parameters") or 0)
                     for r in load(a.dana24) if r["certified"].get("parameters"))
        pts = [q for q in pts if q[0] > 0]
        ax.loglog([q[0] for q in pts], [q[1] for q in pts], "^", label="dana24 (attention-only)")
        summary["dana24"] = pts
    else:
        summary["dana24"] = "not plotted: no dana24 sweep given"
    lo = min(q[0] for v in summary.values() if isinstance(v, list) for q in v)
    hi = max(q[0] for v in summary.values() if isinstance(v, list) for q in v)
    ax.loglog([lo, hi], [lo, hi], ":", color="gray", label="parameters = examples")
    ax.set(xlabel="examples memorized (certified)", ylabel="parameters of the construction",
           title="The constructions side by side")
    ax.legend(fontsize=7)
    print("compare:", {k: (len(v) if isinstance(v, list) else v) for k, v in summary.items()})
    save(fig, a.out, summary)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, fn in (("figure2", cmd_figure2), ("figure4", cmd_figure4), ("saturation", cmd_saturation),
                     ("ks-growth", cmd_ks_growth)):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("--out", required=True, help="output prefix (writes PREFIX.png, PREFIX.svg, PREFIX.json)")
        p.set_defaults(fn=fn)
    p = sub.add_parser("compare")
    p.add_argument("--theorem1")
    p.add_argument("--ks")
    p.add_argument("--dana24")
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_compare)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
