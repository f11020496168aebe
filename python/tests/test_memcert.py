"""Tests of the Python module against second methods written here in plain Python (Fraction arithmetic,
brute force over subsets, a float64 forward pass) and against the independent checker."""
import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

import memcert

# These tests take float data exactly on purpose; the command line's numerical-rank warning (which
# test_parity.py checks) is expected here.
pytestmark = pytest.mark.filterwarnings("ignore::memcert.NumericalWarning")


def fraction_rank(rows):
    """Rank by Gaussian elimination over Fractions: the second method for memcert.rank."""
    m = [[Fraction(x) for x in row] for row in rows]
    rank, cols = 0, len(m[0]) if m else 0
    for c in range(cols):
        pivot = next((i for i in range(rank, len(m)) if m[i][c] != 0), None)
        if pivot is None:
            continue
        m[rank], m[pivot] = m[pivot], m[rank]
        for i in range(len(m)):
            if i != rank and m[i][c] != 0:
                f = m[i][c] / m[rank][c]
                m[i] = [a - f * b for a, b in zip(m[i], m[rank])]
        rank += 1
    return rank


def exact_rows(a):
    """numpy entries as the exact rationals they store (float64 -> dyadic)."""
    return [[Fraction(float(x)) if isinstance(x, (float, np.floating)) else Fraction(int(x)) for x in row]
            for row in np.asarray(a).tolist()]


def test_version():
    assert memcert.__version__.count(".") == 2


@pytest.mark.parametrize("seed", range(6))
def test_rank_matches_fraction_elimination(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    a = rng.integers(-3, 4, size=(6, k)) @ rng.integers(-3, 4, size=(k, 7))  # rank <= k, int64
    r = memcert.rank(a)
    assert r.rank == r.rank_lower == r.rank_upper == fraction_rank(a.tolist())
    assert (r.rows, r.cols) == (6, 7)
    assert memcert.verify(r.certificate).valid


def test_float64_is_taken_exactly():
    # det = 2^-52: singular to a floating tolerance, full rank exactly.
    a = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-52]])
    assert np.linalg.matrix_rank(a) == 1
    assert memcert.rank(a).rank == 2 == fraction_rank(exact_rows(a))
    # 0.1 is the double nearest 1/10: 3 * 0.1 != 0.3 exactly, so this matrix has rank 2 exactly.
    b = np.array([[0.1, 0.3], [1.0, 3.0]])
    assert memcert.rank(b).rank == 2 == fraction_rank(exact_rows(b))
    assert memcert.rank(b.astype(np.float32)).rank == fraction_rank(exact_rows(b.astype(np.float32)))


def test_layouts_and_dtypes_agree():
    rng = np.random.default_rng(7)
    base = rng.integers(-5, 6, size=(5, 2)) @ rng.integers(-5, 6, size=(2, 8))
    want = fraction_rank(base.tolist())
    views = [base, np.asfortranarray(base), base.T.copy().T, base.astype(np.int32), base.astype(np.int8),
             base.astype(np.float64), base.astype(">f8"), base.astype(object), base.tolist()]
    for v in views:
        assert memcert.rank(v).rank == want
    wide = np.zeros((5, 16), dtype=np.int64)
    wide[:, ::2] = base
    assert memcert.rank(wide[:, ::2]).rank == want  # strided view, read in place
    assert memcert.rank(wide[:, 1::2]).rank == 0  # the zero columns in between
    assert memcert.rank(np.zeros((3, 3))).rank == 0


def test_object_arrays_hold_exact_fractions():
    a = np.array([[Fraction(1, 3), Fraction(2, 3)], [Fraction(1, 7), Fraction(2, 7)]], dtype=object)
    assert memcert.rank(a).rank == 1
    a[1, 1] = Fraction(2, 7) + Fraction(1, 10**30)
    assert memcert.rank(a).rank == 2


def test_bad_input_raises_one_line_value_error():
    with pytest.raises(ValueError) as e:
        memcert.rank(np.array([[1.0, math.nan]]))
    # The command line's message (it reads the array as a .npy file named after the argument).
    assert str(e.value).startswith("a: element [0][1]: expected a finite number") and "\n" not in str(e.value)
    with pytest.raises(ValueError, match=r"^a: expected a 2-d array"):
        memcert.rank(np.arange(3))
    with pytest.raises(ValueError, match=r"^a: .*expected an exact number"):
        memcert.rank(np.array([[1, "x"]], dtype=object))
    with pytest.raises(ValueError, match=r"^a: expected a non-empty matrix"):
        memcert.rank(np.zeros((0, 3)))


def test_tampered_certificate_is_rejected():
    r = memcert.rank(np.array([[1, 2], [2, 4]]))
    assert r.rank == 1
    cert = json.loads(json.dumps(r.certificate))
    cert["rank"] = 2
    v = memcert.verify(cert)
    assert not v.valid and v.reason
    assert memcert.verify(json.dumps(r.certificate)).valid


def test_verify_a_list_means_what_the_command_line_means(tmp_path):
    """verify([A, B, ...]) against `memcert verify A B ... --json` run by the executable: the same verdict,
    status, kind, claim and reason per certificate, in order, and the same overall exit status; bad input
    and an undecided check are results, the certificates after them still checked."""
    import subprocess
    r = memcert.rank(np.array([[1, 2], [2, 4]]))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(r.certificate))
    tampered = json.loads(json.dumps(r.certificate))
    tampered["rank_lower"] = tampered["rank_upper"] = 2
    tampered.pop("rank", None)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tampered))
    png = tmp_path / "image.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n")
    rows = [[str((i + 1) * (j + 2) % 97) for j in range(30)] for i in range(60)]
    over = tmp_path / "over.json"  # C(60, 12) subsets: over any budget, undecided from the estimate
    over.write_text(json.dumps({"kind": "kruskal", "claim": "kruskal-rank", "vectors": {"rows": 60, "cols": 30, "data": rows},
                                "kruskal_lower": 12, "lower": {"method": "exhaustive-mod-p", "prime": "1000000007"},
                                "kruskal_upper": 30, "upper": {"method": "trivial"}}))
    paths = [str(p) for p in (good, bad, png, over, good)]
    results = memcert.verify(paths)
    assert isinstance(results, memcert.VerifyResults) and len(results) == 5
    assert [x.exit_code for x in results] == [0, 1, 2, 3, 0]
    assert results[2].bad_input is True and "offset 0" in results[2].reason
    assert results.exit_code == 2 and not results.valid
    assert memcert.verify(paths[:2]).exit_code == 1 and memcert.verify([paths[1], paths[3]]).exit_code == 1
    assert memcert.verify([paths[0], paths[3]]).exit_code == 3
    both = memcert.verify((r.certificate, str(good)))  # a dict and a path, as verify takes one
    assert both.exit_code == 0 and both.valid
    with pytest.raises(ValueError):
        memcert.verify([])
    exe = memcert.executable()
    if not exe:
        pytest.skip("no memcert executable to compare with")
    cli = subprocess.run([exe, "--quiet", "verify", *paths, "--json"], capture_output=True, text=True)
    assert cli.returncode == results.exit_code
    lines = [json.loads(line) for line in cli.stdout.splitlines()]
    assert [j["certificate"] for j in lines] == paths
    for j, res in zip(lines, results):
        assert j["exit"] == res.exit_code
        for key in ("valid", "kind", "claim"):
            assert j[key] == res[key]
        assert j.get("bad_input", False) == res.get("bad_input", False)
        assert j.get("undecided", False) == res.get("undecided", False)
        if j["exit"] in (1, 3):
            assert j["reason"] == res.reason


def brute_kruskal(rows):
    """Largest k such that every k rows are independent: brute force over all subsets."""
    k = 0
    for size in range(1, len(rows) + 1):
        if all(fraction_rank([rows[i] for i in s]) == size for s in itertools.combinations(range(len(rows)), size)):
            k = size
        else:
            break
    return k


@pytest.mark.parametrize("seed", range(4))
def test_kruskal_matches_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    v = rng.integers(-2, 3, size=(7, 4))
    v[3] = v[0] + v[1]  # a dependent triple: Kruskal rank <= 2
    k = memcert.kruskal(v)
    assert k.kruskal_rank == brute_kruskal(v.tolist())
    assert memcert.verify(k.certificate).valid
    if k.dependent_subset:
        assert fraction_rank([v[i].tolist() for i in k.dependent_subset]) < len(k.dependent_subset)
    assert memcert.kruskal(v, at_least=k.kruskal_rank).holds is True
    assert memcert.kruskal(v, at_least=k.kruskal_rank + 1).holds is False
    assert memcert.kruskal(v, k.kruskal_rank).holds is True  # at_least stays the second positional argument


@pytest.mark.parametrize("seed", range(5))
def test_typed_route_matches_fraction_route(seed):
    """numpy arrays go to the engine's typed storage (int64 / float64); lists and object arrays take the
    exact rational route. Both must agree with each other and with Fraction elimination, on random,
    low-rank, one-ulp-off-singular and wide-exponent float inputs, and on strided / float32 layouts."""
    rng = np.random.default_rng(700 + seed)
    k = int(rng.integers(1, 6))
    low = (rng.integers(-3, 4, size=(9, k)) @ rng.integers(-3, 4, size=(k, 8))).astype(np.float64) / 8
    off = low.copy()
    off[0, 0] = np.nextafter(off[0, 0], np.inf)  # one ulp off an exact dependency: full rank exactly
    wide = low * np.ldexp(1.0, rng.integers(-60, 61, size=(9, 1)))  # rows scaled by 2^-60 .. 2^60
    wide[:, 0] += np.ldexp(1.0, -70)
    cases = [low, off, wide, low[::2, ::-1], low.astype(np.float32), (low * 8).astype(np.int64),
             (low * 8).astype(np.int16)]
    for a in cases:
        fast = memcert.rank(a)
        generic = memcert.rank(np.array(np.asarray(a).tolist(), dtype=object))  # Python numbers: rational reader
        assert fast.rank == generic.rank == fraction_rank(exact_rows(a))
        assert memcert.verify(fast.certificate).valid
    assert memcert.rank(low).storage == "float64"
    assert memcert.rank((low * 8).astype(np.int64)).storage == "int64"
    v = np.vstack([low[:5, :4], low[:1, :4] * 3])  # a parallel pair: Kruskal rank <= 1
    kv = memcert.kruskal(v)
    assert kv.kruskal_rank == memcert.kruskal(np.array(v.tolist(), dtype=object)).kruskal_rank == brute_kruskal(exact_rows(v))
    assert memcert.verify(kv.certificate).valid


def small_attention_data(T=5, n=3, d=4, seed=3):
    rng = np.random.default_rng(seed)
    contexts = rng.integers(-4, 5, size=(T, n, d)).astype(np.float64)
    queries = rng.integers(-4, 5, size=(T, d)).astype(np.float64)
    return contexts, queries


def test_assumptions_agree_with_fraction_ranks():
    contexts, queries = small_attention_data()
    rep = memcert.assumptions(contexts, queries)
    every_context_full_rank = all(fraction_rank(c.tolist()) == c.shape[0] for c in contexts)
    assert rep["assumption2"]["holds"] == every_context_full_rank
    contexts[2, 2] = contexts[2, 0] + contexts[2, 1]  # context 2 loses rank: Assumption 2 must fail
    rep = memcert.assumptions(contexts, queries)
    assert rep["assumption2"]["holds"] is False and 2 in rep["assumption2"]["failing"]
    # The command line's message about the data set (written for it as a file named after the argument).
    with pytest.raises(ValueError, match=r"^dataset: queries"):
        memcert.assumptions(contexts, queries[:, :3])


def forward_float(weights, E, e):
    """The attention layer in float64 (plain numpy, not memcert's code): the second method for labels."""
    o_cat = []
    for h in weights.heads:
        K, Q, V = (np.asarray(h[k], dtype=float) for k in ("WK", "WQ", "WV"))
        a = E @ (K @ (Q.T @ e))
        alpha = np.exp(a - a.max())
        alpha /= alpha.sum()
        o_cat.append(V.T @ (E.T @ alpha))
    o = np.asarray(weights.WO, dtype=float).T @ np.concatenate(o_cat)
    return np.asarray(weights.WD, dtype=float).T @ o


def test_construct_theorem1_weights_reproduce_labels():
    H, n, d, dh = 2, 3, 4, 3
    T = H * (min(n, dh) - 1) + 1
    contexts, queries = small_attention_data(T=T, n=n, d=d)
    labels = np.arange(T, dtype=np.float64).reshape(T, 1) / 4
    res = memcert.construct_theorem1(contexts, queries, labels, heads=H, dh=dh)
    assert res.memorized and res.verified and res.T == T
    assert res.rank_Z_lower == T
    assert memcert.verify(res.certificate).valid
    assert len(res.weights.heads) == H and res.weights.heads[0]["WK"].shape == (d, dh)
    assert isinstance(res.weights.WO[0, 0], Fraction)
    for t in range(T):
        y = forward_float(res.weights, contexts[t], queries[t])
        assert abs(y[0] - labels[t, 0]) < 1e-3


def test_paper_names_and_earlier_names_are_the_same_commands():
    """construct_mahdavi24 / construct_theorem1, construct_ks25 / construct_ks, generate_mahdavi24 /
    generate_theorem1 and generate_ks25 / generate_ks: the same certificates and data sets (the engine
    writes kinds theorem1 and ks under either name)."""
    H, n, d, dh = 2, 3, 4, 3
    T = H * (min(n, dh) - 1) + 1
    contexts, queries = small_attention_data(T=T, n=n, d=d)
    labels = np.arange(T, dtype=np.float64).reshape(T, 1) / 4
    def timeless(cert):
        return {k: v for k, v in cert.items() if "seconds" not in k}

    new = memcert.construct_mahdavi24(contexts, queries, labels, heads=H, dh=dh)
    old = memcert.construct_theorem1(contexts, queries, labels, heads=H, dh=dh)
    assert new.certificate["kind"] == "theorem1" and timeless(new.certificate) == timeless(old.certificate)
    g_new = memcert.generate_ks25(N=8, n=3, d=2, C=2, seed=5, out=None)
    g_old = memcert.generate_ks(N=8, n=3, d=2, C=2, seed=5, out=None)
    assert all(np.array_equal(g_new.load()[k], g_old.load()[k]) for k in g_old.load())
    k_new = memcert.construct_ks25(g_new.out)
    k_old = memcert.construct_ks(g_old.out)
    assert k_new.certificate["kind"] == "ks" and timeless(k_new.certificate) == timeless(k_old.certificate)
    m_new = memcert.generate_mahdavi24(T=5, n=2, d=3, seed=2)
    m_old = memcert.generate_theorem1(T=5, n=2, d=3, seed=2)
    assert all(np.array_equal(m_new.load()[k], m_old.load()[k]) for k in m_old.load())


def test_generate_ks25_layout_tokens_is_the_same_data_set():
    """layout="tokens" means what --layout tokens means: token_ids + embedding spelling out the same
    sequences and labels as the default layout, and construct_ks25 from either file certifies the same
    data (equal digests)."""
    import numpy as np
    s = memcert.generate_ks25(N=40, n=3, d=2, V=9, C=3, seed=6)
    t = memcert.generate_ks25(N=40, n=3, d=2, V=9, C=3, seed=6, layout="tokens")
    a, b = s.load(), t.load()
    assert sorted(b.files) == ["embedding", "labels", "token_ids"]
    assert np.array_equal(b["embedding"][b["token_ids"]], a["sequences"]) and np.array_equal(a["labels"], b["labels"])
    digests = [memcert.construct_ks25(g.out, data_ref="on").certificate["data"]["digest"] for g in (s, t)]
    assert digests[0] == digests[1]
    with pytest.raises(ValueError, match="--layout"):
        memcert.generate_ks25(N=4, n=2, d=2, layout="sideways")


def test_construct_theorem1_hypothesis_failure_has_witness():
    contexts, queries = small_attention_data(T=5, n=3, d=4)
    contexts[1] = 0  # a context of rank 0
    with pytest.raises(memcert.HypothesisFailure) as e:
        memcert.construct_theorem1(contexts, queries, None, heads=2, dh=3)
    assert isinstance(e.value.witness, dict)


def test_labels_real_and_class_labels_keyword():
    # One contract: labels= are REAL labels (an integer dtype too, said in .notes), class_labels= classes.
    H, n, d, dh = 2, 3, 4, 3
    T = H * (min(n, dh) - 1) + 1
    contexts, queries = small_attention_data(T=T, n=n, d=d)
    ints = np.array([0, 2, 1, 3, 1], dtype=np.int64)[:T]
    real = memcert.construct_theorem1(contexts, queries, ints, heads=H, dh=dh)
    assert real.memorized and real.verified and "max_label_error" in real and "min_class_margin" not in real
    assert any("read as REAL labels" in note for note in real.notes)
    assert real.certificate["data"]["labels"] == [[str(int(v))] for v in ints]
    for t in range(T):  # the read-out reproduces the integer VALUES (regression), checked in float64
        assert abs(forward_float(real.weights, contexts[t], queries[t])[0] - ints[t]) < 1e-3
    cls = memcert.construct_theorem1(contexts, queries, heads=H, dh=dh, class_labels=ints)
    assert cls.memorized and cls.verified and "min_class_margin" in cls and cls.notes == []
    assert cls.certificate["data"]["class_labels"] == [int(v) for v in ints]
    for t in range(T):  # arg-max memorization: the largest output is the class
        assert int(np.argmax(forward_float(cls.weights, contexts[t], queries[t]))) == ints[t]
    # The same keyword beside a dict, and both at once refused.
    d2 = memcert.construct_theorem1({"contexts": contexts, "queries": queries}, heads=H, dh=dh, class_labels=ints)
    assert "min_class_margin" in d2
    with pytest.raises(ValueError):
        memcert.construct_theorem1(contexts, queries, ints.astype(float), heads=H, dh=dh, class_labels=ints)
    # assumptions takes both and ignores them (even labels no command could use).
    a = memcert.assumptions(contexts, queries, class_labels=[0] * T)
    assert a.T == T
    b = memcert.assumptions(contexts, queries, labels=np.zeros((T + 1, 1)))
    assert b.T == T


def tensors_digest(arrays):
    """The digest of named arrays' values (docs/CERTIFICATES.md, kind "model"), written here again."""
    import hashlib
    h = hashlib.sha256(("memcert-tensors-v1 %d\n" % len(arrays)).encode())
    for name in sorted(arrays, key=lambda s: s.encode()):
        a = np.asarray(arrays[name])
        h.update((name + "\n" + str(a.ndim) + "".join(" %d" % k for k in a.shape) + "\n").encode())
        h.update((a.astype("<f8").ravel() + 0.0).tobytes())  # -0 as +0
    return "sha256:" + h.hexdigest()


def test_verify_model_certificate(tmp_path):
    # A mahdavi24-baseline model whose decoder weight is zero: every logit vector is the decoder bias
    # (1, 0, 0), so an example is correct (margin 1) exactly when its class is 0 -- known without a forward pass.
    rng = np.random.default_rng(5)
    T, n, d, H = 12, 4, 3, 2
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)
    model = {"embedding.weight": f(d, d), "embedding.bias": f(d), "pos_enc.pe": f(8, d), "attention.Wq": f(H, d, 2),
             "attention.Wk": f(H, d, 2), "attention.Wv": f(H, d, 1), "attention.Wo": f(H, d),
             "decoder.weight": np.zeros((3, d), np.float32), "decoder.bias": np.array([1, 0, 0], np.float32)}
    y = np.arange(T) % 3
    data = {"X": f(T, n + 1, d), "y": y}
    np.savez(tmp_path / "model.npz", **model)
    np.savez(tmp_path / "data.npz", **data)
    cert = {"kind": "model", "version": 1, "claim": "certified predictions of a trained model",
            "arch": "mahdavi24-baseline", "task": "classification",
            "model": {"file": str(tmp_path / "model.npz"), "digest": tensors_digest(model)},
            "data": {"file": str(tmp_path / "data.npz"), "digest": tensors_digest(data)},
            "T": T, "wrong": [t for t in range(T) if y[t] != 0], "undecided": [], "min_margin": "1"}
    v = memcert.verify(cert)
    assert v.valid, v.reason
    assert (v.certified_correct, v.certified_wrong, v.undecided) == (4, 8, 0)
    cert["min_margin"] = "1.000001"
    assert not memcert.verify(cert).valid
    cert["min_margin"] = "1"
    cert["wrong"] = cert["wrong"][1:]
    v = memcert.verify(cert)
    assert not v.valid and v.reason.startswith("example 1:")
