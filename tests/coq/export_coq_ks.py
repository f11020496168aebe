#!/usr/bin/env python3
"""`memcert export coq` of ks25 certificates (kind ks), judged by Coq's kernel (docs/COQ.md).

usage: export_coq_ks.py MEMCERT WORKDIR

1. Small data sets (n = 3, 4 and 5, so the attention's mean is not always dyadic) go through `memcert
   generate ks`, `construct ks` (Theorem 4.1, Theorem D.1 with --deep-sets, Corollary 4.1 with
   --seq2seq), then `memcert export coq`; each directory's check.sh must exit 0 with "Closed under the global context" (no axiom).
   Network.v and Data.v are read back here (a parser of their own) and must hold exactly the
   certificate's numbers; the network they describe, evaluated here with Python's exact fractions (an
   evaluation independent of memcert and of Coq), must map every sequence to its label.
2. Mutants (>= 100 that change some prediction): one weight, one bias (f1 or f2), one label, or one token
   of one sequence changed, written into the exported .v files. Coq evaluates MemcertKs.check on every
   mutant (one coqc run for all of them); its answer must be true exactly when the Python evaluation
   finds every sequence still mapped to its label. So Coq rejects every mutant that changes a
   prediction (and accepts the ones that do not). Three mutated directories go through check.sh itself.
3. The same mutations through the certificate: the JSON changed at the same place (checksum and
   complexity figures recomputed, so that the checker judges the network), then `memcert verify`: the
   checker's memorization verdict (a prediction stage that fails, or not) must equal Coq's on every
   mutant; a mutant the checker accepts is exported and check.sh accepts it; one it rejects is refused
   by the export (exit 1, nothing written).
4. Sequence to sequence: mutated directories (a label at one position, a weight or bias of f2's last
   layer) rejected by check.sh exactly when the Python evaluation finds a changed prediction.
5. The ablation's collision certificate is refused (exit 2, nothing written).
6. Data by reference (N = 100): `construct ks --data-ref on` with the data file named relative to the
   certificate's directory, exported from another working directory (the file found beside the
   certificate, as `verify` finds it): its .v files equal the embedded certificate's export up to the
   comments, check.sh accepts it; a forged digest, an edited data file and a missing one are refused
   with verify's exit status (1, 1, 2) and nothing written; mutants of its Data.v (a label, a token of
   a sequence) make Coq's check false exactly when the Python evaluation finds a changed prediction,
   and one mutated directory is rejected by check.sh.
7. Exits 77 (ctest: skipped) with one line when coqc is absent.
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


# ---------------------------------------------------------------------------------------------------
# A reader of the exported Network.v / Data.v: every integer literal with its position in the text.

class Lit:
    def __init__(self, value, start, end):
        self.value, self.start, self.end = value, start, end


def strip_comments(text):
    out, i, depth = list(text), 0, 0
    while i < len(text):
        if text.startswith("(*", i):
            depth += 1
            out[i] = out[i + 1] = " "
            i += 2
        elif depth and text.startswith("*)", i):
            depth -= 1
            out[i] = out[i + 1] = " "
            i += 2
        else:
            if depth and out[i] != "\n":
                out[i] = " "
            i += 1
    return "".join(out)


TOKEN = re.compile(r"\s*(?:(-?\d+)|(\[)|(\])|(;)|(%nat|%N)|([A-Za-z_][A-Za-z_0-9]*))")


def parse_expr(text, pos):
    """An integer, a list, or `Layer e e e e`; returns (value, pos)."""
    m = TOKEN.match(text, pos)
    if not m:
        raise ValueError("parse error at %d" % pos)
    if m.group(1):
        return Lit(int(m.group(1)), m.start(1), m.end(1)), m.end()
    if m.group(2):
        items, pos = [], m.end()
        m2 = TOKEN.match(text, pos)
        if m2 and m2.group(3):
            return items, m2.end()
        while True:
            v, pos = parse_expr(text, pos)
            items.append(v)
            m2 = TOKEN.match(text, pos)
            if m2.group(4):
                pos = m2.end()
                continue
            if m2.group(3):
                pos = m2.end()
                m3 = TOKEN.match(text, pos)
                if m3 and m3.group(5):
                    pos = m3.end()
                return items, pos
            raise ValueError("parse error at %d" % pos)
    if m.group(6) == "Layer":
        pos, fields = m.end(), []
        for _ in range(4):
            v, pos = parse_expr(text, pos)
            fields.append(v)
        return {"W": fields[0], "sW": fields[1], "b": fields[2], "sb": fields[3]}, pos
    raise ValueError("unexpected token %r" % m.group(0))


_READ = {}  # read_definitions' answers by text: each mutated text is read once, each unchanged one once


def read_definitions(text, spans=None):
    """name -> parsed value; `spans` (a dict) receives name -> (start, end) of `Definition ... .`."""
    if text not in _READ:
        clean = strip_comments(text)
        defs, where = {}, {}
        for m in re.finditer(r"Definition (\w+) : [^=]*:=", clean):
            if m.group(1) == "net":
                continue
            defs[m.group(1)], end = parse_expr(clean, m.end())
            where[m.group(1)] = (m.start(), clean.index(".", end) + 1)
        _READ[text] = (defs, where)
    defs, where = _READ[text]
    if spans is not None:
        spans.update(where)
    return defs


def lits(v):
    if isinstance(v, Lit):
        return [v]
    if isinstance(v, dict):
        return lits(v["W"]) + [v["sW"]] + lits(v["b"]) + [v["sb"]]
    return [x for item in v for x in lits(item)]


def val(v):
    return v.value if isinstance(v, Lit) else [val(x) for x in v]


def model_of(net_defs, data_defs):
    """The network and data the .v files state, as exact fractions."""
    def layers(ls):
        return [([[Fraction(x, 2 ** val(L["sW"])) for x in row] for row in val(L["W"])],
                 [Fraction(x, 2 ** val(L["sb"])) for x in val(L["b"])]) for L in ls]
    ts = 2 ** val(data_defs["token_scale"])
    return {"f1": layers(net_defs["f1_layers"]), "f2": layers(net_defs["f2_layers"]),
            "wov": [[Fraction(x, 2 ** val(net_defs["WOV_scale"])) for x in row] for row in val(net_defs["WOV"])],
            "tokens": [[Fraction(x, ts) for x in t] for t in val(data_defs["tokens"])],
            "sequences": val(data_defs["sequences"]), "labels": val(data_defs["labels"])}


def model_of_cert(c):
    def layers(ls):
        return [([[Fraction(x) for x in row] for row in L["W"]], [Fraction(x) for x in L["b"]]) for L in ls]
    net = c["network"]
    return {"f1": layers(net["f1"]), "f2": layers(net["f2"]),
            "wov": [[Fraction(x) for x in row] for row in net["attention"]["WOV"]],
            "tokens": [[Fraction(x) for x in t] for t in c["tokens"]],
            "sequences": c["sequences"], "labels": c["labels"]}


# ---------------------------------------------------------------------------------------------------
# The network's meaning, evaluated with exact fractions (docs/papers/ks25.md; same as MemcertKs.v).

def net_eval(layers, x):
    for li, (W, b) in enumerate(layers):
        y = [sum((w * h for w, h in zip(row, x)), Fraction(0)) + bi for row, bi in zip(W, b)]
        x = y if li + 1 == len(layers) else [max(Fraction(0), v) for v in y]
    return x


# net_eval's values by (network, input), the network named by its numbers: a mutant evaluates again only
# what its change can reach (every network it changes, every sequence whose input it changes); what it
# leaves equal is the same exact computation on the same numbers, looked up instead of repeated.
_NETWORKS, _VALUES = {}, {}


def network_id(layers):
    key = tuple((tuple(map(tuple, W)), tuple(b)) for W, b in layers)
    return _NETWORKS.setdefault(key, len(_NETWORKS))


def net_eval_known(net, layers, x):
    key = (net, tuple(x))
    if key not in _VALUES:
        _VALUES[key] = net_eval(layers, x)
    return _VALUES[key]


def predictions(model, s2s=False):
    """Next token: one prediction per sequence (attending from its last token); seq-to-seq: a list per
    sequence, position p attending from token p."""
    n1, n2 = network_id(model["f1"]), network_id(model["f2"])
    f1 = {}
    out = []
    for s in model["sequences"]:
        for t in s:
            if t not in f1:
                f1[t] = net_eval_known(n1, model["f1"], model["tokens"][t])
        n = len(s)
        mean = [sum(f1[t][j] for t in s) / n for j in range(3)]
        pooled = [sum(model["wov"][r][j] * mean[j] for j in range(3)) for r in range(3)]
        at = [net_eval_known(n2, model["f2"], [f1[t][r] + pooled[r] for r in range(3)])[0]
              for t in (s if s2s else s[-1:])]
        out.append(at if s2s else at[0])
    return out


def memorizes(model, s2s=False):
    if len(model["sequences"]) != len(model["labels"]):
        return False
    if s2s:
        return all(len(ys) == len(p) and all(a == b for a, b in zip(p, ys))
                   for p, ys in zip(predictions(model, True), model["labels"]))
    return all(p == y for p, y in zip(predictions(model), model["labels"]))


# ---------------------------------------------------------------------------------------------------
# The certificate's derived numbers, recomputed after a mutation (check_ks.cpp: checksum, complexity).

def qbits(q):
    a = abs(q.numerator).bit_length() if q != 0 else 0
    b = 0 if q.denominator == 1 else q.denominator.bit_length()
    return max(a, b)


def fix_certificate(c):
    net = c["network"]
    pos, checksum, nonzero, bits = 0, Fraction(0), 0, 0

    def visit(x):
        nonlocal pos, checksum, nonzero, bits
        pos += 1
        q = Fraction(x)
        if q != 0:
            checksum += q * pos
            nonzero += 1
            bits = max(bits, qbits(q))

    for part in ("f1", "attention", "f2"):
        if part == "attention":
            for row in net["attention"]["WOV"]:
                for x in row:
                    visit(x)
            continue
        for L in net[part]:
            for row in L["W"]:
                for x in row:
                    visit(x)
            for x in L["b"]:
                visit(x)
    c["checksum"] = str(checksum)
    c["complexity"]["nonzero_parameters"] = nonzero
    c["complexity"]["bit_complexity"] = bits


def frac_text(q):
    return str(q.numerator) if q.denominator == 1 else "%d/%d" % (q.numerator, q.denominator)


# ---------------------------------------------------------------------------------------------------

def have_coq():
    if shutil.which("coqc") is None:
        return "coqc not found"
    probe = os.path.join(WORK, "probe.v")
    with open(probe, "w") as f:
        f.write("From Coq Require Import ZArith QArith Qminmax List Lia.\n")
    if run(["coqc", "-q", probe], cwd=WORK).returncode != 0:
        return "coqc cannot load its standard library"
    return None


def export(cert, out):
    shutil.rmtree(out, ignore_errors=True)
    return run([MEMCERT, "export", "coq", cert, "--out", out, "--json"])


def check_dir(d):
    t0 = time.time()
    r = run(["sh", os.path.join(d, "check.sh")])
    return r, time.time() - t0


def main():
    os.makedirs(WORK, exist_ok=True)
    why = have_coq()
    if why:
        print("skipped:", why)
        return 77
    coqlib.use_compiled_library(WORK)
    rng = random.Random(20261127)

    # 1. Honest exports.
    instances = []
    for tag, gen, construct in [("t41", ["--N", "12", "--n", "5", "--d", "3", "--V", "16", "--C", "3", "--seed", "2"], []),
                                ("t41b", ["--N", "10", "--n", "4", "--d", "2", "--V", "9", "--C", "4", "--seed", "5"], []),
                                ("d1", ["--N", "12", "--n", "5", "--d", "3", "--V", "16", "--C", "3", "--seed", "2"], ["--deep-sets"]),
                                ("s2s", ["--N", "8", "--n", "3", "--d", "2", "--V", "8", "--C", "3", "--seed", "3", "--seq2seq"], [])]:
        data, cert, out = (os.path.join(WORK, tag + s) for s in (".data.json", ".cert.json", "_coq"))
        r = run([MEMCERT, "generate", "ks"] + gen + ["--out", data])
        if r.returncode != 0:
            fail("%s: generate ks exit %d: %s" % (tag, r.returncode, r.stderr.strip()))
            continue
        r = run([MEMCERT, "construct", "ks", data, "--out", cert] + construct)
        if r.returncode != 0:
            fail("%s: construct ks exit %d: %s" % (tag, r.returncode, r.stderr.strip()))
            continue
        r = export(cert, out)
        if r.returncode != 0:
            fail("%s: export exit %d: %s" % (tag, r.returncode, r.stderr.strip()))
            continue
        j = json.loads(r.stdout)
        if j.get("kind") != "ks" or not j.get("exported"):
            fail("%s: export JSON %r" % (tag, j))
        r, secs = check_dir(out)
        if r.returncode != 0 or "Closed under the global context" not in r.stdout:
            fail("%s: check.sh exit %d: %s %s" % (tag, r.returncode, r.stdout[-400:], r.stderr[-400:]))
        print("%s: check.sh accepted in %.1f s" % (tag, secs))
        c = json.load(open(cert))
        net_text = open(os.path.join(out, "Network.v")).read()
        data_text = open(os.path.join(out, "Data.v")).read()
        nd, dd = read_definitions(net_text), read_definitions(data_text)
        model = model_of(nd, dd)
        if model != model_of_cert(c):
            fail("%s: Network.v / Data.v do not hold the certificate's numbers" % tag)
        s2s = c["setting"] == "seq-to-seq"
        if not memorizes(model, s2s):
            fail("%s: the exported network does not map every sequence to its label (Python evaluation)" % tag)
        ks_text = open(os.path.join(out, "Ks.v")).read()
        theorem = ("Theorem memorizes : forall i p, (i < %d)%%nat -> (p < %d)%%nat -> predict_at net (X i) p == inject_Z (y i p)."
                   % (c["N"], c["n"]) if s2s else
                   "Theorem memorizes : forall i, (i < %d)%%nat -> predict net (X i) == inject_Z (y i)." % c["N"])
        if theorem not in ks_text:
            fail("%s: Ks.v does not state the theorem" % tag)
        instances.append({"tag": tag, "cert": cert, "out": out, "c": c, "nd": nd, "dd": dd,
                          "net_text": net_text, "data_text": data_text})
    if len(instances) < 4:
        fail("not every instance was exported")
        return 1

    # 2. Mutants in the .v files (on the two Theorem 4.1 instances).
    mutants = []  # (instance, file, literal, new value, kind, cert path)
    for inst in instances[:2]:
        nd, dd, c = inst["nd"], inst["dd"], inst["c"]
        C = c["C"]
        choices = {"weight": [], "bias": [], "label": [], "token": []}
        for part in ("f1", "f2"):
            for li, L in enumerate(nd[part + "_layers"]):
                for i, row in enumerate(L["W"]):
                    for j, lit in enumerate(row):
                        choices["weight"].append((part, li, "W", i, j, lit, val(L["sW"])))
                for i, lit in enumerate(L["b"]):
                    choices["bias"].append((part, li, "b", i, None, lit, val(L["sb"])))
        for i, lit in enumerate(dd["labels"]):
            choices["label"].append(("labels", i, lit))
        for i, s in enumerate(dd["sequences"]):
            for k, lit in enumerate(s):
                choices["token"].append(("sequences", i, k, lit))
        # Prefer the numbers that matter: non-zero weights (a zero weight of a row is often irrelevant).
        nz_weights = [w for w in choices["weight"] if w[5].value != 0]
        for kind, count in (("weight", 30), ("bias", 30), ("label", 10), ("token", 20)):
            pool = nz_weights if kind == "weight" else choices[kind]
            for ch in rng.sample(pool, min(count, len(pool))):
                if kind in ("weight", "bias"):
                    lit, scale = ch[5], ch[6]
                    delta = rng.choice([1, -1, 2, -2, 3]) * (2 ** scale if rng.random() < 0.7 else 1)
                    mutants.append((inst, "net", ch, lit.value + delta, kind))
                elif kind == "label":
                    lit = ch[2]
                    mutants.append((inst, "data", ch, (lit.value + rng.randint(1, C - 1)) % C, kind))
                else:
                    lit = ch[3]
                    V = len(dd["tokens"])
                    mutants.append((inst, "data", ch, (lit.value + rng.randint(1, V - 1)) % V, kind))

    def mutated_texts(m):
        inst, where, ch, new, kind = m
        lit = ch[5] if where == "net" else ch[-1]
        key = "net_text" if where == "net" else "data_text"
        t = inst[key]
        t = t[:lit.start] + str(new) + t[lit.end:]
        return (t, inst["data_text"]) if where == "net" else (inst["net_text"], t)

    expected = []
    for m in mutants:
        nt, dt = mutated_texts(m)
        expected.append(memorizes(model_of(read_definitions(nt), read_definitions(dt))))

    # One coqc run per instance, in its exported directory (check.sh compiled Network.v and Data.v
    # there): each mutant a module that redefines the one definition its change touched, with the
    # mutated text of the .v file, and evaluates MemcertKs.check on the result.
    t0 = time.time()
    answer_of = {}
    for inst in instances[:2]:
        batch = ["From Coq Require Import ZArith QArith List.", "Import ListNotations.",
                 "From Memcert Require Import MemcertKs Network Data.", "Local Open Scope Z_scope.", ""]
        ks = [k for k, m in enumerate(mutants) if m[0] is inst]
        for k in ks:
            m = mutants[k]
            nt, dt = mutated_texts(m)
            text = nt if m[1] == "net" else dt
            name = (m[2][0] + "_layers") if m[1] == "net" else m[2][0]
            spans = {}
            read_definitions(text, spans)
            a, e = spans[name]
            batch += ["Module M%d." % k, text[a:e],
                      "Definition r := check (Network f1_layers WOV WOV_scale f2_layers) token_scale tokens sequences labels.",
                      "End M%d." % k, "Eval vm_compute in M%d.r." % k, ""]
        path = os.path.join(inst["out"], "Mutants.v")
        with open(path, "w") as f:
            f.write("\n".join(batch))
        r = run(["coqc", "-q", "-Q", ".", "Memcert", "Mutants.v"], cwd=inst["out"])
        answers = re.findall(r"=\s*(true|false)\s*:\s*bool", r.stdout)
        os.remove(path)
        if r.returncode != 0 or len(answers) != len(ks):
            fail("Mutants.v: coqc exit %d, %d answers for %d mutants: %s" % (r.returncode, len(answers), len(ks), r.stderr[-500:]))
            return 1
        for k, a in zip(ks, answers):
            answer_of[k] = a == "true"
    print("%d mutants evaluated by Coq in %.1f s" % (len(mutants), time.time() - t0))
    coq = [answer_of[k] for k in range(len(mutants))]
    changed = sum(1 for e in expected if not e)
    for k, (m, e, q) in enumerate(zip(mutants, expected, coq)):
        if e != q:
            fail("mutant %d (%s %s -> %d): Python evaluation says memorized=%s, Coq's check %s" %
                 (k, m[4], m[2][:-1] if m[1] == "data" else m[2][:5], m[3], e, q))
    by_kind = {}
    for m, e in zip(mutants, expected):
        by_kind.setdefault(m[4], [0, 0])[0 if e else 1] += 1
    print("mutants that change a prediction, rejected by Coq: %d (%s); unchanged, accepted by Coq: %d" %
          (changed, ", ".join("%s %d" % (k, v[1]) for k, v in sorted(by_kind.items())), len(mutants) - changed))
    if changed < 100:
        fail("only %d mutants change a prediction (want >= 100)" % changed)

    # check.sh itself on three mutated directories (a weight, a label, a token of a sequence).
    shown = 0
    for kind in ("weight", "label", "token"):
        k = next((k for k, m in enumerate(mutants) if m[4] == kind and not expected[k]), None)
        if k is None:
            continue
        m = mutants[k]
        d = os.path.join(WORK, "mutdir_" + kind)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(m[0]["out"], d)
        nt, dt = mutated_texts(m)
        open(os.path.join(d, "Network.v"), "w").write(nt)
        open(os.path.join(d, "Data.v"), "w").write(dt)
        r, secs = check_dir(d)
        if r.returncode == 0:
            fail("check.sh accepted the %s mutant %d" % (kind, k))
        shown += 1
    if shown != 3:
        fail("expected three mutated directories, ran %d" % shown)

    # 3. The same mutations through the certificate, judged by memcert's checker.
    t0 = time.time()
    prediction_stage = re.compile(r"^(prediction for sequence|sequence \d+: equal context, different label)")
    later_stage = re.compile(r"^(eq\. \(55\)|complexity\.)")
    exported_ok = refused = 0
    for k, (m, q) in enumerate(zip(mutants, coq)):
        inst, where, ch, new, kind = m
        c = json.loads(json.dumps(inst["c"]))
        if where == "net":
            part, li, field, i, j, lit, scale = ch
            value = frac_text(Fraction(new, 2 ** scale))
            if field == "W":
                c["network"][part][li]["W"][i][j] = value
            else:
                c["network"][part][li]["b"][i] = value
        elif kind == "label":
            c["labels"][ch[1]] = new
        else:
            c["sequences"][ch[1]][ch[2]] = new
        fix_certificate(c)
        path = os.path.join(WORK, "mutant%d.cert.json" % k)
        json.dump(c, open(path, "w"))
        r = run([MEMCERT, "verify", path, "--json"])
        if r.returncode not in (0, 1):
            fail("mutant %d: verify exit %d: %s" % (k, r.returncode, r.stderr.strip()[-300:]))
            continue
        v = json.loads(r.stdout)
        reason = v.get("reason", "")
        if r.returncode == 0:
            checker = True
        elif prediction_stage.match(reason):
            checker = False
        elif later_stage.match(reason):
            checker = True  # every prediction passed before this stage
        else:
            fail("mutant %d: the checker rejected it for a reason before the predictions: %s" % (k, reason))
            continue
        if checker != q:
            fail("mutant %d (%s): the checker says memorized=%s (%s), Coq %s" % (k, kind, checker, reason, q))
        out = os.path.join(WORK, "mutant_export")
        if r.returncode == 1 and refused < 5:
            e = export(path, out)
            if e.returncode != 1 or os.path.exists(out):
                fail("mutant %d: export of a rejected certificate: exit %d, directory written: %s" %
                     (k, e.returncode, os.path.exists(out)))
            refused += 1
        elif exported_ok < 2:
            e = export(path, out)
            rr, _ = check_dir(out) if e.returncode == 0 else (e, 0)
            if e.returncode != 0 or rr.returncode != 0:
                fail("mutant %d: accepted by the checker, but export exit %d / check.sh exit %d" %
                     (k, e.returncode, rr.returncode))
            exported_ok += 1
    print("through the certificate: %d mutants re-checked by memcert verify (same verdict as Coq), "
          "%d refused by the export, %d exported and accepted by check.sh (%.1f s)" %
          (len(mutants), refused, exported_ok, time.time() - t0))

    # 4. Sequence to sequence: a label at one position, or a weight of f2's last layer, changed in the
    # exported directory; check.sh rejects exactly the ones the Python evaluation says change a prediction.
    inst = instances[3]
    shown = 0
    for trial in range(40):
        if shown >= 3:
            break
        if trial % 2 == 0:
            i = rng.randrange(len(inst["dd"]["labels"]))
            p = rng.randrange(len(inst["dd"]["labels"][i]))
            lit = inst["dd"]["labels"][i][p]
            new = (lit.value + 1) % inst["c"]["C"]
            nt, dt = inst["net_text"], inst["data_text"][:lit.start] + str(new) + inst["data_text"][lit.end:]
        else:
            L = inst["nd"]["f2_layers"][-1]
            lit = rng.choice(lits(L["W"]) + lits(L["b"]))
            new = lit.value + rng.choice([1, -1]) * 2 ** max(val(L["sW"]), val(L["sb"]))
            nt, dt = inst["net_text"][:lit.start] + str(new) + inst["net_text"][lit.end:], inst["data_text"]
        keeps = memorizes(model_of(read_definitions(nt), read_definitions(dt)), True)
        d = os.path.join(WORK, "s2s_mutant")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(inst["out"], d)
        open(os.path.join(d, "Network.v"), "w").write(nt)
        open(os.path.join(d, "Data.v"), "w").write(dt)
        r, secs = check_dir(d)
        if (r.returncode == 0) != keeps:
            fail("seq-to-seq mutant %d: Python evaluation memorized=%s, check.sh exit %d" % (trial, keeps, r.returncode))
        shown += 0 if keeps else 1
    if shown < 3:
        fail("seq-to-seq: fewer than three mutants changed a prediction")

    # 5. What the export refuses: the ablation's collision is bad input, nothing written.
    data, cert, out = (os.path.join(WORK, "abl" + s) for s in (".data.json", ".cert.json", "_coq"))
    run([MEMCERT, "generate", "ks", "--N", "200", "--n", "4", "--d", "1", "--V", "9", "--C", "3", "--out", data])
    if run([MEMCERT, "construct", "ks", data, "--ablation", "linear-phi", "--out", cert]).returncode == 1 and \
            os.path.exists(cert):
        e = export(cert, out)
        if e.returncode != 2 or os.path.exists(out) or len(e.stderr.strip().splitlines()) != 1:
            fail("ablation export: exit %d, written %s, stderr %r" % (e.returncode, os.path.exists(out), e.stderr))
    else:
        fail("ablation certificate not built")

    by_reference(rng)

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("export_coq_ks: all passed")
    return 0


def by_reference(rng):
    """6. A certificate that references its data file, against the same data embedded."""
    home = os.path.join(WORK, "ref")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    r = run([MEMCERT, "generate", "ks", "--N", "100", "--n", "4", "--d", "3", "--V", "16", "--C", "3", "--seed", "4",
             "--out", "data.json"], cwd=home)
    r2 = run([MEMCERT, "construct", "ks", "data.json", "--out", "emb.cert.json"], cwd=home)
    r3 = run([MEMCERT, "construct", "ks", "data.json", "--data-ref", "on", "--out", "ref.cert.json"], cwd=home)
    if r.returncode or r2.returncode or r3.returncode:
        fail("by reference: generate / construct exits %d %d %d" % (r.returncode, r2.returncode, r3.returncode))
        return
    ref_cert, emb_cert = os.path.join(home, "ref.cert.json"), os.path.join(home, "emb.cert.json")
    c = json.load(open(ref_cert))
    if "sequences" in c or "labels" in c or c.get("data", {}).get("file") != "data.json":
        fail("by reference: the certificate does not reference data.json")
        return
    # Exported from WORK: "data.json" is not there, the export finds it beside the certificate.
    ref_out, emb_out = os.path.join(WORK, "ref_coq"), os.path.join(WORK, "emb_coq")
    if os.path.exists(os.path.join(WORK, "data.json")):
        os.remove(os.path.join(WORK, "data.json"))
    e = run([MEMCERT, "export", "coq", os.path.join("ref", "ref.cert.json"), "--out", ref_out, "--json"], cwd=WORK)
    if e.returncode != 0:
        fail("by reference: export exit %d: %s" % (e.returncode, e.stderr.strip()))
        return
    e = export(emb_cert, emb_out)
    if e.returncode != 0:
        fail("by reference: export of the embedded certificate exit %d: %s" % (e.returncode, e.stderr.strip()))
        return
    for f in ("Network.v", "Data.v", "Ks.v", "MemcertKs.v", "check.sh"):
        a, b = (open(os.path.join(o, f)).read() for o in (ref_out, emb_out))
        if re.sub(r"\s+", " ", strip_comments(a)) != re.sub(r"\s+", " ", strip_comments(b)):
            fail("by reference: %s differs from the embedded export's beyond its comments" % f)
    data_text = open(os.path.join(ref_out, "Data.v")).read()
    net_text = open(os.path.join(ref_out, "Network.v")).read()
    if c["data"]["digest"] not in data_text:
        fail("by reference: Data.v does not name the data's digest")
    nd, dd = read_definitions(net_text), read_definitions(data_text)
    model = model_of(nd, dd)
    emb = json.load(open(emb_cert))
    if model != model_of_cert(emb):
        fail("by reference: Data.v does not hold the data file's sequences and labels")
    if not memorizes(model):
        fail("by reference: the exported network does not memorize (Python evaluation)")
    rr, secs = check_dir(ref_out)
    if rr.returncode != 0 or "Closed under the global context" not in rr.stdout:
        fail("by reference: check.sh exit %d: %s %s" % (rr.returncode, rr.stdout[-400:], rr.stderr[-400:]))
    print("by reference (N = 100): exported, equal to the embedded export up to comments, check.sh accepted in %.1f s" % secs)

    # Refused before any export, with verify's exit status: a forged digest, an edited file, no file.
    bad = os.path.join(home, "bad")
    os.makedirs(bad, exist_ok=True)
    forged = json.loads(json.dumps(c))
    forged["data"]["digest"] = "sha256:" + ("0" * 64)
    json.dump(forged, open(os.path.join(bad, "forged.cert.json"), "w"))
    shutil.copy(os.path.join(home, "data.json"), os.path.join(bad, "data.json"))
    edited_home = os.path.join(bad, "edited")
    os.makedirs(edited_home, exist_ok=True)
    shutil.copy(ref_cert, os.path.join(edited_home, "ref.cert.json"))
    dj = json.load(open(os.path.join(home, "data.json")))
    key = "labels" if "labels" in dj else None
    if key is None:
        fail("by reference: the generated data file has no labels")
        return
    dj["labels"][7] = (dj["labels"][7] + 1) % 3
    json.dump(dj, open(os.path.join(edited_home, "data.json"), "w"))
    missing_home = os.path.join(bad, "missing")
    os.makedirs(missing_home, exist_ok=True)
    shutil.copy(ref_cert, os.path.join(missing_home, "ref.cert.json"))
    for what, cert, want in (("forged digest", os.path.join(bad, "forged.cert.json"), 1),
                             ("edited data file", os.path.join(edited_home, "ref.cert.json"), 1),
                             ("missing data file", os.path.join(missing_home, "ref.cert.json"), 2)):
        v = run([MEMCERT, "verify", cert], cwd=WORK)
        out = os.path.join(WORK, "refbad_coq")
        shutil.rmtree(out, ignore_errors=True)
        e = run([MEMCERT, "export", "coq", cert, "--out", out], cwd=WORK)
        if v.returncode != want or e.returncode != want or os.path.exists(out):
            fail("by reference, %s: verify exit %d, export exit %d (want %d), directory written: %s" %
                 (what, v.returncode, e.returncode, want, os.path.exists(out)))
        if want == 2 and len(e.stderr.strip().splitlines()) != 1:
            fail("by reference, %s: expected one line, got %r" % (what, e.stderr))

    # Mutants of the by-reference export's Data.v, judged by Coq in one run.
    mutants = []
    V = len(dd["tokens"])
    for i in rng.sample(range(len(dd["labels"])), 20):
        lit = dd["labels"][i]
        mutants.append((lit, (lit.value + rng.randint(1, 2)) % 3))
    for i in rng.sample(range(len(dd["sequences"])), 20):
        lit = dd["sequences"][i][rng.randrange(len(dd["sequences"][i]))]
        mutants.append((lit, (lit.value + rng.randint(1, V - 1)) % V))
    batch = ["From Coq Require Import ZArith QArith List.", "Import ListNotations.",
             "From Memcert Require Import MemcertKs Network Data.", "Local Open Scope Z_scope.", ""]
    expected = []
    texts = []
    for k, (lit, new) in enumerate(mutants):
        t = data_text[:lit.start] + str(new) + data_text[lit.end:]
        texts.append(t)
        expected.append(memorizes(model_of(nd, read_definitions(t))))
        spans = {}
        read_definitions(t, spans)
        parts = [t[slice(*spans[name])] for name in ("sequences", "labels")]
        batch += ["Module M%d." % k] + parts + [
            "Definition r := check net token_scale tokens sequences labels.", "End M%d." % k,
            "Eval vm_compute in M%d.r." % k, ""]
    with open(os.path.join(ref_out, "Mutants.v"), "w") as f:
        f.write("\n".join(batch))
    r = run(["coqc", "-q", "-Q", ".", "Memcert", "Mutants.v"], cwd=ref_out)
    os.remove(os.path.join(ref_out, "Mutants.v"))
    answers = [a == "true" for a in re.findall(r"=\s*(true|false)\s*:\s*bool", r.stdout)]
    if r.returncode != 0 or len(answers) != len(mutants):
        fail("by reference: Mutants.v: coqc exit %d, %d answers for %d mutants: %s" %
             (r.returncode, len(answers), len(mutants), r.stderr[-500:]))
        return
    for k, (e, q) in enumerate(zip(expected, answers)):
        if e != q:
            fail("by reference: mutant %d: Python evaluation memorized=%s, Coq's check %s" % (k, e, q))
    changed = expected.count(False)
    print("by reference: %d mutants of Data.v, %d change a prediction and are rejected by Coq" % (len(mutants), changed))
    if changed < 20:
        fail("by reference: only %d mutants change a prediction (want >= 20)" % changed)
    k = next((k for k, e in enumerate(expected) if not e), None)
    if k is not None:
        d = os.path.join(WORK, "ref_mutdir")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(ref_out, d)
        open(os.path.join(d, "Data.v"), "w").write(texts[k])
        rr, _ = check_dir(d)
        if rr.returncode == 0:
            fail("by reference: check.sh accepted mutant %d" % k)


if __name__ == "__main__":
    sys.exit(main())
