#!/usr/bin/env python3
"""memcert export coq for kind theorem1 (mahdavi24 Theorem 1), checked by Coq.

Usage: export_coq_theorem1.py MEMCERT WORKDIR   (exit 77 = skipped: no coqc)

1. Certificates of `construct theorem1` (the demo's size T = 17, H = 4, n = 5, d = 8, d_h = 5 with real
   labels; a smaller one with class labels and the skip connection) are exported, and check.sh accepts
   them; their Print Assumptions list only the standard axioms of Coq's reals. The coqc time is printed.
2. Mutants, evaluated by Coq in one file each (MemcertTheorem1.rank_check / labels_check / classes_check
   by vm_compute on the mutated data): every mutant that changes the truth is rejected by Coq (a label
   moved beyond 2^-20 max(1, |y|), an entry of W_O, W_V or W_D changed, a context or query entry changed,
   an example replaced by a copy of another, which makes two rows of Z equal so rank(Z) < T); labels moved
   well within the rule are accepted; a wrong witness (an entry of the approximate inverse, a column
   index, a precision too low) makes the rank check false.
3. The same certificate-level mutants written into the certificate: `memcert verify` agrees with Coq on
   every one (accepted iff Coq's checks are true), and the export refuses the rejected ones (exit 1).
4. Two mutated directories are rejected by check.sh itself.
5. Data by reference (`construct theorem1 --data-ref on`, T = 7): exported from another directory, the files
   equal the embedded certificate's export up to comments and check.sh accepts them; a forged digest, an
   edited data file (with or without its digest), a missing one are refused with verify's exit status,
   nothing written; 8 mutants of its Data.v, judged by Coq in one file, agree with the float forward pass.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from fractions import Fraction

import coqlib

MEMCERT, WORK = sys.argv[1], sys.argv[2]
if shutil.which("coqc") is None:
    print("skipped: coqc not found")
    sys.exit(77)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
coqlib.use_compiled_library(WORK)

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args, check=True):
    r = subprocess.run([MEMCERT, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"memcert {' '.join(args)}: exit {r.returncode}")
    return r


def q(x):
    x = Fraction(x)
    return f"({x.numerator} # {x.denominator})"


def qrow(r):
    return "[" + "; ".join(q(x) for x in r) + "]"


def qmat(m):
    return "[" + "; ".join(qrow(r) for r in m) + "]"


def qmats(ms):
    return "[" + "; ".join(qmat(m) for m in ms) + "]"


def make(tag, T, n, d, H, dh, seed, extra_gen=(), extra_con=()):
    data = os.path.join(WORK, tag + ".json")
    cert = os.path.join(WORK, tag + ".cert.json")
    run("generate", "theorem1", "--T", str(T), "--n", str(n), "--d", str(d), "--seed", str(seed), *extra_gen,
        "--out", data)
    run("construct", "theorem1", data, "--heads", str(H), "--dh", str(dh), *extra_con, "--out", cert)
    return cert


def export(cert, out):
    r = run("export", "coq", cert, "--out", out, "--json", check=False)
    return r.returncode


def check_dir(out):
    t0 = time.time()
    r = subprocess.run([os.path.join(out, "check.sh")], capture_output=True, text=True)
    return r.returncode, time.time() - t0, r.stdout + r.stderr


AXIOMS = {"ClassicalDedekindReals.sig_forall_dec", "ClassicalDedekindReals.sig_not_dec",
          "FunctionalExtensionality.functional_extensionality_dep", "Classical_Prop.classic"}


def axioms(text):
    """The axiom names of Print Assumptions' answers (their unindented lines)."""
    return {line.split()[0] for line in text.splitlines()
            if line.strip() and not line[0].isspace() and line not in ("Axioms:", "Closed under the global context")
            and not line.startswith(("check.sh", "coqc"))}

# ---------------------------------------------------------------------------------------------------
# 1. Accepted exports.
certs = {
    "demo": make("demo", 17, 5, 8, 4, 5, 1),
    "cls": make("cls", 9, 4, 6, 2, 4, 3, ("--C", "3"), ("--skip",)),
}
for tag, cert in certs.items():
    out = os.path.join(WORK, tag + ".coq")
    rc = export(cert, out)
    if rc != 0:
        fail(f"{tag}: export exit {rc}")
        continue
    rc, secs, text = check_dir(out)
    print(f"{tag}: check.sh exit {rc} in {secs:.1f} s (wall)")
    if rc != 0:
        fail(f"{tag}: check.sh rejected the export:\n{text}")
    names = axioms(text)
    if not names or not names <= AXIOMS:
        fail(f"{tag}: Print Assumptions lists {sorted(names)}")

# ---------------------------------------------------------------------------------------------------
# 2./3. Mutants of the demo-size certificate.
base = json.load(open(certs["demo"]))
T, n, d, H, dh, dv, dout = (base[k] for k in ("T", "n", "d", "H", "dh", "dv", "d_out"))
outdir = os.path.join(WORK, "demo.coq")


def coq_data(c):
    """Coq definitions of a certificate's data and weights (suffix-free names, for one mutant)."""
    w = c["weights"]
    return {
        "E": qmats(c["data"]["contexts"]),
        "e": qmat(c["data"]["queries"]),
        "WQ": qmats([h["WQ"] for h in w["heads"]]),
        "WK": qmats([h["WK"] for h in w["heads"]]),
        "WV": qmats([h["WV"] for h in w["heads"]]),
        "WO": qmat(w["WO"]),
        "WD": qmat(w["WD"]),
        "Y": qmat(c["data"]["labels"]),
    }


def forward(c):
    """y_hat of every example in floating point (math.exp): an independent estimate of the read-out."""
    w = c["weights"]
    F = lambda m: [[float(Fraction(x)) for x in r] for r in m]
    WO, WD = F(w["WO"]), F(w["WD"])
    out = []
    for t in range(T):
        E = F(c["data"]["contexts"][t])
        e = [float(Fraction(x)) for x in c["data"]["queries"][t]]
        ov = []
        for hd in w["heads"]:
            WQ, WK, WV = F(hd["WQ"]), F(hd["WK"]), F(hd["WV"])
            qk = [sum(WQ[a][k] * e[a] for a in range(d)) for k in range(dh)]
            kv = [sum(WK[a][k] * qk[k] for k in range(dh)) for a in range(d)]
            logits = [sum(E[j][a] * kv[a] for a in range(d)) for j in range(n)]
            mx = max(logits)
            ex = [math.exp(x - mx) for x in logits]
            alpha = [x / sum(ex) for x in ex]
            p = [sum(alpha[j] * E[j][a] for j in range(n)) for a in range(d)]
            ov += [sum(WV[a][v] * p[a] for a in range(d)) for v in range(dv)]
        o = [sum(WO[i][k] * ov[i] for i in range(H * dv)) + (e[k] if c.get("skip") else 0) for k in range(d)]
        out.append([sum(WD[k][r] * o[k] for k in range(d)) for r in range(dout)])
    return out


def labels_truth(c):
    """True / False when the float read-out is clearly within / beyond the rule; None when too close."""
    yh = forward(c)
    verdict = True
    for t in range(T):
        for r in range(dout):
            y = float(Fraction(c["data"]["labels"][t][r]))
            tol = 2.0**-20 * max(1.0, abs(y))
            dev = abs(yh[t][r] - y)
            if abs(dev - tol) < 1e-3 * tol:
                return None
            if dev > tol:
                verdict = False
    return verdict


def clone(c):
    return json.loads(json.dumps(c))


def fmt(x):
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


if labels_truth(base) is not True:
    fail("the float forward pass does not reproduce the demo certificate's labels")
mutants = []  # (name, certificate or None, witness override dict or None, truth-changing: bool|None)
for t in range(T):
    y = Fraction(base["data"]["labels"][t][0])
    tol = Fraction(1, 2**20) * max(1, abs(y))
    for sgn in (1, -1):
        c = clone(base)
        c["data"]["labels"][t][0] = fmt(y + sgn * 4 * tol)
        mutants.append((f"label {t} moved by {sgn}*4 tol", c, None, True))
    c = clone(base)
    c["data"]["labels"][t][0] = fmt(y + tol / 4)
    mutants.append((f"label {t} moved by tol/4", c, None, False))
for i in range(H * dv):
    for k in range(0, d, 3):
        c = clone(base)
        c["weights"]["WO"][i][k] = fmt(Fraction(c["weights"]["WO"][i][k]) + Fraction(1, 2))
        mutants.append((f"WO[{i}][{k}] + 1/2", c, None, True))
for h in range(H):
    for r in range(d):
        c = clone(base)
        c["weights"]["heads"][h]["WV"][r][0] = fmt(Fraction(c["weights"]["heads"][h]["WV"][r][0]) + 1)
        mutants.append((f"WV[{h}][{r}][0] + 1", c, None, True))
for k in range(d):
    c = clone(base)
    c["weights"]["WD"][k][0] = fmt(Fraction(c["weights"]["WD"][k][0]) + 1)
    mutants.append((f"WD[{k}][0] + 1", c, None, None))  # a zero column of W_O may leave y_hat unchanged
for t in (0, T - 1):  # each of these recomputes Z in Coq (about 15 s of CPU): two of each
    c = clone(base)
    c["data"]["contexts"][t][1][2] = fmt(Fraction(c["data"]["contexts"][t][1][2]) + Fraction(1, 4))
    mutants.append((f"context {t}[1][2] + 1/4", c, None, True))
    c = clone(base)
    c["data"]["queries"][t][0] = fmt(Fraction(c["data"]["queries"][t][0]) + Fraction(1, 4))
    mutants.append((f"query {t}[0] + 1/4", c, None, True))
for t in (5,):
    c = clone(base)
    c["data"]["contexts"][t] = clone(c["data"]["contexts"][t + 1])
    c["data"]["queries"][t] = clone(c["data"]["queries"][t + 1])
    mutants.append((f"example {t} replaced by example {t + 1} (rank < T)", c, None, True))

witness = open(os.path.join(outdir, "Witness.v")).read()
rwit = re.search(r"Definition Rwit : list \(list Q\) :=\s*(\[.*\])\.", witness, re.S).group(1)
rrows = [re.findall(r"\((-?\d+) # (\d+)\)", row) for row in re.findall(r"\[([^\[\]]*)\]", rwit)]
cols = [int(x) for x in re.search(r"Definition cols : list nat := \[([^\]]*)\]", witness).group(1).split(";")]
for a in range(0, T, 6):
    m = [[Fraction(int(p), int(qq)) for p, qq in row] for row in rrows]
    m[a][(a + 3) % T] += 10
    mutants.append((f"Rwit[{a}][{(a + 3) % T}] + 10", None, {"Rwit": qmat(m)}, False))
for l in (T - 1,):
    cc = list(cols)
    cc[l] = (cc[l] + 1) % (H * d) if (cc[l] + 1) % (H * d) not in cc else (cc[l] + 2) % (H * d)
    mutants.append((f"cols[{l}] replaced", None, {"cols": "[" + "; ".join(map(str, cc)) + "]%nat"}, False))
mutants.append(("prec 4", None, {"prec": "4%nat"}, False))
mutants.append(("kexp 0", None, {"kexp": "0%nat"}, False))
print(f"{len(mutants)} mutants")
if len(mutants) < 100:
    fail(f"only {len(mutants)} mutants")

# One Coq file: each mutant's data, then rank_check and labels_check on it.
lines = ["From Coq Require Import QArith List.", "Import ListNotations.",
         "From Memcert Require Import MemcertTheorem1 Data Witness.", "Local Open Scope Q_scope.",
         "Definition Zl0 := Eval vm_compute in Zrows n d H dh T E e WQ WK prec kexp.",
         "Definition rank0 := Eval vm_compute in rank_check d H T prec Zl0 cols Rwit."]
base_defs = coq_data(base)
for i, (name, c, wover, _) in enumerate(mutants):
    defs = dict(base_defs) if c is None else coq_data(c)
    for key, val in defs.items():
        if val != base_defs[key]:
            lines.append(f"Definition m{i}_{key} := {val}.")
    arg = {key: (f"m{i}_{key}" if defs[key] != base_defs[key] else key) for key in defs}
    wv = {"prec": "prec", "kexp": "kexp", "cols": "cols", "Rwit": "Rwit"}
    for key, val in (wover or {}).items():
        lines.append(f"Definition m{i}_{key} := {val}.")
        wv[key] = f"m{i}_{key}"
    same_z = all(arg[k] == k for k in ("E", "e", "WQ", "WK")) and wv["prec"] == "prec" and wv["kexp"] == "kexp"
    zl = "Zl0" if same_z else f"Zrows n d H dh T {arg['E']} {arg['e']} {arg['WQ']} {arg['WK']} {wv['prec']} {wv['kexp']}"
    # rank_check depends on Z and the witness only: "rank0" (the unchanged one's, computed once) otherwise
    rk = "rank0" if same_z and not wover else f"rank_check d H T {wv['prec']} Zl {wv['cols']} {wv['Rwit']}"
    lines.append(f"Eval vm_compute in (let Zl := {zl} in ({i}%nat, {rk}, "
                 f"labels_check d H dv d_out T {arg['e']} {arg['WV']} {arg['WO']} {arg['WD']} skip {wv['prec']} Zl {arg['Y']})).")
mutfile = os.path.join(outdir, "Mutants.v")
open(mutfile, "w").write("\n".join(lines) + "\n")
t0 = time.time()
r = subprocess.run(["coqc", "-q", "-Q", ".", "Memcert", "Mutants.v"], cwd=outdir, capture_output=True, text=True)
print(f"coqc Mutants.v: exit {r.returncode} in {time.time() - t0:.1f} s (wall)")
if r.returncode != 0:
    fail("coqc Mutants.v: " + r.stderr[-2000:])
results = {int(a): (b == "true", c == "true")
           for a, b, c in re.findall(r"=\s*\((\d+)%nat,\s*(true|false),\s*(true|false)\)", r.stdout)}
if len(results) != len(mutants):
    fail(f"Coq evaluated {len(results)} of {len(mutants)} mutants")

agree = rejected = truth_changed = 0
undecided_truth = []
for i, (name, c, wover, changes) in enumerate(mutants):
    if i not in results:
        continue
    rank_ok, labels_ok = results[i]
    coq_ok = rank_ok and labels_ok
    if c is not None:  # the truth by an independent float forward pass (rank < T only for the copies)
        lt = labels_truth(c)
        if lt is not None:
            changes = not (lt and "rank < T" not in name)
        else:
            undecided_truth.append(name)
    if changes is True and coq_ok:
        fail(f"mutant {name}: Coq accepts a mutant that changes the truth")
    if changes is False and c is not None and not coq_ok:
        fail(f"mutant {name}: Coq rejects a mutant that keeps the truth")
    if changes is True:
        truth_changed += 1
    if c is None:  # a witness mutant: no certificate; the rank check must fail
        if rank_ok and name.startswith(("Rwit", "prec", "kexp")) or (name.startswith("cols") and rank_ok and False):
            fail(f"mutant {name}: the rank check holds with a wrong witness")
        continue
    if "rank < T" in name and rank_ok:
        fail(f"mutant {name}: the rank check holds with two equal rows of Z")
    if not coq_ok:
        rejected += 1
    path = os.path.join(WORK, f"mut{i}.cert.json")
    json.dump(c, open(path, "w"))
    v = run("verify", path, check=False)
    cpp_ok = v.returncode == 0
    if v.returncode not in (0, 1):
        fail(f"mutant {name}: verify exit {v.returncode}")
    if cpp_ok != coq_ok:
        fail(f"mutant {name}: verify {'accepts' if cpp_ok else 'rejects'}, Coq {'accepts' if coq_ok else 'rejects'}")
    else:
        agree += 1
    if not cpp_ok:
        e = run("export", "coq", path, "--out", os.path.join(WORK, f"mut{i}.coq"), check=False)
        if e.returncode != 1 or os.path.exists(os.path.join(WORK, f"mut{i}.coq")):
            fail(f"mutant {name}: export exit {e.returncode} (expected 1, nothing written)")
print(f"Coq rejects {rejected} certificate mutants ({truth_changed} change the truth by a float forward pass; "
      f"{len(undecided_truth)} too close to tell); verify agrees with Coq on {agree}")

# ---------------------------------------------------------------------------------------------------
# 4. check.sh rejects mutated directories.
for tag, edit in (("label", lambda s: s), ("witness", None)):
    d2 = os.path.join(WORK, "demo_" + tag + ".coq")
    shutil.copytree(outdir, d2)
    os.remove(os.path.join(d2, "Mutants.v"))
    if tag == "label":
        p = os.path.join(d2, "Data.v")
        s = open(p).read()
        m = re.search(r"Definition Y : list \(list Q\) :=\s*\[\[\((-?\d+) # (\d+)\)", s)
        y = Fraction(int(m.group(1)), int(m.group(2))) + Fraction(1, 1000)
        s = s[:m.start(1) - 1] + q(y) + s[m.end(2) + 1:]
        open(p, "w").write(s)
    else:
        p = os.path.join(d2, "Witness.v")
        s = open(p).read().replace("Definition prec : nat := ", "Definition prec : nat := 3%nat. (* ", 1)
        s = s.replace("Definition kexp", "*) Definition kexp", 1)
        open(p, "w").write(s)
    rc, secs, text = check_dir(d2)
    if rc == 0:
        fail(f"check.sh accepts the mutated directory ({tag})")

# ---------------------------------------------------------------------------------------------------
# 5. Data by reference (construct theorem1 --data-ref on, T = 7 = T*, H = 3, n = 3, d = 4, d_h = 3).


def strip_coq_comments(text):
    """The text without its Coq comments, nested as Coq nests them."""
    out, depth, i = [], 0, 0
    while i < len(text):
        if text.startswith("(*", i):
            depth, i = depth + 1, i + 2
        elif depth and text.startswith("*)", i):
            depth, i = depth - 1, i + 2
        else:
            if not depth:
                out.append(text[i])
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def data_v_definitions(text):
    """Data.v's definitions: name -> (value as Python data, with Fractions for Q literals; span of the value)."""
    defs = {}
    for m in re.finditer(r"Definition (\w+) : [^\n]*? :=\s*(.*?)\.\n", text, re.S):
        v = m.group(2)
        v = re.sub(r"%\w+$", "", v)
        v = re.sub(r"\((-?\d+) # (\d+)\)", r'"\1/\2"', v).replace(";", ",")
        val = json.loads(v) if v not in ("true", "false") else v == "true"
        conv = lambda x: [conv(y) for y in x] if isinstance(x, list) else Fraction(x) if isinstance(x, str) else x
        defs[m.group(1)] = (conv(val), m.span(2))
    return defs


def cert_of_data_v(defs):
    """The data and weights of a Data.v as a certificate-shaped dict (exact numbers as strings)."""
    v = lambda k: defs[k][0]
    S = lambda x: [S(y) for y in x] if isinstance(x, list) else fmt(x)
    return {"T": v("T"), "n": v("n"), "d": v("d"), "H": v("H"), "dh": v("dh"), "dv": v("dv"), "d_out": v("d_out"),
            "skip": v("skip"),
            "data": {"contexts": S(v("E")), "queries": S(v("e")), "labels": S(v("Y"))},
            "weights": {"heads": [{"WQ": S(a), "WK": S(b), "WV": S(c)} for a, b, c in zip(v("WQ"), v("WK"), v("WV"))],
                        "WO": S(v("WO")), "WD": S(v("WD"))}}


def forward_sized(c):
    """forward() for a certificate of any size: y_hat of every example in floating point (math.exp)."""
    T_, n_, d_, dh_, dv_, dout_ = (c[k] for k in ("T", "n", "d", "dh", "dv", "d_out"))
    w = c["weights"]
    F = lambda m: [[float(Fraction(x)) for x in r] for r in m]
    WO, WD = F(w["WO"]), F(w["WD"])
    out = []
    for t in range(T_):
        E = F(c["data"]["contexts"][t])
        e = [float(Fraction(x)) for x in c["data"]["queries"][t]]
        ov = []
        for hd in w["heads"]:
            WQ, WK, WV = F(hd["WQ"]), F(hd["WK"]), F(hd["WV"])
            qk = [sum(WQ[a][k] * e[a] for a in range(d_)) for k in range(dh_)]
            kv = [sum(WK[a][k] * qk[k] for k in range(dh_)) for a in range(d_)]
            logits = [sum(E[j][a] * kv[a] for a in range(d_)) for j in range(n_)]
            mx = max(logits)
            ex = [math.exp(x - mx) for x in logits]
            alpha = [x / sum(ex) for x in ex]
            p = [sum(alpha[j] * E[j][a] for j in range(n_)) for a in range(d_)]
            ov += [sum(WV[a][u] * p[a] for a in range(d_)) for u in range(dv_)]
        o = [sum(WO[i][k] * ov[i] for i in range(len(w["heads"]) * dv_)) + (e[k] if c.get("skip") else 0)
             for k in range(d_)]
        out.append([sum(WD[k][r] * o[k] for k in range(d_)) for r in range(dout_)])
    return out


def labels_truth_sized(c):
    """labels_truth() for a certificate of any size."""
    yh = forward_sized(c)
    verdict = True
    for t in range(c["T"]):
        for r in range(c["d_out"]):
            y = float(Fraction(c["data"]["labels"][t][r]))
            tol = 2.0**-20 * max(1.0, abs(y))
            dev = abs(yh[t][r] - y)
            if abs(dev - tol) < 1e-3 * tol:
                return None
            if dev > tol:
                verdict = False
    return verdict


def attention_digest(data, T_, n_, d_):
    """docs/CERTIFICATES.md's digest (memcert-attention-v2) of a data set's first T_ examples, real labels."""
    import hashlib
    import struct
    h = hashlib.sha256(f"memcert-attention-v2 {T_} {n_} {d_}".encode())
    for x in [x for t in range(T_) for row in data["contexts"][t] for x in row] + \
             [x for t in range(T_) for x in data["queries"][t]]:
        h.update(struct.pack("<d", float(Fraction(x)) or 0.0))
    lab = data["labels"][:T_]
    h.update((f"labels real {len(lab[0])}" + "".join(" " + str(Fraction(x)) for r in lab for x in r)).encode())
    return "sha256:" + h.hexdigest()


def by_reference():
    home = os.path.join(WORK, "ref")
    os.makedirs(home)

    def mc(*args, cwd=WORK):
        return subprocess.run([MEMCERT, *args], capture_output=True, text=True, cwd=cwd)

    gen = ("--T", "7", "--n", "3", "--d", "4", "--seed", "5")
    con = ("--heads", "3", "--dh", "3")
    rs = [mc("generate", "theorem1", *gen, "--out", "data.json", cwd=home),
          mc("construct", "theorem1", "data.json", *con, "--out", "emb.cert.json", cwd=home),
          mc("construct", "theorem1", "data.json", *con, "--data-ref", "on", "--out", "ref.cert.json", cwd=home)]
    if any(r.returncode for r in rs):
        fail("by reference: generate / construct exits %s: %s" % ([r.returncode for r in rs], rs[-1].stderr[-400:]))
        return
    ref_cert, emb_cert = os.path.join(home, "ref.cert.json"), os.path.join(home, "emb.cert.json")
    c = json.load(open(ref_cert))
    data = json.load(open(os.path.join(home, "data.json")))
    Tr = c["T"]
    if "contexts" in c["data"] or c["data"].get("file") != "data.json" or Tr != 7:
        fail("by reference: the certificate does not reference data.json for its 7 examples")
        return
    # Exported from WORK, where "data.json" is not: the export finds it beside the certificate.
    ref_out, emb_out = os.path.join(WORK, "ref.coq"), os.path.join(WORK, "emb.coq")
    e = mc("export", "coq", os.path.join("ref", "ref.cert.json"), "--out", ref_out, "--json")
    e2 = mc("export", "coq", emb_cert, "--out", emb_out)
    if e.returncode != 0 or e2.returncode != 0:
        fail("by reference: export exits %d %d: %s" % (e.returncode, e2.returncode, e.stderr.strip()))
        return
    for f in ("Theorem1.v", "Data.v", "Witness.v", "MemcertTheorem1.v", "check.sh"):
        a, b = (open(os.path.join(o, f)).read() for o in (ref_out, emb_out))
        if strip_coq_comments(a) != strip_coq_comments(b):
            fail(f"by reference: {f} differs from the embedded export's beyond its comments")
    data_text = open(os.path.join(ref_out, "Data.v")).read()
    theorem_text = open(os.path.join(ref_out, "Theorem1.v")).read()
    for what, text in (("Data.v", data_text), ("Theorem1.v", theorem_text)):
        if c["data"]["digest"] not in text or "data file data.json" not in text:
            fail(f"by reference: {what} does not name the data file and its digest")
    defs = data_v_definitions(data_text)
    F = lambda x: [F(y) for y in x] if isinstance(x, list) else Fraction(x)
    if (defs["E"][0], defs["e"][0], defs["Y"][0]) != (F(data["contexts"][:Tr]), F(data["queries"][:Tr]), F(data["labels"][:Tr])):
        fail("by reference: Data.v does not hold the data file's first T examples")
    base_ref = cert_of_data_v(defs)
    if labels_truth_sized(base_ref) is not True:
        fail("by reference: the float forward pass does not reproduce the labels of the exported Data.v")
    rc, secs, text = check_dir(ref_out)
    names = axioms(text)
    if rc != 0 or not names or not names <= AXIOMS:
        fail(f"by reference: check.sh exit {rc}, axioms {sorted(names)}:\n{text[-1000:]}")
    print(f"by reference: exported, equal to the embedded export up to comments, check.sh exit {rc} in {secs:.1f} s (wall)")

    # Refused with verify's exit status, nothing written: a forged digest, an edited data file, no file; an
    # edited data file with a digest that matches it is checked on the edited values (here, they break the labels).
    bad = os.path.join(home, "bad")
    cases = []
    forged = clone(c)
    forged["data"]["digest"] = "sha256:" + "0" * 64
    os.makedirs(os.path.join(bad, "forged"))
    json.dump(forged, open(os.path.join(bad, "forged", "ref.cert.json"), "w"))
    shutil.copy(os.path.join(home, "data.json"), os.path.join(bad, "forged", "data.json"))
    cases.append(("forged digest", "forged", 1))
    edited = clone(data)
    edited["contexts"][2][1][0] = fmt(Fraction(edited["contexts"][2][1][0]) + Fraction(1, 4))
    os.makedirs(os.path.join(bad, "edited"))
    json.dump(edited, open(os.path.join(bad, "edited", "data.json"), "w"))
    shutil.copy(ref_cert, os.path.join(bad, "edited", "ref.cert.json"))
    cases.append(("edited data file", "edited", 1))
    refit = clone(c)
    refit["data"]["digest"] = attention_digest(edited, Tr, c["n"], c["d"])
    if attention_digest(data, Tr, c["n"], c["d"]) != c["data"]["digest"]:
        fail("by reference: the test's digest differs from construct's")
    os.makedirs(os.path.join(bad, "refit"))
    json.dump(edited, open(os.path.join(bad, "refit", "data.json"), "w"))
    json.dump(refit, open(os.path.join(bad, "refit", "ref.cert.json"), "w"))
    truth = labels_truth_sized(dict(base_ref, data=dict(base_ref["data"], contexts=edited["contexts"][:Tr])))
    cases.append(("edited data file, its digest in the certificate", "refit", 1 if truth is False else None))
    os.makedirs(os.path.join(bad, "missing"))
    shutil.copy(ref_cert, os.path.join(bad, "missing", "ref.cert.json"))
    cases.append(("missing data file", "missing", 2))
    for what, sub, want in cases:
        cert = os.path.join(bad, sub, "ref.cert.json")
        out = os.path.join(WORK, "refbad.coq")
        shutil.rmtree(out, ignore_errors=True)
        v, x = mc("verify", cert), mc("export", "coq", cert, "--out", out)
        if want is None:
            want = v.returncode
        if v.returncode != want or x.returncode != want or (want != 0 and os.path.exists(out)):
            fail(f"by reference, {what}: verify exit {v.returncode}, export exit {x.returncode} (want {want}), "
                 f"directory written: {os.path.exists(out)}")
        elif want == 0 and data_v_definitions(open(os.path.join(out, "Data.v")).read())["E"][0] != F(edited["contexts"][:Tr]):
            fail(f"by reference, {what}: accepted, but Data.v does not hold the edited data the checker accepted")
        if want == 2 and len(x.stderr.strip().splitlines()) != 1:
            fail(f"by reference, {what}: expected one line, got {x.stderr!r}")
    # Contexts and queries embedded beside "file" (the checker reads the file's and lists these as not
    # checked): Data.v holds the file's.
    stray = clone(c)
    stray["data"]["contexts"], stray["data"]["queries"] = edited["contexts"][:Tr], clone(data["queries"][:Tr])
    stray["data"]["queries"][0][0] = fmt(Fraction(stray["data"]["queries"][0][0]) + 1)
    json.dump(stray, open(os.path.join(home, "stray.cert.json"), "w"))
    out = os.path.join(WORK, "stray.coq")
    v, x = mc("verify", os.path.join(home, "stray.cert.json")), mc("export", "coq", os.path.join(home, "stray.cert.json"), "--out", out)
    if v.returncode != 0 or x.returncode != 0:
        fail(f"by reference, contexts beside the file: verify exit {v.returncode}, export exit {x.returncode}")
    elif strip_coq_comments(open(os.path.join(out, "Data.v")).read()) != strip_coq_comments(data_text):
        fail("by reference, contexts beside the file: Data.v does not hold the file's examples")
    # A data file whose name would end Data.v's comment (or open one, or a string in it): the comments stay
    # comments, the files as for embedded data.
    odd = os.path.join(home, "odd")
    os.makedirs(odd)
    odd_name = 'x*) "y (*z.json'
    shutil.copy(os.path.join(home, "data.json"), os.path.join(odd, odd_name))
    r = mc("construct", "theorem1", odd_name, *con, "--data-ref", "on", "--out", "odd.cert.json", cwd=odd)
    out = os.path.join(WORK, "odd.coq")
    x = mc("export", "coq", os.path.join(odd, "odd.cert.json"), "--out", out)
    if r.returncode != 0 or x.returncode != 0:
        fail(f"by reference, an odd file name: construct exit {r.returncode}, export exit {x.returncode}: {x.stderr[-300:]}")
    else:
        for f in ("Theorem1.v", "Data.v"):
            a, b = (open(os.path.join(o, f)).read() for o in (out, emb_out))
            if strip_coq_comments(a) != strip_coq_comments(b) or '"' in a.split("*)")[0]:
                fail(f"by reference, an odd file name: {f} differs from the embedded export's beyond its comments")

    # Mutants of the exported Data.v (contexts, queries, labels), judged by Coq in one run and by the float
    # forward pass on the values read back from the mutated Data.v.
    lits = {k: [m.span() for m in re.finditer(r"\(-?\d+ # \d+\)", data_text[slice(*defs[k][1])])] for k in ("E", "e", "Y")}
    n_, d_ = c["n"], c["d"]

    def lit(k, i, new):
        a, b = lits[k][i]
        return (defs[k][1][0] + a, defs[k][1][0] + b, q(new))

    E, e_, Y = defs["E"][0], defs["e"][0], defs["Y"][0]
    tolr = lambda y: Fraction(1, 2**20) * max(1, abs(y))
    muts = [("context 0[1][2] + 1/4", [lit("E", (0 * n_ + 1) * d_ + 2, E[0][1][2] + Fraction(1, 4))]),
            (f"context {Tr - 1}[0][1] - 1/4", [lit("E", ((Tr - 1) * n_) * d_ + 1, E[Tr - 1][0][1] - Fraction(1, 4))]),
            ("query 2[3] + 1/4", [lit("e", 2 * d_ + 3, e_[2][3] + Fraction(1, 4))]),
            ("example 3 replaced by example 4 (rank < T)",
             [lit("E", (3 * n_ + j) * d_ + cc, E[4][j][cc]) for j in range(n_) for cc in range(d_)] +
             [lit("e", 3 * d_ + cc, e_[4][cc]) for cc in range(d_)]),
            ("label 1 + 4 tol", [lit("Y", 1, Y[1][0] + 4 * tolr(Y[1][0]))]),
            ("label 5 - 4 tol", [lit("Y", 5, Y[5][0] - 4 * tolr(Y[5][0]))]),
            ("label 0 + tol/4", [lit("Y", 0, Y[0][0] + tolr(Y[0][0]) / 4)]),
            (f"label {Tr - 1} - tol/4", [lit("Y", Tr - 1, Y[Tr - 1][0] - tolr(Y[Tr - 1][0]) / 4)])]
    batch = ["From Coq Require Import QArith List.", "Import ListNotations.",
             "From Memcert Require Import MemcertTheorem1 Data Witness.", "Local Open Scope Q_scope.",
             "Definition Zl0 := Eval vm_compute in Zrows n d H dh T E e WQ WK prec kexp."]
    expected = []
    for k, (name, edits) in enumerate(muts):
        t = data_text
        for a, b, new in sorted(edits, reverse=True):
            t = t[:a] + new + t[b:]
        mdefs = data_v_definitions(t)
        truth = labels_truth_sized(cert_of_data_v(mdefs))
        expected.append(None if truth is None else truth and "rank < T" not in name)
        same_z = mdefs["E"][0] == E and mdefs["e"][0] == e_
        parts = [f"Definition {key} := {t[slice(*mdefs[key][1])]}." for key in ("E", "e", "Y")]
        zl = "Zl0" if same_z else "Zrows n d H dh T E e WQ WK prec kexp"
        batch += [f"Module M{k}."] + parts + [
            f"Definition r := let Zl := {zl} in ({k}%nat, rank_check d H T prec Zl cols Rwit, "
            "labels_check d H dv d_out T e WV WO WD skip prec Zl Y).", f"End M{k}.", f"Eval vm_compute in M{k}.r."]
    open(os.path.join(ref_out, "Mutants.v"), "w").write("\n".join(batch) + "\n")
    t0 = time.time()
    r = subprocess.run(["coqc", "-q", "-Q", ".", "Memcert", "Mutants.v"], cwd=ref_out, capture_output=True, text=True)
    os.remove(os.path.join(ref_out, "Mutants.v"))
    answers = {int(a): (b == "true", cc == "true")
               for a, b, cc in re.findall(r"=\s*\((\d+)%nat,\s*(true|false),\s*(true|false)\)", r.stdout)}
    print(f"by reference: coqc Mutants.v ({len(muts)} mutants of Data.v): exit {r.returncode} in {time.time() - t0:.1f} s (wall)")
    if r.returncode != 0 or len(answers) != len(muts):
        fail(f"by reference: Mutants.v: coqc exit {r.returncode}, {len(answers)} answers for {len(muts)} mutants: {r.stderr[-500:]}")
        return
    for k, (name, _) in enumerate(muts):
        rank_ok, labels_ok = answers[k]
        if expected[k] is None:
            fail(f"by reference: mutant {name}: the float forward pass is too close to tell")
        elif expected[k] != (rank_ok and labels_ok):
            fail(f"by reference: mutant {name}: Coq {'accepts' if rank_ok and labels_ok else 'rejects'}, "
                 f"the float forward pass {'keeps' if expected[k] else 'breaks'} the truth")
        if "rank < T" in name and rank_ok:
            fail(f"by reference: mutant {name}: the rank check holds with two equal rows of Z")
    print(f"by reference: {expected.count(False)} of {len(muts)} Data.v mutants change the truth; Coq agrees on every one")
    if expected.count(False) < 5:
        fail(f"by reference: only {expected.count(False)} mutants change the truth")


by_reference()

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
