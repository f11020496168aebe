#!/usr/bin/env python3
"""`memcert export coq` end to end, judged by Coq's kernel (docs/COQ.md).

usage: export_coq.py MEMCERT WORKDIR

1. Integer matrices (17 x 16 of rank 16, 12 x 10 of rank 6, 16 x 14 of rank 9, 64 x 64 of rank 64, and
   24 x 20 of rank 11, and 10 x 8 with two equal rows and two equal columns) go through `memcert rank
   --cert`, then `memcert export coq`; each directory's
   check.sh must exit 0, and Coq's `Print Assumptions` on the theorem must answer "Closed under the global
   context" (no axiom). The coqc times are printed (the 64 x 64 must take under 60 s of CPU).
2. Mutants (>= 100), each checked by Coq: one matrix entry changed so that the rank changes (the true rank
   recomputed here with exact fractions), one index of the minor replaced, one entry of a kernel vector
   or of an inverse witness changed. For every one, Coq's checkers evaluate to false (so check.sh, which
   needs them true, rejects; three mutated directories are run through check.sh itself to show it): all
   mutants in one file, loading the library once, each an `Eval vm_compute` of its checkers whose answer
   is read back and compared one by one (the honest data, evaluating to true, in the same file).
   Agreement with memcert's own checker: a matrix-entry mutant's certificate is rejected by `memcert
   verify` (exit 1) and refused by `memcert export coq` (exit 1, nothing written); a minor-index mutant
   that memcert rejects is rejected by Coq too.
3. Exits 77 (ctest: skipped) with one line when coqc or mathcomp is absent.
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from fractions import Fraction

import coqlib

MEMCERT, WORK = sys.argv[1], sys.argv[2]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def have_coq():
    if shutil.which("coqc") is None:
        return "coqc not found"
    probe = os.path.join(WORK, "probe.v")
    with open(probe, "w") as f:
        f.write("From mathcomp Require Import ssreflect seq ssralg ssrint rat zmodp matrix mxalgebra ssrZ.\n")
    r = run(["coqc", "-q", probe], cwd=WORK)
    if r.returncode != 0:
        return "mathcomp (ssreflect, algebra, zify) not found by coqc"
    return None


def exact_rank(a):
    m = [[Fraction(x) for x in row] for row in a]
    rank, rows, cols = 0, len(m), len(m[0]) if m else 0
    for c in range(cols):
        piv = next((i for i in range(rank, rows) if m[i][c] != 0), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        for i in range(rank + 1, rows):
            f = m[i][c] / m[rank][c]
            if f:
                for j in range(c, cols):
                    m[i][j] -= f * m[rank][j]
        rank += 1
    return rank


def low_rank(rng, m, n, r, lo=-4, hi=4):
    b = [[rng.randint(lo, hi) for _ in range(r)] for _ in range(m)]
    c = [[rng.randint(lo, hi) for _ in range(n)] for _ in range(r)]
    return [[sum(b[i][t] * c[t][j] for t in range(r)) for j in range(n)] for i in range(m)]


def coq_list(v):
    if isinstance(v, list):
        return "[::]" if not v else "[:: " + "; ".join(coq_list(x) for x in v) + "]"
    return str(v)


def parse_coq_list(text):
    t = text.replace("%N", "").replace("[::]", "[]").replace("[::", "[").replace(";", ",")
    return json.loads(t)


def witness(path):
    src = open(path).read()
    out = {}
    for name, body in re.findall(r"Definition (\w+) : [^:=]+:=\s*(.*?)\.\n", src, re.S):
        out[name] = parse_coq_list(body) if body.lstrip().startswith("[") else int(body)
    return out


def coq_seconds(d):
    """check.sh's result and the CPU seconds of its coqc runs (CPU, not wall: ctest runs suites side by side)."""
    before = os.times()
    r = run([os.path.join(d, "check.sh")])
    after = os.times()
    return r, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main():
    os.makedirs(WORK, exist_ok=True)
    why = have_coq()
    if why:
        print(f"export_coq: skipped ({why}; Debian: coq libcoq-mathcomp-algebra libcoq-mathcomp-zify, "
              "installed by scripts/install-deps.sh)")
        return 77
    coqlib.use_compiled_library(WORK)
    rng = random.Random(20261127)
    cases = {
        "m17x16": [[rng.randint(-9, 9) for _ in range(16)] for _ in range(17)],
        "m12x10r6": low_rank(rng, 12, 10, 6),
        "m16x14r9": low_rank(rng, 16, 14, 9),
        "m24x20r11": low_rank(rng, 24, 20, 11),
        "m10x8dup": None,
        "m64x64": [[rng.randint(-99, 99) for _ in range(64)] for _ in range(64)],
    }
    dup = low_rank(rng, 10, 8, 5)
    dup[1] = dup[0][:]  # equal rows 0 and 1, equal columns 0 and 1: minors holding both are singular
    for row in dup:
        row[1] = row[0]
    cases["m10x8dup"] = dup
    exported = {}
    for name, a in cases.items():
        mfile = os.path.join(WORK, name + ".json")
        cert = os.path.join(WORK, name + ".cert.json")
        out = os.path.join(WORK, name + ".coq")
        shutil.rmtree(out, ignore_errors=True)
        json.dump(a, open(mfile, "w"))
        r = run([MEMCERT, "rank", mfile, "--cert", cert, "--json"])
        if r.returncode != 0:
            fail(f"{name}: memcert rank exit {r.returncode}: {r.stderr.strip()}")
            continue
        rank = json.loads(r.stdout)["rank"]
        if rank != exact_rank(a):
            fail(f"{name}: memcert rank {rank} differs from the exact rank {exact_rank(a)}")
        r = run([MEMCERT, "export", "coq", cert, "--out", out, "--json"])
        if r.returncode != 0:
            fail(f"{name}: export exit {r.returncode}: {r.stderr.strip()}")
            continue
        j = json.loads(r.stdout)
        if j["rank"] != rank or sorted(j["files"]) != sorted(["Rank.v", "Matrix.v", "Witness.v", "MemcertRank.v", "check.sh"]):
            fail(f"{name}: export --json {j}")
        r, secs = coq_seconds(out)
        stated = f"Theorem A_rank : \\rank (map_mx (intr : int -> rat) A) = {rank}%N."
        if stated not in open(os.path.join(out, "Rank.v")).read():
            fail(f"{name}: Rank.v does not state {stated}")
        if r.returncode != 0:
            fail(f"{name}: check.sh exit {r.returncode}: {(r.stdout + r.stderr).strip()[-800:]}")
            continue
        if "Closed under the global context" not in r.stdout:
            fail(f"{name}: Print Assumptions did not answer 'Closed under the global context': {r.stdout[-400:]}")
        print(f"{name}: {len(a)} x {len(a[0])} rank {rank}: check.sh accepted in {secs:.1f} s of CPU (coqc, all four files)")
        if name == "m64x64" and secs >= 60:
            fail(f"{name}: coqc took {secs:.1f} s of CPU (limit 60 s)")
        exported[name] = (a, rank, cert, out)

    # --- Mutants --------------------------------------------------------------------------------------
    lines = ["Set Warnings \"-notation-overridden,-ambiguous-paths\".",
             "From Coq Require Import ZArith.",
             "From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq fintype bigop.",
             "From mathcomp Require Import ssralg ssrint rat zmodp matrix mxalgebra ssrZ.",
             "From Memcert Require Import MemcertRank.", "Local Open Scope Z_scope.", ""]
    counts = {"matrix entry": 0, "minor index": 0, "kernel entry": 0, "inverse entry": 0}
    agree = {"memcert rejects": 0, "memcert accepts": 0}
    full_runs = []  # (description, directory name, file, new text) run through check.sh itself

    names = {}  # id(list) -> the Coq name defined for it (each list defined once, so the VM compiles it once)

    def term(v, suffix=""):
        if not isinstance(v, list):
            return str(v)
        key = json.dumps(v)
        if key not in names:
            names[key] = f"L{len(names)}"
            typ = "seq nat" if suffix == "%N" else ("seq (seq Z)" if v and isinstance(v[0], list) else "seq Z")
            lines.append(f"Definition {names[key]} : {typ} := {coq_list(v)}{suffix}.")
        return names[key]

    def checks(m, n, r, d, w):
        """The Coq expression that check.sh needs true, on data d and witnesses w."""
        low = (f"rank_lower_check {m}%N {n}%N {d} {r}%N {w['lower_p']} {term(w['lower_rows'], '%N')} "
               f"{term(w['lower_cols'], '%N')} {term(w['lower_X'])}")
        if "upper_kernel" not in w:
            return low
        up = (f"rank_upper_check {m}%N {n}%N {d} {n - r}%N {term(w['upper_kernel'])} {w['upper_p']} "
              f"{term(w['upper_free'], '%N')} {term(w['upper_X'])}")
        return f"({low}) && ({up})"

    expected = []  # (what, the answer check.sh would need: true for the honest data, false for a mutant)

    def add(kind, m, n, r, data, w, expect):
        dname = term(data)
        lines.append(f"Eval vm_compute in ({len(expected)}, {checks(m, n, r, dname, w)}).")
        expected.append((kind or "honest data", expect == "true"))
        if kind:
            counts[kind] += 1

    for name, (a, r, cert, out) in exported.items():
        m, n = len(a), len(a[0])
        w = witness(os.path.join(out, "Witness.v"))
        add(None, m, n, r, a, w, "true")  # the honest data: a positive control in the same file
        if name == "m64x64":
            for _ in range(2):  # one entry of the inverse witness
                w2 = json.loads(json.dumps(w))
                i, j = rng.randrange(64), rng.randrange(64)
                w2["lower_X"][i][j] += 1
                add("inverse entry", m, n, r, a, w2, "false")
            continue
        # one matrix entry, so that the rank changes (rank-deficient matrices: any entry that raises it)
        tries, made = 0, 0
        while made < (25 if r < min(m, n) else 0) and tries < 400:
            tries += 1
            i, j, delta = rng.randrange(m), rng.randrange(n), rng.choice([-3, -2, -1, 1, 2, 3])
            b = [row[:] for row in a]
            b[i][j] += delta
            if exact_rank(b) == r:
                continue
            made += 1
            add("matrix entry", m, n, r, b, w, "false")
            c = json.load(open(cert))
            c["matrix"]["data"][i][j] = str(b[i][j])
            mcert = os.path.join(WORK, f"{name}.mut{made}.json")
            json.dump(c, open(mcert, "w"))
            v = run([MEMCERT, "verify", mcert])
            if v.returncode != 1:
                fail(f"{name} entry ({i},{j}) {delta:+d}: memcert verify exit {v.returncode} (expected 1: the rank changed)")
            mout = os.path.join(WORK, f"{name}.mut{made}.coq")
            e = run([MEMCERT, "export", "coq", mcert, "--out", mout])
            if e.returncode != 1 or os.path.exists(mout):
                fail(f"{name} entry ({i},{j}): export exit {e.returncode} (expected 1, nothing written)")
            if made == 1 and name == "m12x10r6":
                full_runs.append(("matrix entry", out, "Matrix.v", b))
        # one index of the minor, replaced by an index outside it
        for t in range(min(10, r)):
            w2 = json.loads(json.dumps(w))
            side, size = ("lower_rows", m) if t % 2 == 0 or n == r else ("lower_cols", n)
            unused = [x for x in range(size) if x not in w2[side]]
            if not unused:
                side, size = ("lower_cols", n) if side == "lower_rows" else ("lower_rows", m)
                unused = [x for x in range(size) if x not in w2[side]]
            if not unused:
                continue
            pos = rng.randrange(r)
            # prefer a replacement that makes the minor singular (memcert then rejects too: agreement)
            rng.shuffle(unused)
            chosen, verdict = None, None
            for cand in unused[:12]:
                c = json.load(open(cert))
                c["lower"]["rows" if side == "lower_rows" else "cols"][pos] = cand
                mcert = os.path.join(WORK, f"{name}.idx{t}.json")
                json.dump(c, open(mcert, "w"))
                v = run([MEMCERT, "verify", mcert])
                if v.returncode not in (0, 1):
                    fail(f"{name} index mutant: memcert verify exit {v.returncode}")
                if chosen is None or v.returncode == 1:
                    chosen, verdict = cand, v.returncode
                if v.returncode == 1:
                    break
            w2[side][pos] = chosen
            add("minor index", m, n, r, a, w2, "false")
            agree["memcert rejects" if verdict == 1 else "memcert accepts"] += 1
            if t == 0 and name == "m17x16":
                full_runs.append(("minor index", out, "Witness.v", (side, pos, w2[side][pos])))
        # one entry of one kernel vector (checked here too: A v != 0 exactly)
        if "upper_kernel" in w:
            for t in range(15):
                w2 = json.loads(json.dumps(w))
                vi, j = rng.randrange(len(w2["upper_kernel"])), rng.randrange(n)
                w2["upper_kernel"][vi][j] += rng.choice([-1, 1])
                v = w2["upper_kernel"][vi]
                if all(sum(x * y for x, y in zip(row, v)) == 0 for row in a):
                    fail(f"{name}: kernel mutant still in the kernel (test generator)")
                add("kernel entry", m, n, r, a, w2, "false")
                if t == 0 and name == "m12x10r6":
                    full_runs.append(("kernel entry", out, "Witness.v", (vi, j, w2["upper_kernel"][vi][j])))

    total = sum(counts.values())
    print(f"mutants: {total} ({', '.join(f'{k}: {v}' for k, v in counts.items())}); minor-index mutants: "
          f"{agree['memcert rejects']} rejected by memcert too, {agree['memcert accepts']} still a non-zero minor mod p for memcert "
          "(a true claim whose Coq witness no longer fits)")
    if total < 100:
        fail(f"only {total} mutants")
    mdir = os.path.join(WORK, "mutants")
    shutil.rmtree(mdir, ignore_errors=True)
    # the library compiled by any exported directory's check.sh
    some = next(iter(exported.values()))[3]
    os.makedirs(mdir)
    shutil.copy(os.path.join(some, "MemcertRank.v"), mdir)
    subprocess.run(["coqc", "-q", "-Q", ".", "Memcert", "MemcertRank.v"], cwd=mdir, check=True)
    open(os.path.join(mdir, "Mutants.v"), "w").write("\n".join(lines) + "\n")
    t0 = time.monotonic()
    r = run(["coqc", "-q", "-Q", ".", "Memcert", "Mutants.v"], cwd=mdir)
    answers = {int(i): a == "true" for i, a in re.findall(r"=\s*\((\d+)(?:%\w+)?,\s*(true|false)\)", r.stdout)}
    if r.returncode != 0 or len(answers) != len(expected):
        fail(f"Mutants.v: coqc exit {r.returncode}, {len(answers)} answers for {len(expected)} evaluations: "
             f"{(r.stdout + r.stderr)[-1500:]}")
    wrong = [(i, what, want) for i, (what, want) in enumerate(expected) if i in answers and answers[i] != want]
    for i, what, want in wrong:
        fail(f"Mutants.v, evaluation {i} ({what}): Coq's checkers are {str(answers[i]).lower()}, expected {str(want).lower()}")
    if r.returncode == 0 and len(answers) == len(expected) and not wrong:
        print(f"Coq evaluated the checkers of all {total} mutants to false, of the {len(expected) - total} honest "
              f"certificates to true ({time.monotonic() - t0:.1f} s)")

    # three mutated directories through check.sh itself
    for kind, out, fname, change in full_runs:
        d = out + ".mutated"
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(out, d)
        path = os.path.join(d, fname)
        src = open(path).read()
        if kind == "matrix entry":
            src = re.sub(r"Definition A_data : seq \(seq Z\) :=.*?\]\.\n", lambda _: f"Definition A_data : seq (seq Z) :=\n  {coq_list(change)}.\n", src, flags=re.S)
        else:
            w = witness(path)
            if kind == "minor index":
                side, pos, val = change
                w[side][pos] = val
                src = re.sub(rf"Definition {side} : seq nat := .*?%N\.", f"Definition {side} : seq nat := {coq_list(w[side])}%N.", src)
            else:
                vi, j, val = change
                w["upper_kernel"][vi][j] = val
                src = re.sub(r"Definition upper_kernel : seq \(seq Z\) :=.*?\]\.\n", lambda _: f"Definition upper_kernel : seq (seq Z) :=\n  {coq_list(w['upper_kernel'])}.\n", src, flags=re.S)
        open(path, "w").write(src)
        r, secs = coq_seconds(d)
        if r.returncode == 0:
            fail(f"check.sh accepted a directory with a mutated {kind}")
        else:
            print(f"check.sh rejected the directory with a mutated {kind} (exit {r.returncode}, {secs:.1f} s)")

    print("export_coq: every check passed" if not failures else f"export_coq: {len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
