#!/usr/bin/env python3
"""Every .npy dtype memcert reads, written by numpy itself, read back with exact dyadic semantics.

    python3 tests/cli/npy_dtypes.py <memcert-binary>

For each dtype (float16/32/64, int8/16/32/64, uint8/16, bool) a matrix of known exact rank is written
with numpy.save and `memcert rank --json` must report that rank and the storage it was read into; the
reference rank is Gauss-Jordan over fractions.Fraction of the exact values (Fraction(float) is exact),
an independent second method. .npz archives: `--key NAME` picks a member, a missing member or several
members without --key are bad input (exit 2, one line on stderr). Exits 1 on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np

BIN = sys.argv[1]
failures = []


def exact_rank(rows):
    a = [[Fraction(x) for x in r] for r in rows]
    rank, cols = 0, len(a[0]) if a else 0
    for c in range(cols):
        piv = next((i for i in range(rank, len(a)) if a[i][c] != 0), None)
        if piv is None:
            continue
        a[rank], a[piv] = a[piv], a[rank]
        for i in range(len(a)):
            if i != rank and a[i][c] != 0:
                f = a[i][c] / a[rank][c]
                a[i] = [x - f * y for x, y in zip(a[i], a[rank])]
        rank += 1
    return rank


def run(*args):
    p = subprocess.run([BIN, "--quiet", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def check(desc, ok, detail=""):
    if not ok:
        failures.append(f"{desc}: {detail}")


rng = np.random.default_rng(20261123)
with tempfile.TemporaryDirectory() as work:
    cases = {
        "float16": ("float64", lambda: rng.standard_normal((6, 5)).astype(np.float16)),
        "float32": ("float64", lambda: rng.standard_normal((6, 5)).astype(np.float32)),
        "float64": ("float64", lambda: rng.standard_normal((6, 5))),
        "int8": ("int64", lambda: rng.integers(-128, 128, (6, 5)).astype(np.int8)),
        "int16": ("int64", lambda: rng.integers(-2**15, 2**15, (6, 5)).astype(np.int16)),
        "int32": ("int64", lambda: rng.integers(-2**31, 2**31, (6, 5)).astype(np.int32)),
        "int64": ("int64", lambda: rng.integers(-2**62, 2**62, (6, 5)).astype(np.int64)),
        "uint8": ("int64", lambda: rng.integers(0, 256, (6, 5)).astype(np.uint8)),
        "uint16": ("int64", lambda: rng.integers(0, 2**16, (6, 5)).astype(np.uint16)),
        "bool": ("int64", lambda: rng.integers(0, 2, (6, 5)).astype(np.bool_)),
    }
    for dtype, (storage, make) in cases.items():
        for variant in ("random", "deficient", "fortran", "big-endian"):
            a = make()
            if variant == "deficient":  # row 2 = row 0 (exact in every dtype), last column zero
                a[2] = a[0]
                a[:, -1] = 0
            if variant == "fortran":
                a = np.asfortranarray(a)
            if variant == "big-endian" and a.dtype.itemsize > 1:
                a = a.astype(a.dtype.newbyteorder(">"))
            path = os.path.join(work, f"{dtype}-{variant}.npy")
            np.save(path, a)
            want = exact_rank(a.tolist())
            rc, out, err = run("rank", path, "--json")
            desc = f"rank of {dtype} ({variant})"
            if rc != 0:
                check(desc, False, f"exit {rc}: {err.strip()}")
                continue
            j = json.loads(out)
            check(desc, j["rank"] == want, f"memcert {j['rank']}, exact {want}")
            check(desc + " storage", j["storage"] == storage, j["storage"])

    # float16 subnormals and extremes are dyadic too: exact rank of [[tiny, 1], [2 tiny, 2]] is 1.
    tiny = np.float16(2.0**-24)
    a = np.array([[tiny, 1], [2 * tiny, 2], [65504, 0.5]], dtype=np.float16)
    path = os.path.join(work, "half-extremes.npy")
    np.save(path, a)
    rc, out, err = run("rank", path, "--json")
    check("float16 subnormal rank", rc == 0 and json.loads(out)["rank"] == exact_rank(a.tolist()), out + err)

    # Non-finite float16 is bad input.
    np.save(os.path.join(work, "half-inf.npy"), np.array([[1, np.inf]], dtype=np.float16))
    rc, out, err = run("rank", os.path.join(work, "half-inf.npy"))
    check("float16 inf is bad input", rc == 2 and err.count("\n") == 1 and "expected a finite number" in err, err)

    # .npz with several members: --key picks one, kruskal too.
    m1 = np.array([[1, 2], [2, 4]], dtype=np.int64)
    m2 = np.eye(3, dtype=np.float32)
    npz = os.path.join(work, "two.npz")
    np.savez(npz, deficient=m1, identity=m2)
    rc, out, err = run("rank", npz, "--key", "deficient", "--json")
    check("--key deficient", rc == 0 and json.loads(out)["rank"] == 1, out + err)
    rc, out, err = run("rank", npz, "--key", "identity", "--json")
    check("--key identity", rc == 0 and json.loads(out)["rank"] == 3, out + err)
    rc, out, err = run("kruskal", npz, "--key", "identity", "--json")
    check("kruskal --key", rc == 0 and json.loads(out)["kruskal_rank"] == 3, out + err)
    rc, out, err = run("rank", npz, "--key", "nope")
    check("missing --key member", rc == 2 and err.count("\n") == 1 and "'deficient', 'identity'" in err, err)
    rc, out, err = run("rank", npz)
    check("several members without --key", rc == 2 and err.count("\n") == 1 and "--key" in err, err)
    rc, out, err = run("rank", os.path.join(work, "int8-random.npy"), "--key", "x")
    check("--key on a .npy", rc == 2 and err.count("\n") == 1, err)
    # Compressed archives too.
    npzc = os.path.join(work, "compressed.npz")
    np.savez_compressed(npzc, a=np.array([[1, 0], [0, 0]], dtype=np.uint8), b=m2)
    rc, out, err = run("rank", npzc, "--key", "a", "--json")
    check("compressed --key", rc == 0 and json.loads(out)["rank"] == 1, out + err)

    # The numerical rank next to the exact one is numpy.linalg.matrix_rank's, whose eps is the STORED
    # dtype's: the same values saved as float64 and as float32 (all of them float32 values) get
    # different answers, as numpy gives them; and so through rank, kruskal and assumptions.
    vals = [
        [[1, 0], [0, 2.0**-30]],  # sigma 2^-30: above float64's tol 4.4e-16, below float32's 2.4e-07
        [[1, 0, 0], [0, 2.0**-20, 0], [0, 0, 0.5]],
        [[3, 1, 0.25], [6, 2, 0.5 + 2.0**-24]],
    ]
    for k, v in enumerate(vals):
        for dt in (np.float64, np.float32):
            a = np.array(v, dtype=dt)
            want = int(np.linalg.matrix_rank(a))
            want_tol = float(np.linalg.svd(a, compute_uv=False).max() * max(a.shape) * np.finfo(dt).eps)
            for fmt in ("npy", "npz", "npzc"):
                path = os.path.join(work, f"numrank{k}-{np.dtype(dt).name}.{fmt[:3]}")
                if fmt == "npy":
                    np.save(path, a)
                elif fmt == "npz":
                    np.savez(path, m=a)
                else:
                    path = path.replace(".npz", "c.npz")
                    np.savez_compressed(path, m=a)
                desc = f"numerical rank of case {k} as {np.dtype(dt).name} ({fmt})"
                rc, out, err = run("rank", path, "--json")
                if rc != 0:
                    check(desc, False, f"exit {rc}: {err.strip()}")
                    continue
                j = json.loads(out)
                check(desc, j["numerical_rank"] == want, f"memcert {j['numerical_rank']}, numpy {want}")
                check(desc + " tol", abs(j["numerical_tol"] - want_tol) <= 1e-6 * want_tol,
                      f"memcert {j['numerical_tol']}, numpy {want_tol}")
                rc, out, err = run("kruskal", path, "--json")
                check(desc + " (kruskal)", rc == 0 and json.loads(out)["numerical_rank"] == want, out + err)
    # assumptions: contexts stored as float64 vs float32, each context [[1, 0], [0, 2^-30]] (numpy: 2 as
    # float64, 1 as float32, so below n = 2 only for float32), queries the identity.
    for dt, below in ((np.float64, []), (np.float32, [0, 1])):
        ctx = np.array([[[1, 0], [0, 2.0**-30]], [[2, 0], [0, 2.0**-29]]], dtype=dt)
        assert [int(np.linalg.matrix_rank(c)) < 2 for c in ctx] == [dt == np.float32] * 2
        path = os.path.join(work, f"assume-{np.dtype(dt).name}.npz")
        np.savez(path, contexts=ctx, queries=np.eye(2, dtype=dt), labels=np.array([0.0, 1.0]))
        rc, out, err = run("assumptions", path, "--json")
        desc = f"assumptions numerical ranks ({np.dtype(dt).name} contexts)"
        if rc != 0:
            check(desc, False, f"exit {rc}: {err.strip()}")
            continue
        j = json.loads(out)
        check(desc, j["numerical"]["contexts_rank_below_n"] == below, json.dumps(j["numerical"]))
        check(desc + " queries", j["numerical"]["queries_rank"] == int(np.linalg.matrix_rank(np.eye(2, dtype=dt))),
              json.dumps(j["numerical"]))

for f in failures:
    print("FAIL:", f, file=sys.stderr)
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
