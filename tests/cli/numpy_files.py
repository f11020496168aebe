"""Files memcert writes for numpy users, checked by loading them with numpy itself (the second method):

  python3 tests/cli/numpy_files.py <memcert-binary> <source-dir>

- `generate ... --out x.npz` writes an archive numpy.load reads, holding exactly the numbers of the JSON
  version of the same data set (same seed), with real labels as `labels` and classes as `class_labels`;
- a data set written with numpy (np.savez: float64 real labels of shape (T,), or int64 class labels)
  is read back by `construct theorem1` with the meaning the file format documents;
- `--weights-out` writes float64 weights whose forward pass (examples/load_weights.py) reproduces every
  certified label, and the layout of PyTorch's nn.MultiheadAttention agrees with the per-head layout.
Prints "N passed, M failed" last; exits 1 on failure."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

import numpy as np

BIN, SRC = sys.argv[1], sys.argv[2]
WORK = tempfile.mkdtemp(prefix="memcert_numpy.")
passed = failed = 0


def check(desc, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s %s" % (desc, detail), file=sys.stderr)


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def path(name):
    return os.path.join(WORK, name)


def assumptions_json(name, *opts):
    """`memcert --quiet assumptions NAME.npz OPTS --json`: (exit code, JSON without "seconds")."""
    rc, out, _ = run("--quiet", "assumptions", path(name + ".npz"), *opts, "--json")
    j = json.loads(out) if out.strip() else {}
    j.pop("seconds", None)
    return rc, j


def exact(x):
    return Fraction(x) if isinstance(x, str) else Fraction(x)


# ---- generate writes .npz by suffix, numpy-readable, the same numbers as the JSON version ----------------
for kind, extra, label_key in [("theorem1", [], "labels"), ("general", ["--C", "3"], "class_labels")]:
    common = [kind, "--T", "9", "--n", "3", "--d", "5", "--seed", "4", *extra]
    rc1, _, e1 = run("generate", *common, "--out", path(kind + ".json"))
    rc2, _, e2 = run("generate", *common, "--out", path(kind + ".npz"))
    check("generate %s json/npz exit 0" % kind, rc1 == 0 and rc2 == 0, e1 + e2)
    j = json.load(open(path(kind + ".json")))
    z = np.load(path(kind + ".npz"))
    check("generate %s npz arrays" % kind, sorted(z.files) == sorted(["contexts", "queries", label_key]), z.files)
    check("generate %s npz dtype float64" % kind, all(z[k].dtype == np.float64 for k in z.files))
    check("generate %s contexts shape" % kind, z["contexts"].shape == (9, 3, 5), z["contexts"].shape)
    same = all(Fraction(float(a)) == exact(b) for a, b in zip(z["contexts"].ravel(), np.array(j["contexts"]).ravel()))
    same = same and all(Fraction(float(a)) == exact(b) for a, b in zip(z["queries"].ravel(), np.array(j["queries"]).ravel()))
    check("generate %s npz equals JSON exactly" % kind, same)
    if label_key == "class_labels":
        check("generate %s class labels" % kind, z["class_labels"].shape == (9,) and list(z["class_labels"]) == j["class_labels"])
    else:
        lab = np.array(j["labels"], dtype=object).ravel()
        check("generate %s real labels" % kind, z["labels"].shape == (9, 1) and
              all(Fraction(float(a)) == exact(b) for a, b in zip(z["labels"].ravel(), lab)))
rc, _, e = run("generate", "ks", "--N", "6", "--n", "3", "--d", "2", "--out", path("seq.npz"))
check("generate ks npz", rc == 0 and sorted(np.load(path("seq.npz")).files) == ["labels", "sequences"], e)
# --layout tokens: token_ids + embedding, the same sequences and labels as the spelled-out file (numpy's
# fancy indexing rebuilds them); and a compact file written by numpy itself (int8 ids, a repeated and an
# unused embedding row) is the data set its rows spell out: the same certificate as from np.savez(sequences).
for s2s in ([], ["--seq2seq"]):
    common = ["generate", "ks25", "--N", "50", "--n", "4", "--d", "3", "--V", "12", "--C", "3", "--seed", "4", *s2s]
    rc1, _, e1 = run(*common, "--out", path("lay_s.npz"))
    rc2, _, e2 = run(*common, "--layout", "tokens", "--out", path("lay_t.npz"))
    a, b = np.load(path("lay_s.npz")), np.load(path("lay_t.npz"))
    check("generate ks --layout tokens %s: arrays and dtypes" % s2s, rc1 == 0 and rc2 == 0 and
          sorted(b.files) == ["embedding", "labels", "token_ids"] and b["token_ids"].dtype == np.uint16 and
          b["embedding"].dtype == np.float64 and b["labels"].dtype == np.int64, (e1, e2, b.files))
    check("generate ks --layout tokens %s: embedding[token_ids] == sequences, same labels" % s2s,
          np.array_equal(b["embedding"][b["token_ids"]], a["sequences"]) and np.array_equal(b["labels"], a["labels"]))
rng = np.random.default_rng(3)
table = rng.integers(-4, 5, size=(5, 2)).astype(np.float64) / 2
table[3] = table[0]
ids = rng.choice(np.array([0, 1, 3, 4], dtype=np.int8), size=(30, 3))
labels = np.zeros(30, dtype=np.int64)
np.savez(path("np_t.npz"), token_ids=ids, embedding=table, labels=labels)
np.savez(path("np_s.npz"), sequences=table[ids], labels=labels)
certs = []
for name in ("np_t", "np_s"):
    rc, _, e = run("construct", "ks25", path(name + ".npz"), "--data-ref", "off", "--out", path(name + ".cert.json"))
    certs.append(json.load(open(path(name + ".cert.json"))) if rc == 0 else None)
    check("construct ks from numpy's %s.npz" % name, rc == 0, e)
check("numpy's compact and spelled-out files give the same certificate", certs[0] is not None and certs[0] == certs[1])
rc, out, e = run("generate", "theorem1", "--T", "3", "--n", "2", "--d", "3", "--out", path("one.npy"))
check("generate to .npy is bad input", rc == 2 and out == "" and len(e.strip().splitlines()) == 1 and
      not os.path.exists(path("one.npy")), (rc, e))

# ---- a data set written by numpy: real labels (T,) float64, and int64 class labels ----------------------
rng = np.random.default_rng(7)
T, n, d = 7, 3, 5
ctx = rng.standard_normal((T, n, d))
qry = rng.standard_normal((T, d))
np.savez(path("np_real.npz"), contexts=ctx, queries=qry, labels=rng.standard_normal(T))
rc, out, e = run("construct", "theorem1", path("np_real.npz"), "--heads", "3", "--dh", "3", "--out",
                 path("np_real_cert.json"), "--json")
j = json.loads(out) if rc in (0, 1) and out else {}
check("numpy real labels (T,): memorized, d_out = 1", rc == 0 and j.get("d_out") == 1 and j.get("memorized") is True, (rc, e))
np.savez(path("np_cls.npz"), contexts=ctx, queries=qry, class_labels=rng.integers(0, 3, T))
rc, out, e = run("construct", "theorem1", path("np_cls.npz"), "--heads", "3", "--dh", "3", "--out",
                 path("np_cls_cert.json"), "--json")
j = json.loads(out) if rc in (0, 1) and out else {}
check("numpy class labels: arg-max memorized", rc == 0 and "min_class_margin" in j and j.get("memorized") is True, (rc, e))
np.savez(path("np_both.npz"), contexts=ctx, queries=qry, labels=np.zeros(T), class_labels=np.zeros(T, dtype=np.int64))
rc, out, e = run("construct", "theorem1", path("np_both.npz"), "--heads", "3", "--dh", "3", "--out", path("x.json"))
check("numpy labels and class_labels: bad input", rc == 2 and "got both" in e and not os.path.exists(path("x.json")), (rc, e))

# ---- exact vs numerical rank: float32 low-rank matrix; np.save and np.savetxt of one matrix --------------
A = (rng.standard_normal((40, 5)) @ rng.standard_normal((5, 40))).astype(np.float32)
np.save(path("low32.npy"), A)
rc, out, e = run("rank", path("low32.npy"), "--json")
j = json.loads(out) if out else {}
ref = int(np.linalg.matrix_rank(A))  # numpy's default for a float32 array uses float32's eps
check("float32 low rank: numerical rank as numpy's, warning", rc == 0 and j.get("numerical_rank") == ref == 5 and
      j.get("rank", 0) > 5 and "numerical rank 5" in j.get("warning", ""), (rc, e, j))
rc, out, e = run("rank", path("low32.npy"))
check("float32 low rank: summary warns", rc == 0 and "warning: exact rank" in out, out)
rc, out, e = run("rank", path("low32.npy"), "--tol", "1e9", "--json")
check("--tol above every singular value: numerical rank 0", rc == 0 and json.loads(out).get("numerical_rank") == 0, (rc, e))
rc, out, e = run("rank", path("low32.npy"), "--tol", "-1")
check("--tol negative is bad input", rc == 2 and len(e.strip().splitlines()) == 1, (rc, e))
B = np.array([[0.1, 0.2], [0.3, 0.6]])  # rank 1 in decimals; the nearest doubles are not proportional
np.save(path("b.npy"), B)
np.savetxt(path("b.txt"), B)
rc1, o1, _ = run("rank", path("b.npy"), "--json")
rc2, o2, _ = run("rank", path("b.txt"), "--json")
r_bin = Fraction(0.1) * Fraction(0.6) - Fraction(0.2) * Fraction(0.3)  # det of the stored doubles (second method)
txt = [[Fraction(x) for x in line.split()] for line in open(path("b.txt"))]
r_txt = txt[0][0] * txt[1][1] - txt[0][1] * txt[1][0]
check("np.save: exact rank of the doubles", rc1 == 0 and json.loads(o1)["rank"] == (2 if r_bin != 0 else 1), o1)
check("np.savetxt: exact rank of the decimals", rc2 == 0 and json.loads(o2)["rank"] == (2 if r_txt != 0 else 1), o2)

# ---- --weights-out: float64 weights whose forward pass reproduces the certified labels ------------------
LOAD = os.path.join(SRC, "examples", "load_weights.py")
rc, out, e = run("construct", "theorem1", path("np_real.npz"), "--heads", "3", "--dh", "3", "--out", path("w_cert.json"),
                 "--weights-out", path("w.npz"), "--json")
j = json.loads(out) if out else {}
check("--weights-out written", rc == 0 and j.get("weights_out") == path("w.npz") and os.path.exists(path("w.npz")), (rc, e))
w = np.load(path("w.npz"))
shapes = {k: w[k].shape for k in w.files}
check("--weights-out names and shapes", shapes.get("WK") == (3, 5, 3) and shapes.get("WQ") == (3, 5, 3) and
      shapes.get("WV") == (3, 5, 1) and shapes.get("WO") == (3, 5) and shapes.get("WD") == (5, 1) and
      shapes.get("skip") == (), shapes)
# The float64 weights are the nearest doubles of the certificate's exact ones (second source: the certificate).
cert = json.load(open(path("w_cert.json")))
near = all(float(Fraction(cert["weights"]["heads"][h]["WK"][i][c])) == w["WK"][h, i, c]
           for h in range(3) for i in range(5) for c in range(3))
check("--weights-out holds the certificate's weights rounded to double", near)
# d = 5 is not divisible by H = 3: no PyTorch layout, and the JSON says why.
check("torch layout absent when H does not divide d", "torch_in_proj_weight" not in w.files and
      isinstance(j.get("torch_layout"), str), j.get("torch_layout"))
p = subprocess.run([sys.executable, LOAD, path("w.npz"), path("np_real.npz"), "--json"], capture_output=True, text=True)
r = json.loads(p.stdout) if p.stdout else {}
check("load_weights.py: every example memorized in float64", p.returncode == 0 and r.get("memorized_count") == T, p.stderr)
# The example script must be able to fail: labels shifted by 1e-3 are not memorized.
z = dict(np.load(path("np_real.npz")))
z["labels"] = z["labels"] + 1e-3
np.savez(path("np_shifted.npz"), **z)
p = subprocess.run([sys.executable, LOAD, path("w.npz"), path("np_shifted.npz"), "--json"], capture_output=True, text=True)
r = json.loads(p.stdout) if p.stdout else {}
check("load_weights.py: shifted labels are not memorized", p.returncode == 1 and r.get("memorized_count") == 0, p.stdout)

# PyTorch layout: H = 2 divides d = 6 and d_h = 3 <= d/H; both layouts give the same outputs, with the
# skip connection too, and class labels are reported by arg-max.
ctx6, qry6 = rng.standard_normal((5, 3, 6)), rng.standard_normal((5, 6))
np.savez(path("np6.npz"), contexts=ctx6, queries=qry6, class_labels=np.array([0, 2, 1, 2, 0]))
rc, out, e = run("construct", "theorem1", path("np6.npz"), "--heads", "2", "--dh", "3", "--skip", "--out",
                 path("w6_cert.json"), "--weights-out", path("w6.npz"), "--json")
j = json.loads(out) if out else {}
check("--weights-out with torch layout", rc == 0 and j.get("torch_layout") is True, (rc, e, j.get("torch_layout")))
sys.path.insert(0, os.path.dirname(LOAD))
import load_weights  # noqa: E402

w6 = dict(np.load(path("w6.npz")))
diff = max(float(np.max(np.abs(load_weights.forward_heads(w6, ctx6[t], qry6[t]) -
                               load_weights.forward_torch(w6, ctx6[t], qry6[t], 2)))) for t in range(5))
scale = max(float(np.max(np.abs(load_weights.forward_heads(w6, ctx6[t], qry6[t])))) for t in range(5))
check("torch layout agrees with the per-head layout", diff <= 1e-9 * max(1.0, scale), diff)
for layout in ("heads", "torch"):
    p = subprocess.run([sys.executable, LOAD, path("w6.npz"), path("np6.npz"), "--layout", layout, "--json"],
                       capture_output=True, text=True)
    r = json.loads(p.stdout) if p.stdout else {}
    check("load_weights.py %s layout: class labels memorized" % layout, p.returncode == 0 and r.get("memorized_count") == 5, p.stderr)
rc, out, e = run("construct", "theorem1", path("np6.npz"), "--heads", "2", "--dh", "3", "--out", path("y.json"),
                 "--weights-out", path("w6.txt"))
check("--weights-out must be .npz", rc == 2 and not os.path.exists(path("y.json")) and len(e.strip().splitlines()) == 1, (rc, e))


# ---- --decimals exact|double: one matrix written by np.save and by np.savetxt ---------------------------
def exact_rank(rows):
    """Rank over Q by fraction-exact Gaussian elimination (the second method)."""
    m = [list(r) for r in rows]
    rank = 0
    for c in range(len(m[0])):
        piv = next((i for i in range(rank, len(m)) if m[i][c] != 0), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        for i in range(len(m)):
            if i != rank and m[i][c] != 0:
                f = m[i][c] / m[rank][c]
                m[i] = [a - f * b for a, b in zip(m[i], m[rank])]
        rank += 1
    return rank


xs = np.array([0.1, 0.3, 0.7, 1.1])
Cm = np.outer(xs, [1.0, 2.0, 4.0, 0.5])  # powers of two: every row an exact multiple of xs, rank 1 as stored
np.save(path("c.npy"), Cm)
np.savetxt(path("c.txt"), Cm)
txt = [[Fraction(x) for x in line.split()] for line in open(path("c.txt"))]
rc1, o1, _ = run("rank", path("c.npy"), "--json")
rc2, o2, e2 = run("rank", path("c.txt"), "--json")
rc3, o3, e3 = run("rank", path("c.txt"), "--decimals", "double", "--json")
j1, j2, j3 = (json.loads(o) if o else {} for o in (o1, o2, o3))
check("np.save: rank 1 (second method: fractions)", rc1 == 0 and j1.get("rank") == 1 ==
      exact_rank([[Fraction(float(v)) for v in r] for r in Cm]), o1)
check("np.savetxt, --decimals exact: the decimals' exact rank", rc2 == 0 and j2.get("rank") == exact_rank(txt) > 1, (o2, e2))
check("np.savetxt, --decimals exact: the note counts 16 decimals no double holds",
      j2.get("decimals", {}).get("inexact_decimals") == 16 and j2["decimals"]["mode"] == "exact" and
      "--decimals double" in j2["decimals"]["note"], j2.get("decimals"))
check("np.savetxt, --decimals double: the same rank as np.save", rc3 == 0 and j3.get("rank") == j1.get("rank") == 1 and
      j3.get("decimals", {}).get("mode") == "double", (o3, e3))
rc, out, e = run("rank", path("c.txt"))
check("summary note on non-dyadic decimals", rc == 0 and "note: the input held 16 decimals that no double holds exactly, such as" in out, out)
rc, out, e = run("rank", path("c.npy"))
check("no note for binary input", rc == 0 and "note:" not in out, out)
with open(path("lit.json"), "w") as f:
    f.write('{"rows": 2, "cols": 2, "data": [[0.1, 0.5], ["0.25", 3]]}')
rc, out, e = run("rank", path("lit.json"), "--json")
jl = json.loads(out) if out else {}
check("JSON number literal 0.1: counted as inexact, 0.5 and \"0.25\" are not",
      rc == 0 and jl.get("decimals", {}).get("inexact_json_numbers") == 1 and
      jl["decimals"]["inexact_decimals"] == 0, (out, e))
rc, out, e = run("rank", path("c.txt"), "--decimals", "binary")
check("--decimals binary is bad input", rc == 2 and len(e.strip().splitlines()) == 1, (rc, e))
with open(path("huge.txt"), "w") as f:
    f.write("1e999 1\n2 3\n")
rc, out, e = run("rank", path("huge.txt"), "--json")
jh = json.loads(out) if out else {}
check("--decimals exact: 1e999 is an exact integer, rank 2, counted in the note", rc == 0 and jh.get("rank") == 2 and
      jh.get("decimals", {}).get("inexact_decimals") == 1, (rc, e, out))
rc, out, e = run("rank", path("huge.txt"), "--decimals", "double")
check("--decimals double: 1e999 beyond double range is bad input", rc == 2 and "line 1" in e and
      len(e.strip().splitlines()) == 1, (rc, e))

# ---- --weights-out beyond T* (generic weights), ks and dana24, loaded with numpy ------------------------
ctxg, qryg = rng.standard_normal((12, 3, 6)), rng.standard_normal((12, 6))
np.savez(path("npg.npz"), contexts=ctxg, queries=qryg, labels=rng.standard_normal(12))
rc, out, e = run("construct", "theorem1", path("npg.npz"), "--heads", "2", "--dh", "2", "--out", path("g_cert.json"),
                 "--weights-out", path("g.npz"), "--json")
j = json.loads(out) if out else {}
check("generic weights (T = 12 > T* = 3, H d = 12): all memorized", rc == 0 and j.get("method") == "generic" and
      j.get("memorized_count") == 12, (rc, e, out[:300]))
p = subprocess.run([sys.executable, LOAD, path("g.npz"), path("npg.npz"), "--json"], capture_output=True, text=True)
r = json.loads(p.stdout) if p.stdout else {}
check("load_weights.py: generic weights memorize all 12 in float64", p.returncode == 0 and r.get("memorized_count") == 12,
      (p.stdout, p.stderr))

rc, out, e = run("construct", "ks", path("seq.npz"), "--out", path("ks_cert.json"), "--weights-out", path("ks_w.npz"), "--json")
j = json.loads(out) if out else {}
check("construct ks --weights-out", rc == 0 and j.get("weights_out") == path("ks_w.npz"), (rc, e))
wk = np.load(path("ks_w.npz"))
check("ks weights names", "WOV" in wk.files and wk["WOV"].shape == (3, 3) and int(wk["f1_layers"]) >= 1 and
      all(("f1_W%d" % i) in wk.files and ("f1_b%d" % i) in wk.files for i in range(int(wk["f1_layers"]))), wk.files)
p = subprocess.run([sys.executable, LOAD, path("ks_w.npz"), path("seq.npz"), "--json"], capture_output=True, text=True)
r = json.loads(p.stdout) if p.stdout else {}
check("load_weights.py: ks network memorizes all 6 in float64", p.returncode == 0 and r.get("kind") == "ks" and
      r.get("memorized_count") == 6, (p.stdout, p.stderr))
rc, out, e = run("construct", "ks", path("seq.npz"), "--out", path("ks2.json"), "--weights-out", path("ks_w.txt"))
check("construct ks --weights-out must be .npz", rc == 2 and len(e.strip().splitlines()) == 1, (rc, e))

rc, _, e = run("generate", "dana24", "--N", "6", "--S", "3", "--T", "8", "--seed", "2", "--out", path("assoc.json"))
rc, out, e = run("construct", "dana24", path("assoc.json"), "--heads", "2", "--dh", "2", "--out", path("d_cert.json"),
                 "--weights-out", path("d_w.npz"), "--json")
check("construct dana24 --weights-out", rc == 0 and os.path.exists(path("d_w.npz")), (rc, e))
p = subprocess.run([sys.executable, LOAD, path("d_w.npz"), path("assoc.json"), "--json"], capture_output=True, text=True)
r = json.loads(p.stdout) if p.stdout else {}
check("load_weights.py: dana24 memorizes all 8 in float64", p.returncode == 0 and r.get("kind") == "dana24" and
      r.get("memorized_count") == 8, (p.stdout, p.stderr))
aj = json.load(open(path("assoc.json")))
aj["next"] = [(x + 1) % 6 for x in aj["next"]]  # the script must be able to fail: every next token changed
json.dump(aj, open(path("assoc_wrong.json"), "w"))
p = subprocess.run([sys.executable, LOAD, path("d_w.npz"), path("assoc_wrong.json"), "--json"], capture_output=True, text=True)
r = json.loads(p.stdout) if p.stdout else {}
check("load_weights.py: dana24 with changed next tokens is not memorized", p.returncode == 1 and r.get("memorized_count") == 0,
      p.stdout)

# ---- assumptions on float32 data (contexts kept as float32 by the reader) = the same data as float64 ---------
rng32 = np.random.default_rng(32)
ctx32 = rng32.standard_normal((12, 4, 6)).astype(np.float32)
ctx32[7, 3] = ctx32[7, 0] + ctx32[7, 1]  # a rank-deficient context among full-rank ones (exact in float32? checked below)
ctx32[9, 2] = ctx32[2, 1]                 # two equal tokens
qry32 = rng32.standard_normal((12, 6)).astype(np.float32)
np.savez(path("f32.npz"), contexts=ctx32, queries=qry32)
np.savez(path("f64.npz"), contexts=ctx32.astype(np.float64), queries=qry32.astype(np.float64))
np.savez_compressed(path("f32z.npz"), contexts=ctx32, queries=qry32)
outs = {(name, mode): assumptions_json(name, "--separation", mode)
        for name in ("f32", "f64", "f32z") for mode in ("auto", "on", "off")}
# Every exact answer is the same for the three files; numpy's ranks of the contexts (next to them) use the
# stored dtype's eps, as numpy.linalg.matrix_rank does, so they are compared with numpy's per file.
def without_numerical(o):
    return (o[0], {k: v for k, v in o[1].items() if k != "numerical"})
for mode in ("auto", "on", "off"):
    check("assumptions float32 = float64 (--separation %s)" % mode,
          without_numerical(outs[("f32", mode)]) == without_numerical(outs[("f64", mode)]) == without_numerical(outs[("f32z", mode)]),
          (outs[("f32", mode)], outs[("f64", mode)]))
    for name, ctx in (("f32", ctx32), ("f32z", ctx32), ("f64", ctx32.astype(np.float64))):
        want = [t for t in range(len(ctx)) if int(np.linalg.matrix_rank(ctx[t])) < ctx.shape[1]]
        got = outs[(name, mode)][1].get("numerical", {}).get("contexts_rank_below_n")
        check("assumptions %s: numerical ranks of the contexts as numpy's (--separation %s)" % (name, mode), got == want, (got, want))
exact_deficient = all(Fraction(float(a)) + Fraction(float(b)) == Fraction(float(c)) for a, b, c in zip(ctx32[7, 0], ctx32[7, 1], ctx32[7, 3]))
j = outs[("f32", "on")][1]
check("assumptions float32: failing contexts", j.get("assumption2", {}).get("failing") == ([7] if exact_deficient else []), j.get("assumption2"))
check("assumptions float32: delta^2 the same when computed (auto, on), null when off",
      outs[("f32", "auto")][1]["separation"]["delta2"] == j["separation"]["delta2"] is not None and
      outs[("f32", "off")][1]["separation"]["delta2"] is None and outs[("f32", "off")][1]["separation"]["computed"] is False,
      [outs[("f32", m)][1].get("separation") for m in ("auto", "on", "off")])
rc, _, e = run("assumptions", path("f32.npz"), "--separation", "sometimes")
check("assumptions --separation sometimes is bad usage", rc == 2 and len(e.strip().splitlines()) == 1, (rc, e))

# ---- float32 contexts large enough to be read in place (a mapped stored member, 17 MB at byte 190 of the
# archive) give the report of the same values read as float64 and from a compressed archive -------------------
rngm = np.random.default_rng(33)
ctxm = rngm.standard_normal((700, 8, 768)).astype(np.float32)
ctxm[5, 7] = ctxm[5, 0]  # a context of exact rank 7: Assumption 2 fails there, numerically too
qrym = rngm.standard_normal((700, 768)).astype(np.float32)
np.savez(path("m32.npz"), contexts=ctxm, queries=qrym)
np.savez(path("m64.npz"), contexts=ctxm.astype(np.float64), queries=qrym.astype(np.float64))
np.savez_compressed(path("m32z.npz"), contexts=ctxm, queries=qrym)
outm = {name: assumptions_json(name, "--separation", "off") for name in ("m32", "m64", "m32z")}
check("assumptions: float32 read in place = float64 = compressed float32", outm["m32"] == outm["m64"] == outm["m32z"],
      (outm["m32"], outm["m64"]))
check("assumptions read in place: the deficient context found exactly and numerically",
      outm["m32"][0] == 1 and outm["m32"][1].get("assumption2", {}).get("failing") == [5] and
      outm["m32"][1].get("numerical", {}).get("contexts_rank_below_n") == [5], outm["m32"][1].get("numerical"))

# A bus error (what reading a mapped file that shrank raises) is reported as bad input, not a crash: memcert
# is held reading a FIFO whose writer (this script) sends nothing, and sent SIGBUS.
fifo = path("held.npz")
os.mkfifo(fifo)
writer = os.open(fifo, os.O_RDWR)  # a connected writer: memcert's read waits for data
proc = subprocess.Popen([BIN, "assumptions", fifo], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(1.0)
proc.send_signal(signal.SIGBUS)
out, e = proc.communicate(timeout=30)
os.close(writer)
check("SIGBUS while reading: exit 2 with one line", proc.returncode == 2 and len(e.strip().splitlines()) == 1 and
      "shrank" in e, (proc.returncode, e))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
