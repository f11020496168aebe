#!/usr/bin/env python3
"""Runs `memcert compare` (mahdavi24, ks25, dana24 on one token association set) on a few generated
shapes and plots what each construction memorized AND the independent checker re-verified, with its
parameter count. Writes docs/img/compare.png (or --out) and prints the markdown table of docs/papers/README.md.

Usage: python3 scripts/plot_compare.py [--memcert build/memcert] [--out docs/img/compare.png]
Needs python3-matplotlib (Debian). Every figure comes from `memcert compare --json`; nothing is typed in.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# (N, S, T, d, H, d_h): generated association sets (seeded) and the shape all three constructions get.
SHAPES = [
    (6, 3, 21, 8, 4, 4),
    (10, 2, 40, 8, 8, 4),
    (8, 4, 60, 12, 8, 6),
    (20, 3, 80, 16, 16, 4),
    (32, 2, 120, 24, 24, 4),
]


def run(cmd):
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if out.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memcert", default="build/memcert")
    ap.add_argument("--out", default="docs/img/compare.png")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for (N, S, T, d, H, dh) in SHAPES:
            data = os.path.join(tmp, f"assoc_{N}_{S}_{T}.json")
            run([args.memcert, "generate", "dana24", "--N", str(N), "--S", str(S), "--T", str(T),
                 "--seed", str(args.seed), "--out", data])
            j = json.loads(run([args.memcert, "compare", data, "--heads", str(H), "--dh", str(dh), "--d", str(d),
                                "--seed", str(args.seed), "--json"]))
            results.append(j)
            print(f"compare N={N} S={S} T={T} d={d} H={H} dh={dh}: done in {j['seconds']:.1f} s", file=sys.stderr)

    names = [r["construction"] for r in results[0]["rows"]]
    short = [n.split(" ")[0] for n in names]
    labels = [f"N={r['N']} S={r['S']}\nT={r['T']} d={r['d']}\nH={r['H']} d_h={r['dh']}" for r in results]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / len(names)
    for k, name in enumerate(short):
        xs = [i + (k - (len(names) - 1) / 2) * width for i in range(len(results))]
        frac = [] ; params = []
        for r in results:
            row = r["rows"][k]
            ok = row["verified"]
            frac.append(row["memorized"] / r["T"] if ok else 0.0)
            params.append(row["parameters"] if ok and row["memorized"] > 0 else float("nan"))
        ax1.bar(xs, frac, width, label=name)
        ax2.bar(xs, params, width, label=name)
    ax1.set_ylabel("fraction memorized (checker-verified)")
    ax1.set_ylim(0, 1.05)
    ax2.set_ylabel("parameters (when memorized)")
    ax2.set_yscale("log")
    for ax in (ax1, ax2):
        ax.set_xticks(range(len(results)))
        ax.set_xticklabels(labels, fontsize=7)
    ax1.legend(fontsize=8)
    fig.suptitle("memcert compare: three constructions on the same token association sets")
    fig.tight_layout()
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}", file=sys.stderr)

    # The markdown table (docs/papers/README.md, "Three constructions on one association task").
    print("| data (N, S, T) | shape | " + " | ".join(short) + " |")
    print("|---|---|" + "---|" * len(short))
    for r in results:
        cells = []
        for row in r["rows"]:
            if row["verified"] and row["memorized"] > 0:
                cells.append(f"{row['memorized']}/{r['T']}, {row['parameters']:,} parameters "
                             f"({row['nonzero_parameters']:,} non-zero), {row['max_bits']} bits")
            else:
                cells.append(f"{row['memorized']}/{r['T']}: {row['note']}")
        print(f"| ({r['N']}, {r['S']}, {r['T']}) | d = {r['d']}, H = {r['H']}, d_h = {r['dh']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
