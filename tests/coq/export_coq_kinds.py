#!/usr/bin/env python3
"""`memcert export coq` of kinds kruskal and dana24, judged by Coq's kernel (docs/COQ.md).

usage: export_coq_kinds.py MEMCERT WORKDIR

1. kruskal: vector sets (random integer vectors, planted dependencies, dyadic entries, fewer vectors
   than the dimension) go through `memcert kruskal --cert`, then `memcert export coq`; the Kruskal rank
   is recomputed here over all subsets with exact fractions; each directory's check.sh must exit 0 with
   "Closed under the global context" for every theorem.
2. dana24: `memcert construct dana24` on small token association sets; the exact margin of the read-out is
   recomputed here with fractions (logits W_U [M, W_O] F~(t)) and must be at least the certificate's
   targets_min_margin; each directory's check.sh must exit 0 with no axiom.
3. Mutants, >= 100 for each kind, evaluated by Coq (one file per kind, loading the library once; each
   mutant an `Eval vm_compute` of the checker, whose answer is read back and must be false, next to the
   honest data whose answer must be true):
   kruskal: one entry of one subset's inverse witness, one pivot coordinate, one subset's witness
   dropped, the claimed k raised, one coefficient or one index of the dependency, one vector entry of a
   dependent subset. dana24: one entry of the inverse witness of M, one entry of M, the margin raised
   above the exact one, one entry of W_U or of F~ changed so that an exact margin falls below the stated
   one (recomputed here), one label changed. Every certificate-level mutant (vector entry, claimed k,
   dependency, margin) is also rejected by `memcert verify` (exit 1) and refused by `memcert export coq`
   (exit 1, nothing written): memcert's checker and Coq agree. Two mutated directories are run through
   check.sh itself.
4. Exits 77 (ctest: skipped) with one line when coqc or mathcomp is absent.
"""
import itertools
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

MEMCERT, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
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
    if run(["coqc", "-q", probe], cwd=WORK).returncode != 0:
        return "mathcomp (ssreflect, algebra, zify) not found by coqc"
    return None


def rank(rows):
    m = [[Fraction(x) for x in r] for r in rows]
    rk, cols = 0, len(m[0]) if m else 0
    for c in range(cols):
        piv = next((i for i in range(rk, len(m)) if m[i][c] != 0), None)
        if piv is None:
            continue
        m[rk], m[piv] = m[piv], m[rk]
        for i in range(rk + 1, len(m)):
            f = m[i][c] / m[rk][c]
            if f:
                for j in range(c, cols):
                    m[i][j] -= f * m[rk][j]
        rk += 1
    return rk


def kruskal_rank(vs):
    """The largest k such that every k vectors are linearly independent. Every subset of independent
    vectors is independent, so the sizes are tried from the largest down and the first size whose every
    subset is independent is the answer (a dependent subset ends a size at the first one found)."""
    for size in range(min(len(vs), len(vs[0])), 0, -1):
        if all(rank([vs[i] for i in s]) == size for s in itertools.combinations(range(len(vs)), size)):
            return size
    return 0


def coq_list(v, suffix=""):
    if isinstance(v, list):
        return "[::]" if not v else "[:: " + "; ".join(coq_list(x) for x in v) + "]"
    return str(v)


def parse_coq_list(text):
    t = text.replace("%N", "").replace("[::]", "[]").replace("[::", "[").replace(";", ",")
    return json.loads(t)


def definitions(path):
    out = {}
    for name, body in re.findall(r"Definition (\w+) : [^:=]+:=\s*(.*?)\.\n", open(path).read(), re.S):
        body = body.strip()
        if body.startswith("["):
            out[name] = parse_coq_list(body)
        elif re.fullmatch(r"-?\d+", body):
            out[name] = int(body)
    return out


class Mutants:
    """One Coq file of checks, each `expr` evaluated by vm_compute; its answer must be `expected`."""

    def __init__(self, libs):
        self.lines = ["Set Warnings \"-notation-overridden,-ambiguous-paths\".",
                      "From Coq Require Import ZArith.",
                      "From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.",
                      f"From Memcert Require Import {libs}.", "Local Open Scope Z_scope.", ""]
        self.names = {}
        self.count = {}
        self.expected = []  # (what, expected answer)

    def term(self, v, typ):
        key = typ + json.dumps(v)
        if key not in self.names:
            self.names[key] = f"L{len(self.names)}"
            suffix = "%N" if typ.startswith("seq nat") or typ == "nat" else ""
            self.lines.append(f"Definition {self.names[key]} : {typ} := {coq_list(v)}{suffix}.")
        return self.names[key]

    def check(self, kind, expr, expect="false"):
        self.lines.append(f"Eval vm_compute in ({len(self.expected)}, {expr}).")
        self.expected.append((kind or "honest data", expect == "true"))
        if kind:
            self.count[kind] = self.count.get(kind, 0) + 1

    def run(self, libs, name):
        d = os.path.join(WORK, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for src in libs:
            shutil.copy(src, d)
            if run(["coqc", "-q", "-Q", ".", "Memcert", os.path.basename(src)], cwd=d).returncode != 0:
                fail(f"{name}: {os.path.basename(src)} does not compile")
                return
        open(os.path.join(d, "Mutants.v"), "w").write("\n".join(self.lines) + "\n")
        t0 = time.monotonic()
        r = run(["coqc", "-q", "-Q", ".", "Memcert", "Mutants.v"], cwd=d)
        total = sum(self.count.values())
        answers = {int(i): a == "true" for i, a in re.findall(r"=\s*\((\d+)(?:%\w+)?,\s*(true|false)\)", r.stdout)}
        wrong = [(i, what, want) for i, (what, want) in enumerate(self.expected) if i in answers and answers[i] != want]
        for i, what, want in wrong:
            fail(f"{name}, evaluation {i} ({what}): Coq's check is {str(answers[i]).lower()}, expected {str(want).lower()}")
        if r.returncode != 0 or len(answers) != len(self.expected):
            fail(f"{name}: coqc exit {r.returncode}, {len(answers)} answers for {len(self.expected)} evaluations: "
                 f"{(r.stdout + r.stderr)[-1500:]}")
        elif not wrong:
            print(f"{name}: Coq evaluated the checks of all {total} mutants to false "
                  f"({', '.join(f'{k}: {v}' for k, v in self.count.items())}; {time.monotonic() - t0:.1f} s)")
        if total < 100:
            fail(f"{name}: only {total} mutants")


def expect_rejected(what, cert_obj, tag):
    """memcert's checker rejects the mutated certificate and the export refuses it."""
    path = os.path.join(WORK, f"{tag}.json")
    json.dump(cert_obj, open(path, "w"))
    v = run([MEMCERT, "verify", path])
    if v.returncode != 1:
        fail(f"{what}: memcert verify exit {v.returncode} (expected 1)")
    out = os.path.join(WORK, f"{tag}.coq")
    shutil.rmtree(out, ignore_errors=True)
    e = run([MEMCERT, "export", "coq", path, "--out", out])
    if e.returncode != 1 or os.path.exists(out):
        fail(f"{what}: export exit {e.returncode} (expected 1, nothing written)")
    return v.returncode == 1


def export(cert, out, files):
    shutil.rmtree(out, ignore_errors=True)
    r = run([MEMCERT, "export", "coq", cert, "--out", out, "--json"])
    if r.returncode != 0:
        fail(f"{cert}: export exit {r.returncode}: {r.stderr.strip()}")
        return None
    j = json.loads(r.stdout)
    if sorted(j["files"]) != sorted(files):
        fail(f"{cert}: export --json files {j['files']}")
    return j


def check_dir(out, theorems):
    t = time.monotonic()
    r = run([os.path.join(out, "check.sh")])
    secs = time.monotonic() - t
    if r.returncode != 0:
        fail(f"{out}: check.sh exit {r.returncode}: {(r.stdout + r.stderr).strip()[-800:]}")
        return None
    if r.stdout.count("Closed under the global context") != theorems:
        fail(f"{out}: Print Assumptions did not answer 'Closed under the global context' {theorems} times")
    return secs


# --- kruskal ------------------------------------------------------------------------------------------

def kruskal_cases(rng):
    cases = {"k12x8": [[rng.randint(-9, 9) for _ in range(8)] for _ in range(12)]}
    v = [[rng.randint(-5, 5) for _ in range(6)] for _ in range(10)]
    v[3] = [a + b for a, b in zip(v[1], v[2])]  # {1, 2, 3} dependent: Kruskal rank 2
    cases["k10x6dep"] = v
    v = [[rng.randint(-5, 5) for _ in range(6)] for _ in range(11)]
    v[7] = [a - 2 * b + c for a, b, c in zip(v[0], v[4], v[9])]  # a dependent 4-subset
    cases["k11x6dep4"] = v
    cases["k9x7dyadic"] = [[str(Fraction(rng.randint(-40, 40), 2 ** rng.randint(0, 4))) for _ in range(7)]
                           for _ in range(9)]
    cases["k6x8"] = [[rng.randint(-9, 9) for _ in range(8)] for _ in range(6)]
    return cases


def test_kruskal(rng):
    mut = Mutants("MemcertRank MemcertKruskal")
    exported = {}
    for name, vs in kruskal_cases(rng).items():
        vfile, cert, out = (os.path.join(WORK, name + s) for s in (".json", ".cert.json", ".coq"))
        json.dump(vs, open(vfile, "w"))
        r = run([MEMCERT, "kruskal", vfile, "--cert", cert, "--json"])
        if r.returncode != 0:
            fail(f"{name}: memcert kruskal exit {r.returncode}: {r.stderr.strip()}")
            continue
        k = json.loads(r.stdout).get("kruskal_rank")
        exact = kruskal_rank([[Fraction(x) for x in row] for row in vs])
        if k != exact:
            fail(f"{name}: memcert kruskal {k} differs from the exact Kruskal rank {exact}")
            continue
        j = export(cert, out, ["Kruskal.v", "Vectors.v", "Witness.v", "MemcertRank.v", "MemcertKruskal.v", "check.sh"])
        if j is None:
            continue
        T, d = len(vs), len(vs[0])
        secs = check_dir(out, 2 if k < T else 1)
        if secs is None:
            continue
        src = open(os.path.join(out, "Kruskal.v")).read()
        if f"\\rank (map_mx (intr : int -> rat) (colsub s A)) = {k}%N." not in src:
            fail(f"{name}: Kruskal.v does not state independence of every {k} columns")
        print(f"{name}: {T} vectors in dimension {d}, Kruskal rank {k}: check.sh accepted in {secs:.1f} s")
        exported[name] = (vs, k, cert, out)

    for name, (vs, k, cert, out) in exported.items():
        T, d = len(vs), len(vs[0])
        w = {**definitions(os.path.join(out, "Vectors.v")), **definitions(os.path.join(out, "Witness.v"))}
        V, p = mut.term(w["V_data"], "seq (seq Z)"), w["lower_p"]
        W = f"W_{name}"
        mut.lines.append(f"Definition {W} := Eval vm_compute in kruskal_witnesses {T} {d} {V} {k} {p}.")
        low = lambda WW, kk=k, VV=V: f"kruskal_lower_check {T}%N {d}%N {VV} {kk}%N {p} {WW}"
        mut.check(None, low(W), "true")
        nsub = len(list(itertools.combinations(range(T), k)))
        # one entry of one subset's inverse witness (by columns), + 1
        for _ in range(10 if k > 0 else 0):
            s, i, jj = rng.randrange(nsub), rng.randrange(k), rng.randrange(k)
            mut.check("inverse entry", low(f"(set_nth (nil, nil) {W} {s} (let w := nth (nil, nil) {W} {s} in (w.1, "
                                           f"set_nth nil w.2 {i} (set_nth 0 (nth nil w.2 {i}) {jj} (nth 0 (nth nil w.2 {i}) {jj} + 1)))))"))
        # one pivot coordinate of one subset replaced by a coordinate outside the minor
        for _ in range(6 if 0 < k < d else 0):
            s, i = rng.randrange(nsub), rng.randrange(k)
            mut.check("pivot coordinate", low(f"(set_nth (nil, nil) {W} {s} (let w := nth (nil, nil) {W} {s} in "
                                              f"(set_nth 0%N w.1 {i} (head 0%N [seq c <- iota 0 {d} | c \\notin w.1]), w.2)))"))
        # one subset's witness dropped (the list no longer covers every subset)
        mut.check("subset dropped", low(f"(take {nsub - 1} {W})" if nsub > 1 else "nil"))
        # the claimed k raised (when a larger Kruskal rank is conceivable): every (k+1)-subset claimed independent
        if k < min(T, d):
            mut.check("claimed k", low(f"(kruskal_witnesses {T} {d} {V} {k + 1} {p})", k + 1))
            c = json.load(open(cert))
            c["kruskal_lower"] = c["kruskal_upper"] = c["kruskal_rank"] = k + 1
            expect_rejected(f"{name}: claimed k + 1", c, f"{name}.kplus")
        if k < T:
            S, cs = w["upper_S"], w["upper_c"]
            t0 = next(i for i, x in enumerate(cs) if x != 0)
            up = lambda VV, SS, cc: f"kruskal_upper_check {T}%N {d}%N {VV} {k}%N {mut.term(SS, 'seq nat')} {mut.term(cc, 'seq Z')} {t0}%N"
            mut.check(None, up(V, S, cs), "true")
            cj = json.load(open(cert))
            cert_dep = cj["upper"].get("method") == "dependent-subset"
            for t in range(8):  # one coefficient of the dependency
                c2 = list(cs)
                c2[t % (k + 1)] += rng.choice([-2, -1, 1, 2])
                mut.check("dependency coefficient", up(V, S, c2))
                if cert_dep and t < 3:
                    c = json.loads(json.dumps(cj))
                    c["upper"]["coefficients"][t % (k + 1)] = str(Fraction(c["upper"]["coefficients"][t % (k + 1)]) + 1)
                    expect_rejected(f"{name}: dependency coefficient", c, f"{name}.coef{t}")
            for t in range(5):  # one index of the dependent subset replaced by an unused one
                unused = [x for x in range(T) if x not in S]
                if not unused:
                    break
                S2 = list(S)
                S2[rng.randrange(k + 1)] = rng.choice(unused)
                S2.sort()
                vs2 = [vs[i] for i in S2]
                if rank(vs2) < k + 1 and S2 != S:
                    continue  # still dependent by chance: not a mutant
                mut.check("dependency index", up(V, S2, cs))
            for t in range(8):  # one vector entry of the dependent subset: the dependency breaks
                i, jj = S[rng.randrange(k + 1)], rng.randrange(d)
                while cs[S.index(i)] == 0:
                    i = S[rng.randrange(k + 1)]
                V2 = [list(r) for r in w["V_data"]]
                V2[i][jj] += rng.choice([-3, -1, 1, 3])
                mut.check("vector entry", up(mut.term(V2, "seq (seq Z)"), S, cs))
                if cert_dep and t < 3:
                    c = json.loads(json.dumps(cj))
                    c["vectors"]["data"][i][jj] = str(Fraction(c["vectors"]["data"][i][jj]) + 1)
                    expect_rejected(f"{name}: vector entry", c, f"{name}.vec{t}")
    mut.run([os.path.join(next(iter(exported.values()))[3], f) for f in ("MemcertRank.v", "MemcertKruskal.v")]
            if exported else [], "kruskal_mutants")
    # a mutated directory through check.sh: the claimed k in the theorems raised
    for name, (vs, k, cert, out) in list(exported.items())[:1]:
        d2 = out + ".mutated"
        shutil.rmtree(d2, ignore_errors=True)
        shutil.copytree(out, d2)
        for f in ("Witness.v", "Kruskal.v"):
            path = os.path.join(d2, f)
            src = open(path).read().replace(f"V_data {k}%N", f"V_data {k + 1}%N").replace(
                f"V_data {k} lower_p", f"V_data {k + 1} lower_p")
            open(path, "w").write(src)
        if run([os.path.join(d2, "check.sh")]).returncode == 0:
            fail("check.sh accepted a kruskal directory whose claimed k was raised")
        else:
            print(f"check.sh rejected the kruskal directory {name} with the claimed k raised")


# --- dana24 -------------------------------------------------------------------------------------------

def exact_margins(c):
    """min over rivals of (W_U E*(t))_next - (W_U E*(t))_j, E* = [M, W_O] F~(t), with fractions."""
    ro, w = c["readout"], c["weights"]
    d, H, dh = c["d"], c["H"], c["dh"]
    X = [[Fraction(x) for x in ro["M"][i]] + [Fraction(w["WO"][h][i][q]) for h in range(H) for q in range(dh)]
         for i in range(d)]
    WU = [[Fraction(x) for x in r] for r in w["WU"]]
    out = []
    for t, f in enumerate(ro["features_centre"]):
        f = [Fraction(x) for x in f]
        e = [sum(a * b for a, b in zip(X[i], f)) for i in range(d)]
        L = [sum(a * b for a, b in zip(r, e)) for r in WU]
        lab = c["next"][t]
        out.append(min((L[lab] - L[j] for j in range(len(L)) if j != lab), default=None))
    return out


def dana24_cases():
    return {"d24_N8_S3_H2": (8, 3, 8, 2, 2, 4), "d24_N6_S2_H1": (6, 2, 6, 1, 2, 4),
            "d24_N12_S3_H2": (12, 3, 14, 2, 3, 8)}


def test_dana24(rng):
    mut = Mutants("MemcertRank MemcertDana24")
    exported = {}
    for name, (N, S, T, H, dh, d) in dana24_cases().items():
        data, cert, out = (os.path.join(WORK, name + s) for s in (".data.json", ".cert.json", ".coq"))
        r = run([MEMCERT, "generate", "dana24", "--N", str(N), "--S", str(S), "--T", str(T), "--seed", "7", "--out", data])
        if r.returncode != 0:
            fail(f"{name}: generate dana24 exit {r.returncode}: {r.stderr.strip()}")
            continue
        r = run([MEMCERT, "construct", "dana24", data, "--heads", str(H), "--dh", str(dh), "--d", str(d), "--out", cert])
        if r.returncode != 0:
            fail(f"{name}: construct dana24 exit {r.returncode}: {r.stderr.strip()}")
            continue
        c = json.load(open(cert))
        margins = exact_margins(c)
        q = Fraction(c["readout"]["targets_min_margin"])
        if any(m is not None and m < q for m in margins) or q <= 0:
            fail(f"{name}: an exact read-out margin recomputed here is below targets_min_margin")
        j = export(cert, out, ["Readout.v", "Data.v", "Witness.v", "MemcertRank.v", "MemcertDana24.v", "check.sh"])
        if j is None:
            continue
        secs = check_dir(out, 2)
        if secs is None:
            continue
        print(f"{name}: d = {d}, N = {N}, T = {T}, H dh = {H * dh}: check.sh accepted in {secs:.1f} s")
        exported[name] = (c, cert, out, margins)

    for name, (c, cert, out, margins) in exported.items():
        w = {**definitions(os.path.join(out, "Data.v")), **definitions(os.path.join(out, "Witness.v"))}
        N, d, T, h = c["N"], c["d"], len(c["next"]), c["H"] * c["dh"]
        Z = lambda v: mut.term(v, "seq (seq Z)")
        det = lambda M, X: f"det_check {d}%N {Z(M)} {w['X_den']} {w['det_p']} {Z(X)}"
        ro = lambda M=w["M_num"], WU=w["WU_num"], F=w["F_num"], nxt=w["next_data"], qn=w["q_num"], qd=w["q_den"]: (
            f"readout_check {N}%N {d}%N {h}%N {T}%N {Z(M)} {Z(w['WO_num'])} {w['X_den']} {Z(WU)} {w['WU_den']} {Z(F)} "
            f"{w['F_den']} {mut.term(nxt, 'seq nat')} {qn} {qd}")
        mut.check(None, det(w["M_num"], w["det_X"]), "true")
        mut.check(None, ro(), "true")
        for _ in range(12):  # one entry of the inverse witness of M
            X2 = [list(r) for r in w["det_X"]]
            X2[rng.randrange(d)][rng.randrange(d)] += 1
            mut.check("inverse entry", det(w["M_num"], X2))
        for _ in range(12):  # one entry of M (the witness no longer inverts it)
            M2 = [list(r) for r in w["M_num"]]
            M2[rng.randrange(d)][rng.randrange(d)] += rng.choice([-1, 1])
            mut.check("M entry", det(M2, w["det_X"]))
        # the margin raised just above the exact minimum: Coq, memcert and the export all refuse
        true_min = min(m for m in margins if m is not None)
        q2 = true_min + Fraction(1, 2 ** 40)
        mut.check("margin", ro(qn=q2.numerator, qd=q2.denominator))
        cm = json.loads(json.dumps(c))
        cm["readout"]["targets_min_margin"] = f"{q2.numerator}/{q2.denominator}"
        expect_rejected(f"{name}: margin above the exact one", cm, f"{name}.margin")
        for t in range(4):
            q3 = true_min * (t + 2)
            mut.check("margin", ro(qn=q3.numerator, qd=q3.denominator))
        # one entry of W_U or of F~ so that some exact margin falls below the stated one (recomputed here)
        qs = Fraction(c["readout"]["targets_min_margin"])
        for what, key in (("WU entry", "WU_num"), ("F entry", "F_num")):
            made = tries = 0
            while made < 8 and tries < 400:
                tries += 1
                A = [list(r) for r in w[key]]
                i, jj = rng.randrange(len(A)), rng.randrange(len(A[0]))
                A[i][jj] += rng.choice([-1, 1]) * rng.choice([1, 10, 1000]) * max(1, abs(A[i][jj]))
                c2 = json.loads(json.dumps(c))
                if key == "WU_num":
                    c2["weights"]["WU"][i][jj] = str(Fraction(A[i][jj], w["WU_den"]))
                else:
                    c2["readout"]["features_centre"][i][jj] = str(Fraction(A[i][jj], w["F_den"]))
                if all(m is None or m >= qs for m in exact_margins(c2)):
                    continue  # the claim still holds: not a mutant
                made += 1
                mut.check(what, ro(**{"WU" if key == "WU_num" else "F": A}))
        for t in range(min(T, 6)):  # one label changed
            nxt = list(w["next_data"])
            nxt[t] = (nxt[t] + 1 + rng.randrange(N - 1)) % N
            mut.check("label", ro(nxt=nxt))
    mut.run([os.path.join(next(iter(exported.values()))[2], f) for f in ("MemcertRank.v", "MemcertDana24.v")]
            if exported else [], "dana24_mutants")
    # a mutated directory through check.sh: one entry of M
    for name, (c, cert, out, margins) in list(exported.items())[:1]:
        d2 = out + ".mutated"
        shutil.rmtree(d2, ignore_errors=True)
        shutil.copytree(out, d2)
        path = os.path.join(d2, "Data.v")
        w = definitions(path)
        M2 = [list(r) for r in w["M_num"]]
        M2[0][0] += 1
        src = re.sub(r"Definition M_num : seq \(seq Z\) :=.*?\]\.\n",
                     lambda _: f"Definition M_num : seq (seq Z) :=\n  {coq_list(M2)}.\n", open(path).read(), flags=re.S)
        open(path, "w").write(src)
        if run([os.path.join(d2, "check.sh")]).returncode == 0:
            fail("check.sh accepted a dana24 directory with a mutated entry of M")
        else:
            print(f"check.sh rejected the dana24 directory {name} with a mutated entry of M")


def main():
    os.makedirs(WORK, exist_ok=True)
    why = have_coq()
    if why:
        print(f"export_coq_kinds: skipped ({why}; Debian: coq libcoq-mathcomp-algebra libcoq-mathcomp-zify, "
              "installed by scripts/install-deps.sh)")
        return 77
    coqlib.use_compiled_library(WORK)
    rng = random.Random(20261127)
    test_kruskal(rng)
    test_dana24(rng)
    print("export_coq_kinds: every check passed" if not failures else f"export_coq_kinds: {len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
