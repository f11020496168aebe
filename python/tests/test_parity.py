"""The Python functions mean what the command line means: each result's to_json() equals the object
`memcert ... --json` prints on the same input (run as a separate process), the exit codes map to the
same verdicts / exceptions, and results stay readable (repr bound, HTML table)."""
import json
import os
import re
import subprocess
import warnings
from fractions import Fraction

import numpy as np
import pytest

import memcert

EXE = memcert.executable()
needs_exe = pytest.mark.skipif(not EXE, reason="the memcert executable is needed for the parity tests")

# Keys that differ between two runs of the same command: wall-clock times and the thread count default.
VOLATILE = {"seconds", "timings"}


def cli(*args):
    """`memcert ARGS... --json` as a subprocess: (exit code, JSON object or None, stderr)."""
    p = subprocess.run([EXE, *map(str, args), "--json"], capture_output=True, text=True, timeout=600)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    return p.returncode, (json.loads(lines[-1]) if lines else None), p.stderr


def stable(j):
    return {k: v for k, v in j.items() if k not in VOLATILE and not k.endswith("_seconds")}


def low_rank_float(rows=8, cols=6, k=2, seed=0):
    """Float data of numerical rank k whose stored values have full exact rank (rounding noise)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, k)) @ rng.standard_normal((k, cols)) / 3


def attention_npz(tmp_path, T=5, n=3, d=4, seed=3, labels=True, name="d.npz"):
    rng = np.random.default_rng(seed)
    arrays = {"contexts": rng.integers(-4, 5, size=(T, n, d)).astype(np.float64),
              "queries": rng.integers(-4, 5, size=(T, d)).astype(np.float64)}
    if labels:
        arrays["labels"] = (np.arange(T, dtype=np.float64) / 4).reshape(T, 1)
    path = tmp_path / name
    np.savez(path, **arrays)
    return path, arrays


# ---- parity --------------------------------------------------------------------------------------------

@needs_exe
def test_rank_parity_and_numerical_warning(tmp_path):
    a = low_rank_float()
    np.save(tmp_path / "a.npy", a)
    code, want, _ = cli("rank", tmp_path / "a.npy")
    with pytest.warns(memcert.NumericalWarning):
        r = memcert.rank(a)
    assert code == r.exit_code == 0
    assert stable(r.to_json()) == stable(want)
    # The CLI's meaning: exact rank 6 of the stored values, numerical rank 2 said next to it.
    assert r.rank == 6 and r.numerical_rank == 2 == np.linalg.matrix_rank(a) and r.warning
    assert r.warnings == [r.warning]
    # A path is passed through unchanged: the same object again.
    with pytest.warns(memcert.NumericalWarning):
        assert stable(memcert.rank(tmp_path / "a.npy").to_json()) == stable(want)


@needs_exe
def test_rank_float16_and_float32_parity(tmp_path):
    a = np.array([[1, 2, 3], [2, 4, 6.5], [0.5, 1, 1.5]], dtype=np.float16)
    np.save(tmp_path / "h.npy", a)
    assert stable(memcert.rank(a).to_json()) == stable(cli("rank", tmp_path / "h.npy")[1])
    assert memcert.rank(a).rank == 2
    b = low_rank_float(5, 5, 5, seed=4).astype(np.float32)
    np.save(tmp_path / "f.npy", b)
    assert stable(memcert.rank(b).to_json()) == stable(cli("rank", tmp_path / "f.npy")[1])


@needs_exe
def test_kruskal_parity(tmp_path):
    rng = np.random.default_rng(5)
    v = rng.integers(-2, 3, size=(7, 4))
    v[3] = v[0] + v[1]
    np.save(tmp_path / "v.npy", v)
    for extra in ([], ["--at-least", "3"], ["--sample", "3", "--trials", "5", "--seed", "2"]):
        code, want, _ = cli("kruskal", tmp_path / "v.npy", *extra)
        kw = {}
        for flag, value in zip(extra[::2], extra[1::2]):
            kw[flag[2:].replace("-", "_")] = int(value)
        got = memcert.kruskal(v, **kw)
        assert got.exit_code == code and stable(got.to_json()) == stable(want), extra
    assert memcert.kruskal(v, at_least=3).verdict is False


@needs_exe
def test_assumptions_parity_keeps_numerical_block(tmp_path):
    rng = np.random.default_rng(11)
    T, n, d = 6, 3, 5
    contexts = rng.standard_normal((T, n, d))
    contexts[5, 2] = contexts[5, 0] + contexts[5, 1] * (1 + 1e-15)  # rounding-level rank deficiency
    queries = rng.standard_normal((T, d))
    np.savez(tmp_path / "e.npz", contexts=contexts, queries=queries)
    code, want, _ = cli("assumptions", tmp_path / "e.npz")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rep = memcert.assumptions(contexts, queries)
        except memcert.Undecided as e:  # exit 3 (Assumption 1 undecided): the report is in .result
            rep = e.result
    assert rep.exit_code == code
    assert stable(rep.to_json()) == stable(want)
    assert "numerical" in rep and rep["numerical"]["contexts_rank_below_n"] == [5]
    if rep["assumption2"]["holds"]:
        assert any(issubclass(w.category, memcert.NumericalWarning) for w in caught)


@needs_exe
def test_construct_theorem1_parity(tmp_path):
    path, arrays = attention_npz(tmp_path)
    out = tmp_path / "cli.cert.json"
    code, want, _ = cli("construct", "theorem1", path, "--heads", 2, "--dh", 3, "--out", out)
    got = memcert.construct_theorem1(arrays["contexts"], arrays["queries"], arrays["labels"], heads=2, dh=3)
    assert got.exit_code == code == 0
    assert stable(got.to_json()) == stable(want)
    got_path = memcert.construct_theorem1(path, heads=2, dh=3, out=tmp_path / "py.cert.json")
    assert stable(got_path.to_json()) == stable(want)
    assert json.load(open(tmp_path / "py.cert.json")) == json.load(open(out)) == got_path.certificate


@needs_exe
def test_construct_theorem1_beyond_T_star_is_the_cli_meaning(tmp_path):
    # T = 9 > T* = H(r-1)+1 = 5: the CLI reports all 9 (memorized only when all are certified), never T*.
    path, arrays = attention_npz(tmp_path, T=9, n=3, d=6, seed=8)
    out = tmp_path / "c.json"
    code, want, _ = cli("construct", "theorem1", path, "--heads", 2, "--dh", 3, "--out", out)
    got = memcert.construct_theorem1(arrays["contexts"], arrays["queries"], arrays["labels"], heads=2, dh=3)
    assert got.exit_code == code and stable(got.to_json()) == stable(want)
    assert got.T == 9 and got.T_star == 5
    assert got.memorized_count + len(got.not_memorized) == 9
    assert got.verdict is (code == 0)


@needs_exe
def test_verify_parity_path_dict_and_text(tmp_path):
    r = memcert.rank(np.array([[1, 2], [2, 4]]), cert=tmp_path / "r.json")
    code, want, _ = cli("verify", tmp_path / "r.json")
    for arg in (tmp_path / "r.json", str(tmp_path / "r.json"), r.certificate, json.dumps(r.certificate)):
        v = memcert.verify(arg)
        assert v.valid and v.exit_code == code == 0
        assert stable(v.to_json()) == stable(want)
    bad = dict(r.certificate, rank_upper=2)
    json.dump(bad, open(tmp_path / "bad.json", "w"))
    code, want, _ = cli("verify", tmp_path / "bad.json")
    v = memcert.verify(bad)
    assert code == 1 and v.valid is False and v.verdict is False and stable(v.to_json()) == stable(want)


@needs_exe
@pytest.mark.parametrize("kind,opts", [("theorem1", dict(T=5, n=3, d=4, seed=2)), ("shared", dict(T=5, n=3, d=4)),
                                       ("general", dict(T=5, n=3, d=4, C=3)), ("ks", dict(N=6, n=3, d=2, seed=1)),
                                       ("dana24", dict(N=3, S=2, T=4, seed=1)), ("pe", dict(n=4, d=6))])
def test_generate_parity(tmp_path, kind, opts):
    suffix = ".npy" if kind == "pe" else ".json"
    args = []
    for k, v in opts.items():
        args += ["--" + k, v]
    code, want, _ = cli("generate", kind, *args, "--out", tmp_path / ("cli" + suffix))
    got = memcert.generate(kind, out=tmp_path / ("cli" + suffix), **opts)
    assert got.exit_code == code == 0 and stable(got.to_json()) == stable(want)
    assert stable(getattr(memcert, "generate_" + kind)(out=tmp_path / ("cli" + suffix), **opts).to_json()) == stable(want)


@needs_exe
def test_construct_ks_and_dana24_parity(tmp_path):
    memcert.generate_ks(N=6, n=3, d=2, seed=1, out=tmp_path / "ks.json")
    code, want, _ = cli("construct", "ks", tmp_path / "ks.json", "--out", tmp_path / "ks.cert.json")
    got = memcert.construct_ks(tmp_path / "ks.json")
    assert got.exit_code == code and stable(got.to_json()) == stable(want)
    assert got.certificate == json.load(open(tmp_path / "ks.cert.json"))
    memcert.generate_dana24(N=3, S=2, T=4, seed=1, out=tmp_path / "dana.json")
    code, want, _ = cli("construct", "dana24", tmp_path / "dana.json", "--heads", 1, "--dh", 2,
                        "--out", tmp_path / "dana.cert.json")
    got = memcert.construct_dana24(tmp_path / "dana.json", heads=1, dh=2)
    assert got.exit_code == code and stable(got.to_json()) == stable(want)


@needs_exe
def test_claims_parity(tmp_path):
    code, want, _ = cli("claims", "list")
    got = memcert.claims_list()
    assert got.exit_code == code and stable(got.to_json()) == stable(want)
    first = want["claims"][0]["id"]
    code, want, _ = cli("claims", "run", first, "--instances", 1, "--seed", 3)
    got = memcert.claims_run(first, instances=1, seed=3)
    assert got.exit_code == code and stable(got.to_json()) == stable(want)
    code, want, _ = cli("claims", "search", "mahdavi24/lemma-3", "--budget", 2, "--seed", 1)
    got = memcert.claims_search("mahdavi24/lemma-3", budget=2, seed=1)
    assert got.exit_code == code and stable(got.to_json()) == stable(want)
    with pytest.raises(ValueError, match="expected a claim with a search mode"):
        memcert.claims_search("mahdavi24/lemma-1", budget=2)


@needs_exe
def test_sweep_parity(tmp_path):
    spec = {"task": "theorem1", "grid": {"H": [1, 2], "n": [2], "d": [3], "dh": [2], "T": [2]}, "seeds": [1]}
    json.dump(spec, open(tmp_path / "spec.json", "w"))
    code, want, err = cli("sweep", tmp_path / "spec.json", "--out", tmp_path / "cli")
    assert code == 0, err
    got = memcert.sweep(spec, tmp_path / "py")
    drop = VOLATILE | {"out", "results"}  # the output directories differ
    assert got.exit_code == code
    assert {k: v for k, v in got.to_json().items() if k not in drop} == {k: v for k, v in want.items() if k not in drop}
    rows = [json.loads(l) for l in open(tmp_path / "py" / "results.jsonl")]
    assert len(rows) == 2 and [r["verdict"] for r in rows] == [json.loads(l)["verdict"] for l in open(
        tmp_path / "cli" / "results.jsonl")]


def test_option_names_are_the_command_lines():
    """Every keyword is a command-line option: the names come from the command's own --help."""
    assert {"heads", "dh", "dv", "skip", "seed", "tolerance", "c", "beyond", "data_ref", "fit", "no_saturation",
            "no_check", "out", "weights_out", "max_seconds", "max_memory"} <= memcert._core.command_options(
        ["construct", "theorem1"])
    assert {"key", "tol", "cert"} <= memcert._core.command_options(["rank"])
    assert {"at_least", "sample", "trials", "seed"} <= memcert._core.command_options(["kruskal"])
    import inspect
    params = inspect.signature(memcert.construct_theorem1).parameters
    assert {"contexts", "queries", "labels", "heads", "dh", "weights_out", "progress"} <= set(params)


def test_array_copies_go_after_the_run_outputs_stay():
    r = memcert.rank(np.eye(4))
    wd = r._workdir.path
    assert not any(f.startswith("a-") for f in os.listdir(wd))  # the .npy copy of the argument
    assert r.certificate["kind"] == "rank"  # the certificate the command wrote, read on demand


# ---- errors --------------------------------------------------------------------------------------------

def test_bad_input_is_value_error_with_the_cli_line(tmp_path):
    (tmp_path / "x.json").write_text("[[1, 2], [3]]")
    with pytest.raises(ValueError) as e:
        memcert.rank(tmp_path / "x.json")
    msg = str(e.value)
    assert "\n" not in msg and "x.json" in msg and not msg.startswith("memcert:")
    if EXE:
        code, _, err = cli("rank", tmp_path / "x.json")
        assert code == 2 and err.strip() == "memcert: " + msg
    with pytest.raises(ValueError, match="cannot open"):
        memcert.verify(tmp_path / "missing.cert.json")


def test_strings_reach_the_command_as_text_under_its_decimals_rule():
    # "0.1" is exactly 1/10 by default and the double nearest it under decimals="double" (FORMATS.md).
    a = [["0.1", "0.3"], ["1", "3"]]
    assert memcert.rank(a).rank == 1
    with pytest.warns(memcert.NumericalWarning):
        assert memcert.rank(a, decimals="double").rank == 2  # 3 * double(0.1) != double(0.3)
    assert memcert.rank(np.array(a)).rank == 1  # a numpy str array too


def test_keyword_typo_names_the_close_match_never_the_data():
    contexts = np.full((5, 3, 4), 123456.789)
    queries = np.zeros((5, 4))
    with pytest.raises(TypeError) as e:
        memcert.construct_theorem1(contexts, queries, None, head=2, dh=3)
    msg = str(e.value)
    assert "'head'" in msg and "did you mean 'heads'" in msg
    assert "123456" not in msg and len(msg) < 200
    with pytest.raises(TypeError, match="did you mean 'weights_out'"):
        memcert.construct_theorem1(contexts, queries, None, heads=2, dh=3, weight_out="w.npz")


def test_hypothesis_failure_and_undecided():
    rng = np.random.default_rng(3)
    contexts = rng.integers(-4, 5, size=(5, 3, 4)).astype(float)
    queries = rng.integers(-4, 5, size=(5, 4)).astype(float)
    contexts[1] = 0
    with pytest.raises(memcert.HypothesisFailure) as e:
        memcert.construct_theorem1(contexts, queries, None, heads=2, dh=3)
    assert isinstance(e.value.witness, dict) and e.value.result.memorized is False
    assert isinstance(e.value, ValueError)
    # Kruskal rank of 40 generic vectors in 12 dimensions >= 12: out of an enumeration budget of 1 -> exit 3.
    v = np.random.default_rng(1).integers(-50, 50, size=(40, 12))
    with pytest.raises(memcert.Undecided) as u:
        memcert.assumptions(np.repeat(v[:, None, :], 1, axis=1), v, budget=1)
    assert u.value.result is not None and u.value.result["assumption1"]["holds"] is None
    assert str(u.value).startswith("Assumption 1") and "undecided" in str(u.value)


def test_max_seconds_stops_in_process_without_killing():
    v = np.random.default_rng(2).integers(-50, 50, size=(60, 16))
    with pytest.raises(memcert.Undecided, match="max-seconds"):
        memcert.kruskal(v, max_seconds=0.2)
    assert memcert.rank(np.eye(2)).rank == 2  # the interpreter is alive and the module usable


def test_progress_callback_and_interrupt():
    v = np.random.default_rng(2).integers(-50, 50, size=(60, 16))
    seen = []

    def cb(label, done, total):
        seen.append((label, done, total))
        if len(seen) >= 3:
            raise KeyboardInterrupt  # what Ctrl-C raises in the callback's thread

    with pytest.raises(KeyboardInterrupt):
        memcert.kruskal(v, progress=cb)
    assert seen and all(isinstance(t, int) for _, _, t in seen)
    assert memcert.kruskal(np.eye(3), progress=False).kruskal_rank == 3


def test_ctrl_c_interrupts_a_long_call():
    """SIGINT (what Ctrl-C sends) during a long enumeration: KeyboardInterrupt within about a second, and
    the interpreter and the module stay usable."""
    import signal
    import threading
    import time
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        v = np.random.default_rng(2).integers(-50, 50, size=(60, 16))  # about 20 s of enumeration
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        start = time.process_time()  # CPU time: a loaded machine stretches the wall clock, not the work
        with pytest.raises(KeyboardInterrupt):
            memcert.kruskal(v, progress=False, max_seconds=60)
        assert time.process_time() - start < 5
    finally:
        signal.signal(signal.SIGINT, old)
    assert memcert.rank(np.eye(3)).rank == 3


def test_progress_goes_to_tqdm_when_installed(monkeypatch):
    import sys
    import types
    bars = []

    class FakeTqdm:
        def __init__(self, total, desc, leave):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            bars.append(self)

        def refresh(self):
            pass

        def close(self):
            self.closed = True

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    v = np.random.default_rng(2).integers(-50, 50, size=(30, 8))
    memcert.kruskal(v, sample=8, trials=50)
    assert bars and all(b.closed for b in bars) and any("Kruskal" in b.desc for b in bars)


def test_nested_call_from_a_progress_callback_is_refused():
    def cb(label, done, total):
        memcert.rank(np.eye(2))

    v = np.random.default_rng(2).integers(-50, 50, size=(30, 8))
    with pytest.raises(RuntimeError, match="nest"):
        memcert.kruskal(v, sample=8, trials=50, progress=cb)


# ---- display -------------------------------------------------------------------------------------------

def test_repr_is_one_screen_and_html_is_a_table(tmp_path):
    big = np.random.default_rng(0).integers(-9, 9, size=(100, 100))
    r = memcert.rank(big)
    assert len(repr(r)) <= memcert.results.REPR_LIMIT and "rank" in repr(r)
    h = r._repr_html_()
    assert h.startswith("<table") and "href" not in h and "http" not in h
    # A T* = 29 construction (H = 4, r = 8): its certificate is large, its repr is not.
    rng = np.random.default_rng(4)
    contexts = rng.integers(-3, 4, size=(29, 8, 12)).astype(float)
    queries = rng.integers(-3, 4, size=(29, 12)).astype(float)
    c = memcert.construct_theorem1(contexts, queries, None, heads=4, dh=8, no_saturation=True)
    assert c.T_star == 29 and len(repr(c)) <= memcert.results.REPR_LIMIT
    assert len(json.dumps(c.certificate)) > 10 * len(repr(c))
    assert "memorized" in c._repr_html_()


def test_not_memorized_list_is_truncated_in_repr():
    rng = np.random.default_rng(9)
    T = 40
    contexts = rng.integers(-3, 4, size=(T, 2, 3)).astype(float)
    queries = rng.integers(-3, 4, size=(T, 3)).astype(float)
    c = memcert.construct_theorem1(contexts, queries, None, heads=1, dh=2, beyond="off", no_saturation=True)
    assert c.memorized is False and len(c.not_memorized) == T - c.T_star
    assert "in all)" in repr(c) and len(repr(c)) <= memcert.results.REPR_LIMIT
