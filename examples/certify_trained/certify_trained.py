#!/usr/bin/env python3
"""Train mahdavi24's BaselineAttention for about a minute on CPU, then decide in exact arithmetic which
training examples it has memorized, and set that beside what PyTorch's float32 says.

    python3 examples/certify_trained/certify_trained.py [--out DIR] [--memcert PATH] [--tiny] [--check]

1. Data: the authors' RandomDataset (mahdavi24.py): T examples, each a query token and n context tokens of
   dimension d drawn uniformly from [0, 1), with a uniformly random class out of C.
2. Model: the authors' BaselineAttention (d_model = d_in = d, H heads), trained with Adam on the query
   token's cross-entropy, as their Trainer does (full batch here, a fixed number of steps).
3. Files: model.pt saved as the authors' Trainer saves a checkpoint (torch.save({'state_dict': ...})),
   data.npz with X (T, n+1, d) float32 and y (T,) int64.
4. Command line: memcert certify model.pt data.npz --arch mahdavi24-baseline --json --margins-out
   margins.npz --out cert.json, then memcert verify cert.json (the independent checker).
5. Python: memcert.certify(model, X, y, arch="mahdavi24-baseline") on the module and tensors in memory,
   which must say the same (skipped when the memcert module is not importable).
6. Plot (margins.png): each example's certified margin against PyTorch's float32 margin, and how far
   float32 is from exact next to the bound memcert proves on that distance.

--tiny: a small shape trained for a few seconds (the test suite's run). --check: exit 1 unless PyTorch's
float32 margins lie within memcert's float32 error bound of the certified enclosures and the CLI, the
checker and the Python function agree. Exit 77 (skipped) without torch or matplotlib, or when this
memcert has no `certify` command. Options: --T --heads --classes --context --dim --steps --seed.
docs/MODELS.md explains the output."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77


def find_memcert(given):
    for cand in (given, os.environ.get("MEMCERT_EXE"), shutil.which("memcert")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    try:
        import memcert
        return memcert.executable() or None
    except ImportError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="certify_trained_out", help="directory for the files and the plot")
    ap.add_argument("--memcert", help="the memcert executable (default: $MEMCERT_EXE, then PATH)")
    ap.add_argument("--tiny", action="store_true", help="a small shape trained for a few seconds")
    ap.add_argument("--check", action="store_true", help="exit 1 when a cross-check fails")
    ap.add_argument("--T", type=int, help="examples (default 512; --tiny 48)")
    ap.add_argument("--heads", type=int, help="H (default 4; --tiny 2)")
    ap.add_argument("--classes", type=int, help="C (default 10; --tiny 4)")
    ap.add_argument("--context", type=int, help="n context tokens (default 8; --tiny 4)")
    ap.add_argument("--dim", type=int, help="d_in = d_model (default 16; --tiny 8)")
    ap.add_argument("--steps", type=int, help="Adam steps (default 300, about a minute; --tiny 40)")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    shape = dict(T=48, heads=2, classes=4, context=4, dim=8, steps=40) if a.tiny else \
        dict(T=512, heads=4, classes=10, context=8, dim=16, steps=300)
    for k, v in shape.items():
        if getattr(a, k) is None:
            setattr(a, k, v)

    try:
        import numpy as np
        import torch
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print("skipped: this example needs numpy, torch and matplotlib (%s)" % e)
        return SKIP
    exe = find_memcert(a.memcert)
    if not exe:
        print("skipped: no memcert executable (--memcert PATH, $MEMCERT_EXE or PATH)")
        return SKIP
    probe = subprocess.run([exe, "certify", "--help"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("skipped: this memcert has no `certify` command (%s)" % (probe.stderr.strip().splitlines() or [""])[-1])
        return SKIP
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mahdavi24 import BaselineAttention, RandomDataset, float32_margins

    os.makedirs(a.out, exist_ok=True)
    failures = []

    # 1-2. The authors' data and model, trained.
    torch.manual_seed(a.seed)
    ds = RandomDataset(a.dim, a.seed, a.classes, a.context, a.T)
    model = BaselineAttention(input_dim=a.dim, n_classes=a.classes, d_model=a.dim, num_heads=a.heads, dh=None)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    t0 = time.time()
    for step in range(a.steps):
        logits = model(ds.X, None)[0][:, 0, :]
        loss = torch.nn.functional.cross_entropy(logits, ds.y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    f32 = float32_margins(model, ds.X, ds.y).double().numpy()
    print("trained %d steps in %.1f s: loss %.4f, PyTorch float32 accuracy %d/%d"
          % (a.steps, time.time() - t0, float(loss), int((f32 > 0).sum()), a.T))

    # 3. The files.
    model_path, data_path = os.path.join(a.out, "model.pt"), os.path.join(a.out, "data.npz")
    torch.save({"state_dict": model.state_dict()}, model_path)
    np.savez(data_path, X=ds.X.numpy(), y=ds.y.numpy())

    # 4. The command line, and the independent checker on its certificate.
    cert_path, margins_path = os.path.join(a.out, "cert.json"), os.path.join(a.out, "margins.npz")
    p = subprocess.run([exe, "certify", model_path, data_path, "--arch", "mahdavi24-baseline", "--json",
                        "--margins-out", margins_path, "--out", cert_path], capture_output=True, text=True)
    if p.returncode not in (0, 1, 3):
        print("memcert certify: exit %d: %s" % (p.returncode, p.stderr.strip()))
        return 1
    cli = json.loads(p.stdout.strip().splitlines()[-1])
    print("memcert certify (exit %d, %.2f s): %d certified correct, %d certified wrong, %d undecided; "
          "min margin %s; float32 disagreements %s"
          % (p.returncode, cli["seconds"], cli["certified_correct"], cli["certified_wrong"], cli["undecided"],
             cli.get("min_margin"), cli["float32_disagreements"]))
    v = subprocess.run([exe, "verify", cert_path, "--json"], capture_output=True, text=True)
    print("memcert verify cert.json: exit %d, %s" % (v.returncode, "VALID" if v.returncode == 0 else v.stdout.strip()))
    if v.returncode != 0:
        failures.append("the independent checker did not accept the certificate")
    with np.load(margins_path) as z:
        m = {k: z[k] for k in z.files}

    # PyTorch's float32 margins against the exact ones: within memcert's bound, and PyTorch's verdict
    # differs from the exact one only on the examples listed as float32 disagreements.
    decided = m["verdict"] != 0
    lo, hi, bound = m["margin_lo"], m["margin_hi"], m["float32_error_bound"]
    outside = np.flatnonzero(decided & ((f32 < lo - bound) | (f32 > hi + bound)))
    flipped = np.flatnonzero(decided & ((f32 > 0) != (m["verdict"] > 0)))
    listed = set(cli["float32_disagreements"])
    print("PyTorch float32 vs exact: %d of %d examples get another verdict in float32 (%s); max |float32 - "
          "exact| %.3g, max bound %.3g" % (len(flipped), a.T, flipped.tolist()[:10],
                                            float(np.max(np.abs(f32 - (lo + hi) / 2)[decided], initial=0)),
                                            float(np.max(bound, initial=0))))
    if len(outside):
        failures.append("PyTorch's float32 margin lies outside the proved bound on examples %s" % outside[:10])
    if not set(flipped.tolist()) <= listed:
        failures.append("float32 verdicts differ on %s, not all listed as float32 disagreements"
                        % sorted(set(flipped.tolist()) - listed)[:10])

    # 5. The same from Python, on the objects in memory.
    try:
        import memcert
    except ImportError:
        memcert = None
        print("memcert Python module not importable: step 5 skipped (PYTHONPATH=BUILD/python)")
    if memcert is not None and not memcert.has_command("certify"):
        memcert = None
        print("this memcert Python module has no certify: step 5 skipped")
    if memcert is not None:
        try:
            r = memcert.certify(model, ds.X, ds.y, arch="mahdavi24-baseline")
        except memcert.Undecided as e:  # some example undecided: the result rides on the exception
            r = e.result
        print(repr(r))
        same = {k: r[k] for k in ("T", "certified_correct", "certified_wrong", "undecided", "wrong",
                                  "undecided_examples", "float32_disagreements", "min_margin") if k in r}
        want = {k: cli[k] for k in same if k in cli}
        if same != want or not np.array_equal(r.margins.verdict, m["verdict"]):
            failures.append("memcert.certify and the command line disagree: %s vs %s" % (same, want))

    # 6. The plot.
    color = np.where(m["verdict"] > 0, "tab:green", np.where(m["verdict"] < 0, "tab:red", "tab:gray"))
    mid = np.where(decided, (lo + hi) / 2, np.nan)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    # An undecided example's enclosure straddles 0: drawn at its midpoint (or at 0 when unbounded).
    shown = np.where(decided, mid, np.where(np.isfinite(lo + hi), (lo + hi) / 2, 0.0))
    ax1.scatter(f32, shown, c=list(color), s=12)
    ax1.errorbar(f32[decided], mid[decided], yerr=[(mid - lo)[decided], (hi - mid)[decided]], fmt="none",
                 ecolor="k", lw=0.6)
    dis = np.array(sorted(listed), dtype=int)
    if len(dis):
        ax1.scatter(f32[dis], shown[dis], marker="o", s=80, facecolors="none",
                    edgecolors="k", label="float32 disagreement")
    ax1.axhline(0, color="k", lw=0.5)
    ax1.axvline(0, color="k", lw=0.5)
    ax1.set_xlabel("PyTorch float32 margin")
    ax1.set_ylabel("certified margin (enclosure)")
    ax1.set_title("%d correct (green), %d wrong (red), %d undecided (grey)"
                  % (cli["certified_correct"], cli["certified_wrong"], cli["undecided"]), fontsize=10)
    if len(dis):
        ax1.legend(loc="upper left", fontsize=8)
    order = np.argsort(np.abs(np.where(decided, mid, 0)))
    ax2.semilogy(np.abs(mid[order]), ".", ms=3, label="|certified margin|")
    ax2.semilogy(np.maximum(np.abs(f32 - mid)[order], 1e-300), ".", ms=3,
                 label="|float32 margin - exact margin|")
    ax2.semilogy(bound[order], "-", lw=1, label="memcert's bound on that distance")
    ax2.set_xlabel("examples, by |certified margin|")
    ax2.set_title("float32 can be wrong about the verdict only where |margin| < bound", fontsize=10)
    ax2.legend(fontsize=8)
    fig.suptitle("mahdavi24 BaselineAttention, T=%d, H=%d, d=%d, C=%d, n=%d, %d Adam steps"
                 % (a.T, a.heads, a.dim, a.classes, a.context, a.steps), fontsize=11)
    fig.tight_layout()
    png = os.path.join(a.out, "margins.png")
    fig.savefig(png, dpi=110)
    print("plot: %s" % png)

    for f in failures:
        print("CHECK FAILED: " + f)
    return 1 if (a.check and failures) else 0


if __name__ == "__main__":
    sys.exit(main())
