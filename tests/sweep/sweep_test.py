#!/usr/bin/env python3
"""End-to-end tests of `memcert sweep` (plain python3, no numpy).

    python3 tests/sweep/sweep_test.py MEMCERT [--mpi MPIEXEC]

Without --mpi: the single-process contract. Every certified number is checked against a second method:
T_certified against the theorem's H(min(n, d_h)-1)+1 computed here from the cell's parameters, and every
certificate the sweep kept is re-verified by `memcert verify` (the independent checker). Resume is checked
by deleting done markers and by killing a running sweep; bad specs must give exit 2 and one line.
With --mpi: a spec written here (not one from the repository) runs single-process and under
`MPIEXEC -n 2 --oversubscribe`, and the merged results.jsonl must be identical apart from "seconds".
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
MPI = sys.argv[sys.argv.index("--mpi") + 1] if "--mpi" in sys.argv else None
WORK = tempfile.mkdtemp(prefix="memcert_sweep.")
FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL:", what, file=sys.stderr)


def write_spec(name, spec):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def sweep(spec_path, out, *extra, launcher=()):
    p = subprocess.run([*launcher, BIN, "sweep", spec_path, "--out", out, "--json", *extra],
                       capture_output=True, text=True, timeout=300)
    return p


def rows(out):
    with open(os.path.join(out, "results.jsonl")) as f:
        return [json.loads(line) for line in f]


def normalized(out):
    """results.jsonl without each row's wall-clock "seconds" (the only field allowed to differ)."""
    rs = rows(out)
    for r in rs:
        r.pop("seconds", None)
    return rs


def t_star(p):
    r = min(p["n"], p.get("dh", p["n"]))
    return p["heads"] * (r - 1) + 1


THEOREM1 = {"task": "theorem1", "data": "shared",
            "grid": {"H": [1, 3], "n": [3, 5], "d": [8], "dh": [4, 8], "T": ["T*"]}, "seeds": [7, 8]}


def test_single_process():
    spec = write_spec("t1.json", THEOREM1)
    out = os.path.join(WORK, "t1")
    p = sweep(spec, out)
    check(p.returncode == 0, f"theorem1 sweep exit 0 (got {p.returncode}: {p.stderr})")
    summary = json.loads(p.stdout)
    rs = rows(out)
    check(summary["cells"] == 16 and len(rs) == 16, "16 cells = 2 H x 2 n x 2 dh x 2 seeds")
    check([r["cell"] for r in rs] == list(range(16)), "rows in cell order")
    # Cell order: grid keys in the spec's order, last key fastest, seeds innermost.
    check([r["seed"] for r in rs[:4]] == [7, 8, 7, 8], "seeds innermost")
    check([r["params"]["dh"] for r in rs[:4]] == [4, 4, 8, 8], "last grid key before seeds")
    for r in rs:
        p_ = r["params"]
        want = t_star(p_)
        check(p_["T"] == want, f"T* resolved to H(min(n,dh)-1)+1 = {want} in cell {r['cell']}")
        check(r["verdict"] == "holds", f"cell {r['cell']} holds")
        check(r["certified"]["T_certified"] == want, f"cell {r['cell']}: certified T = {want}")
        cert = os.path.join(out, r["certificate"])
        v = subprocess.run([BIN, "verify", cert, "--json"], capture_output=True, text=True)
        check(v.returncode == 0 and json.loads(v.stdout)["valid"], f"independent checker accepts {cert}")
    # Resume: remove two done markers; exactly those two cells run again, with the same results.
    before = normalized(out)
    for i in (3, 11):
        os.remove(os.path.join(out, "cells", f"{i:06d}", "row.json"))
    p = sweep(spec, out)
    s = json.loads(p.stdout)
    check(p.returncode == 0 and s["ran"] == 2 and s["skipped"] == 14, f"resume reruns only 2 cells ({s})")
    check(normalized(out) == before, "resumed results equal the first run's")
    # A different spec into the same directory is refused (no mixing of two experiments).
    other = write_spec("t1b.json", dict(THEOREM1, seeds=[9]))
    p = sweep(other, out)
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "expected the spec" in p.stderr,
          f"another spec into the same --out: exit 2, one line ({p.returncode}: {p.stderr!r})")
    return before


def test_kill_and_resume(reference):
    spec = write_spec("t1k.json", THEOREM1)
    out = os.path.join(WORK, "t1k")
    proc = subprocess.Popen([BIN, "sweep", spec, "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    time.sleep(0.8)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its running child, mid-cell
    proc.wait()
    # The kill lands at a moment that depends on the machine's speed: results.jsonl may exist only when
    # every cell had finished before it.
    done = sum(1 for dirpath, _, fs in os.walk(out) for f in fs if f == "row.json")
    cells = len(reference.splitlines()) if isinstance(reference, str) else len(reference)
    if os.path.exists(os.path.join(out, "results.jsonl")):
        check(done == cells, "no results.jsonl before every cell is done")
    for dirpath, _, fs in os.walk(out):
        for f in fs:
            if f == "row.json":
                with open(os.path.join(dirpath, f)) as fh:
                    json.loads(fh.read())  # every done marker is a complete row
    p = sweep(spec, out)
    check(p.returncode == 0, f"resumed sweep after kill exits 0 ({p.stderr})")
    check(normalized(out) == reference, "killed + resumed sweep gives the uninterrupted results")


def test_capacity():
    spec = write_spec("cap.json", {"task": "theorem1", "data": "shared", "grid": {"H": [2], "n": [3], "d": [8], "dh": [3]},
                                   "seeds": [1], "capacity": {"from": "T*", "to": "T*+4"}})
    out = os.path.join(WORK, "cap")
    p = sweep(spec, out)
    check(p.returncode == 0, f"capacity sweep exit 0 ({p.stderr})")
    (r,) = rows(out)
    c = r["capacity"]
    check(c["from"] == 5 and c["to"] == 9, "capacity bounds T* = 5 .. T*+4")
    probed = [q["T"] for q in c["probes"]]
    check(probed[0] == 5, "the search starts at from")
    check(c["certified"] == max(q["certified"] for q in c["probes"]), "capacity = best certified probe")
    check(5 <= c["certified"] <= 9, "the theorem's T* is certified")
    # Bisection: every probe above the answer failed, every probe at or below it succeeded.
    for q in c["probes"]:
        check((q["certified"] >= q["T"]) == (q["T"] <= c["certified"]), f"probe {q} consistent with the answer")
    check((c["not_established"] is None) == (c["certified"] == 9), "sizes not established are reported")
    if c["stopped"]:  # the method cannot go beyond what it built for: one probe past the answer suffices
        check(len(c["probes"]) == 2 and c["probes"][1]["certified"] == c["certified"], "a stopped search says why")


def test_capacity_beyond_theorem():
    # Shared context, d_h = 2 < n = 4: Theorem 1 gives T* = H(d_h-1)+1 = 3, Proposition 2 bounds rank(Z) by
    # H(n-1)+1 = 7 for ANY weights. Generic weights (construct theorem1's default --beyond generic) must
    # certify past T*, and never past the ceiling: the answer is pinned between two theorems.
    spec = write_spec("capb.json", {"task": "theorem1", "data": "shared", "grid": {"H": [2], "n": [4], "d": [8], "dh": [2]},
                                    "seeds": [1], "capacity": {"from": "T*", "to": "H(n-1)+1+2"}})
    out = os.path.join(WORK, "capb")
    p = sweep(spec, out)
    check(p.returncode == 0, f"capacity beyond T* sweep exit 0 ({p.stderr})")
    (r,) = rows(out)
    c = r["capacity"]
    check(c["from"] == 3 and c["to"] == 9, "capacity bounds T* = 3 .. H(n-1)+1+2 = 9")
    check(c["certified"] == 7, f"generic weights certify Proposition 2's ceiling 7, not more ({c['certified']})")
    for q in c["probes"]:
        check((q["certified"] >= q["T"]) == (q["T"] <= 7), f"probe {q}: certified exactly up to the ceiling")
    # The same cell with "beyond": "off" (and the flag no-saturation): the theorem alone stops at T* = 3.
    spec = write_spec("capo.json", {"task": "theorem1", "data": "shared",
                                    "grid": {"H": [2], "n": [4], "d": [8], "dh": [2], "beyond": ["off"], "no-saturation": [True]},
                                    "seeds": [1], "capacity": {"from": "T*", "to": "H(n-1)+1"}})
    out = os.path.join(WORK, "capo")
    p = sweep(spec, out)
    check(p.returncode == 0, f"capacity --beyond off sweep exit 0 ({p.stderr})")
    (r,) = rows(out)
    check(r["capacity"]["certified"] == 3, f"--beyond off: the theorem's T* = 3 only ({r['capacity']['certified']})")


def test_grid_list():
    spec = write_spec("list.json", {"task": "theorem1", "grid": [{"H": [1], "n": [3], "d": [4], "dh": [3], "T": ["T*"]},
                                                              {"d": [3], "n": [2], "H": [2, 3], "dh": [2], "T": ["H(n-1)+1"]}]})
    out = os.path.join(WORK, "list")
    p = sweep(spec, out)
    check(p.returncode == 0, f"grid list sweep exit 0 ({p.stderr})")
    got = [(r["params"]["heads"], r["params"]["n"], r["params"]["T"]) for r in rows(out)]
    check(got == [(1, 3, 3), (2, 2, 3), (3, 2, 4)], f"a list of grids runs them in order ({got})")


def test_other_tasks():
    spec = write_spec("ks.json", {"task": "ks", "grid": {"N": [40, 80], "n": [4], "d": [3], "C": [3]}, "seeds": [1]})
    out = os.path.join(WORK, "ks")
    p = sweep(spec, out)
    check(p.returncode == 0, f"ks sweep exit 0 ({p.stderr})")
    for r in rows(out):
        c = r["certified"]
        check(r["verdict"] == "holds" and c["N"] == r["params"]["N"] and c["parameters"] >= c["nonzero_parameters"] > 0,
              f"ks cell {r['cell']} certified with its parameter counts")
        v = subprocess.run([BIN, "verify", os.path.join(out, r["certificate"]), "--json"], capture_output=True, text=True)
        check(v.returncode == 0, "independent checker accepts the ks certificate")
    spec = write_spec("claim.json", {"task": "claim:mahdavi24/lemma-2", "grid": {"instances": [2]}, "seeds": [3, 4]})
    out = os.path.join(WORK, "claim")
    p = sweep(spec, out)
    check(p.returncode == 0, f"claim sweep exit 0 ({p.stderr})")
    for r in rows(out):
        check(r["verdict"] == "holds" and r["certified"]["confirmed"] == 2, f"claim cell {r['cell']}: 2 instances confirmed")


def test_paper_names():
    """Tasks by the papers' names (mahdavi24, ks25; data mahdavi24) are the v1 tasks (theorem1, ks; data
    theorem1): the same rows, and a spec by one name resumes the other's output directory (a ks cell is
    re-run on resume, as under its own spec: the same rows apart from "seconds")."""
    for new, old, data, grid in (("mahdavi24", "theorem1", "mahdavi24", {"H": [2], "n": [3], "d": [4], "dh": [3], "T": ["T*"]}),
                                 ("ks25", "ks", None, {"N": [40], "n": [4], "d": [3], "C": [3]})):
        specs, outs = [], []
        for task in (new, old):
            spec = {"task": task, "grid": grid, "seeds": [1]}
            if data:
                spec["data"] = data if task == new else old
            specs.append(write_spec("names_%s.json" % task, spec))
            outs.append(os.path.join(WORK, "names_" + task))
            p = sweep(specs[-1], outs[-1])
            check(p.returncode == 0, f"sweep task {task} exit 0 ({p.stderr})")
        check(normalized(outs[0]) == normalized(outs[1]), f"sweep task {new} gives the rows of task {old}")
        before = normalized(outs[1])
        p = sweep(specs[0], outs[1])
        check(p.returncode == 0 and json.loads(p.stdout.strip().splitlines()[-1])["cells"] == 1
              and normalized(outs[1]) == before, f"a {new} spec resumes the {old} sweep's directory ({p.stderr})")


def test_bad_specs():
    cases = {
        "notjson.json": "{\"task\": ",
        "task.json": json.dumps({"task": "nope", "grid": {}}),
        "key.json": json.dumps({"task": "theorem1", "grid": {"T": [3], "bogus": [1]}}),
        "formula.json": json.dumps({"task": "theorem1", "grid": {"T": ["T**"], "n": [3], "d": [4]}}),
        "nosize.json": json.dumps({"task": "theorem1", "grid": {"n": [3]}}),
        "seeds.json": json.dumps({"task": "theorem1", "grid": {"T": [3]}, "seeds": [-1]}),
        "empty.json": json.dumps({"task": "theorem1", "grid": {"T": []}}),
        "huge.json": json.dumps({"task": "theorem1", "grid": {k: list(range(1, 41)) for k in ("T", "n", "d", "C")}}),
        "cap.json": json.dumps({"task": "theorem1", "grid": {"H": [2], "n": [3], "d": [4]}, "capacity": {"from": 9, "to": 3}}),
    }
    for name, text in cases.items():
        path = os.path.join(WORK, "bad_" + name)
        with open(path, "w") as f:
            f.write(text)
        out = os.path.join(WORK, "bad_" + name + ".out")
        p = subprocess.run([BIN, "sweep", path, "--out", out], capture_output=True, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and re.search(r": .*expected", lines[0] if lines else ""),
              f"{name}: exit 2 with one 'file: position: expected' line (got {p.returncode}: {p.stderr!r})")
        check(not os.path.exists(os.path.join(out, "results.jsonl")), f"{name}: no results written")
    # A cell whose command refuses its options (n > d): recorded, exit 2, one line naming the cell.
    path = write_spec("refused.json", {"task": "theorem1", "grid": {"H": [1], "n": [5], "d": [3], "T": [2]}})
    p = sweep(path, os.path.join(WORK, "refused"))
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "cell 0" in p.stderr,
          f"refused cell: exit 2 naming the cell ({p.returncode}: {p.stderr!r})")


# Resume trusts nothing it finds: a row is kept only when its certificate re-verifies (the independent
# checker, against the cell's data regenerated from the spec) and its figures re-derive from it.
RESUME = {"task": "theorem1", "data": "general",
          "grid": {"H": [2], "n": [4], "d": [4], "dh": [4], "T": ["T*", "H*d", "H*d+1"]}, "seeds": [1, 2]}
RESUME_CELLS = 6


def cell_path(out, i, name="row.json"):
    return os.path.join(out, "cells", f"{i:06d}", name)


def edit_json(path, fn):
    with open(path) as f:
        j = json.load(f)
    fn(j)
    with open(path, "w") as f:
        json.dump(j, f)


def first_string(j):
    """The path (list of keys) of the first exact-number string inside j."""
    if isinstance(j, dict):
        for k in sorted(j):
            p = first_string(j[k])
            if p is not None:
                return [k] + p
    if isinstance(j, list):
        for i, v in enumerate(j):
            p = first_string(v)
            if p is not None:
                return [i] + p
    if isinstance(j, str):
        return []
    return None


def beyond_theorem(reference):
    """The cells whose result is not the theorem's construction (T > T*: the generic route): their rows
    carry figures no certificate states, so every resume runs them again."""
    return {r["cell"] for r in reference if (r.get("result") or {}).get("method") != "theorem"}


def resumed(spec, out, reference, edited, what, launcher=()):
    """Resume after damaging cells `edited`: exactly those (and the cells beyond the theorem) re-run, each
    named on stderr, results as before."""
    p = sweep(spec, out, launcher=launcher)
    s = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
    check(p.returncode == 0, f"{what}: resumed sweep exit 0 ({p.returncode}: {p.stderr!r})")
    again = set(edited) | beyond_theorem(reference)
    if not launcher:
        check(s.get("ran") == len(again) and s.get("rerun") == len(again) and s.get("skipped") == RESUME_CELLS - len(again),
              f"{what}: {len(again)} cell(s) re-run, the rest re-verified and kept ({s})")
    for i in edited:
        check(re.search(rf"cell {i} \(.*re-running", p.stderr) is not None, f"{what}: stderr names cell {i} ({p.stderr!r})")
    check(normalized(out) == reference, f"{what}: results.jsonl equals the uninterrupted run's")
    for r in rows(out):
        check(r["certified"]["T_certified"] <= r["params"]["heads"] * r["params"]["d"],
              f"{what}: cell {r['cell']} certifies at most H d")
    return p


def test_resume_hostile(launcher=()):
    spec = write_spec("resume.json", RESUME)
    out = os.path.join(WORK, "resume" + ("_mpi" if launcher else ""))
    pristine = out + ".orig"
    p = sweep(spec, out, launcher=launcher)
    check(p.returncode == 0, f"resume base sweep exit 0 ({p.stderr})")
    reference = normalized(out)
    check([r["certified"]["T_certified"] for r in reference] == [7, 7, 8, 8, 8, 8], "T* = 7 and H d = 8 certified")
    check([r["verdict"] for r in reference[4:]] == ["negative"] * 2, "H d + 1 = 9 examples: 8 of them certified, negative")
    shutil.copytree(out, pristine)

    def fresh():
        """Each case starts from the completed sweep, so each one fails or passes on its own."""
        shutil.rmtree(out)
        shutil.copytree(pristine, out)

    # A row edited to claim more than its certificate (8 -> 12 where H d = 8 is the ceiling).
    def more(r):
        r["certified"]["T_certified"] = 12
        r["result"]["memorized_count"] = 12
    fresh()
    edit_json(cell_path(out, 2), more)
    resumed(spec, out, reference, [2], "row claiming 12", launcher)
    # The verdict alone, or the params, edited.
    fresh()
    edit_json(cell_path(out, 0), lambda r: r.update(verdict="negative", exit=1))
    edit_json(cell_path(out, 3), lambda r: r["params"].update(T=9))
    resumed(spec, out, reference, [0, 3], "edited verdict / params", launcher)
    # A saturation scale of the row (what `plot.py saturation` draws) edited against its certificate's trace.
    fresh()
    check(len(reference[1]["result"]["saturation"]) == 2, "cell 1 reports its two heads' saturation scales")
    edit_json(cell_path(out, 1), lambda r: r["result"]["saturation"][-1].update(c="1/2" if r["result"]["saturation"][-1]["c"] != "1/2" else "1/3"))
    resumed(spec, out, reference, [1], "edited saturation scale", launcher)
    # A certificate naming its kind by the paper (mahdavi24, the same kind as theorem1): kept, nothing re-run.
    fresh()
    edit_json(cell_path(out, 0, "cert.json"), lambda c: c.update(kind="mahdavi24"))
    resumed(spec, out, reference, [], "certificate of kind mahdavi24", launcher)
    if launcher:
        return
    # A certificate edited to be invalid (one weight changed), and one deleted.
    def break_weight(c):
        path = first_string(c["weights"])
        node = c["weights"]
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = "12345/7" if node[path[-1]] != "12345/7" else "1/3"
    fresh()
    edit_json(cell_path(out, 2, "cert.json"), break_weight)
    os.remove(cell_path(out, 1, "cert.json"))
    resumed(spec, out, reference, [1, 2], "invalid / missing certificate", launcher)
    # A certificate about 8 of 9 examples whose list of examples names another row, and one with a label
    # of its embedded data changed: both refused (by the checker, against the regenerated data's rows).
    fresh()
    def other_example(c):
        missing = next(t for t in range(9) if t not in c["examples"])
        c["examples"][-1] = missing
    edit_json(cell_path(out, 4, "cert.json"), other_example)
    def other_label(c):
        path = first_string(c["data"]["labels"])
        node = c["data"]["labels"]
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = "5/1" if node[path[-1]] != "5/1" else "6"
    edit_json(cell_path(out, 5, "cert.json"), other_label)
    resumed(spec, out, reference, [4, 5], "certificate naming other examples / other labels", launcher)
    # Two valid certificates swapped between the seeds' cells: each is valid, but about the other's data.
    fresh()
    a, b = cell_path(out, 2, "cert.json"), cell_path(out, 3, "cert.json")
    os.rename(a, a + ".x")
    os.rename(b, a)
    os.rename(a + ".x", b)
    resumed(spec, out, reference, [2, 3], "swapped certificates", launcher)
    # The data file and the certificate both replaced by another seed's (consistent with each other):
    # the data is regenerated from the spec, so this too is refused.
    fresh()
    for name in ("cert.json", "data.json"):
        shutil.copyfile(cell_path(out, 1, name), cell_path(out, 0, name))
    resumed(spec, out, reference, [0], "certificate and data of another seed", launcher)
    # A truncated row and a row that is a JSON array: re-run (the row is the sweep's own record).
    fresh()
    with open(cell_path(out, 1)) as f:
        text = f.read()
    with open(cell_path(out, 1), "w") as f:
        f.write(text[: len(text) // 2])
    with open(cell_path(out, 3), "w") as f:
        f.write("[1, 2]\n")
    resumed(spec, out, reference, [1, 3], "truncated / array row", launcher)
    # A merged file holding an edited row (as a sweep that trusted it wrote) does not outlive a run that
    # stops before every cell passed: here cell 3 cannot be run (its run.out is a directory): exit 2.
    fresh()
    edit_json(cell_path(out, 2), more)
    merged = rows(out)
    more(merged[2])
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in merged))
    os.remove(cell_path(out, 3))
    os.remove(cell_path(out, 3, "run.out"))
    os.mkdir(cell_path(out, 3, "run.out"))
    p = sweep(spec, out)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and re.search(r"000003/run.out: expected a writable path", lines[-1] if lines else ""),
          f"a cell directory that cannot be written: exit 2 naming the file ({p.returncode}: {p.stderr!r})")
    check(not os.path.exists(os.path.join(out, "results.jsonl")) or all(r["certified"]["T_certified"] <= 8 for r in rows(out)),
          "no results.jsonl holding the edited row survives an unfinished resume")

    # Damaged structure: exit 2, one line naming the path and what was expected; nothing runs.
    def damaged(what, make, pattern):
        fresh()
        os.remove(cell_path(out, 0))  # a cell that would run: it must not
        res = os.path.join(out, "results.jsonl")
        merged = open(res).read()
        make()
        p = sweep(spec, out)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and re.search(pattern, lines[0] if lines else ""),
              f"{what}: exit 2 with one line naming the path ({p.returncode}: {p.stderr!r})")
        check(not os.path.exists(cell_path(out, 0)), f"{what}: no cell ran")
        if os.path.isfile(res):
            check(open(res).read() == merged, f"{what}: results.jsonl untouched")
    d3 = os.path.join(out, "cells", "000003")
    r3 = cell_path(out, 3)
    res = os.path.join(out, "results.jsonl")
    cells_dir = os.path.join(out, "cells")
    damaged("cell directory replaced by a file", lambda: (shutil.rmtree(d3), open(d3, "w").write("x")),
            r"cells/000003: expected the directory of cell 3, got a file")
    damaged("row.json replaced by a directory", lambda: (os.remove(r3), os.mkdir(r3)),
            r"000003/row.json: expected the row of cell 3 \(a file\), got a directory")
    damaged("results.jsonl replaced by a directory", lambda: (os.remove(res), os.mkdir(res)),
            r"results.jsonl: expected a file")
    damaged("cells/ replaced by a file", lambda: (shutil.rmtree(cells_dir), open(cells_dir, "w").write("x")),
            r"cells: expected")

    # What scripts/plot.py plots after a resume over an edited row: the certified 8, never the edited 12.
    fresh()
    edit_json(cell_path(out, 2), more)
    p = sweep(spec, out)
    check(p.returncode == 0, f"resume before plotting exit 0 ({p.stderr!r})")
    plot_py = "/usr/bin/python3"
    if subprocess.run([plot_py, "-c", "import numpy, matplotlib"], capture_output=True).returncode == 0:
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        prefix = os.path.join(WORK, "fig4")
        q = subprocess.run([plot_py, os.path.join(src, "scripts", "plot.py"), "figure4", out, "--out", prefix],
                           capture_output=True, text=True)
        check(q.returncode == 0, f"figure4 plots the resumed sweep ({q.stderr})")
        if q.returncode == 0:
            with open(prefix + ".json") as f:
                fig = json.load(f)
            check(max(c["certified"] for c in fig["table"]) == 8 and all(v["certified"] <= v["rank_bound"] for v in fig["pairs"]),
                  f"figure4 plots the certified 8, not the edited 12 ({fig['pairs']})")


def test_resume_mutations():
    """Random edits (fixed seed) of the rows and certificates of a completed sweep: every resume exits 0,
    never an internal error, and the fields a resume re-derives equal the uninterrupted run's."""
    import random
    rng = random.Random(32)
    spec = os.path.join(WORK, "resume.json")
    pristine, out = os.path.join(WORK, "resume.orig"), os.path.join(WORK, "mutate")
    values = [None, True, 0, -1, 2 ** 64 - 1, 1.5, "x", "12", [], {}, [1, 2], {"a": 1}, "cells/000000/cert.json"]

    def mutate(j, depth=0):
        if isinstance(j, dict) and j:
            k = rng.choice(sorted(j))
            r = rng.random()
            if r < 0.2:
                del j[k]
            elif r < 0.6 or depth > 3:
                j[k] = rng.choice(values)
            else:
                j[k] = mutate(j[k], depth + 1)
            return j
        if isinstance(j, list) and j:
            i = rng.randrange(len(j))
            if rng.random() < 0.3:
                del j[i]
            else:
                j[i] = mutate(j[i], depth + 1)
            return j
        return rng.choice(values)

    def kept(rs):
        out_ = []
        for r in rs:
            res = r.get("result") or {}
            k = {f: r.get(f) for f in ("cell", "task", "params", "seed", "exit", "verdict", "certified", "certificate")}
            k["result"] = {f: res.get(f) for f in ("memorized", "memorized_count", "not_memorized", "T", "H", "n", "d", "dh", "method")}
            k["saturation"] = [(h.get("c"), h.get("c_proof"), h.get("eps")) for h in res.get("saturation") or []]
            out_.append(k)
        return out_

    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(pristine, out)
    reference = kept(rows(out))
    for t in range(16):
        shutil.rmtree(out)
        shutil.copytree(pristine, out)
        cell = rng.randrange(RESUME_CELLS)
        path = cell_path(out, cell, rng.choice(["row.json", "row.json", "cert.json"]))
        with open(path) as f:
            text = f.read()
        if rng.random() < 0.2:
            text = text[: rng.randrange(len(text))]
        else:
            text = json.dumps(mutate(json.loads(text)))
        with open(path, "w") as f:
            f.write(text)
        p = sweep(spec, out)
        check(p.returncode == 0 and "internal" not in p.stderr, f"mutation {t} of {path}: exit 0 ({p.returncode}: {p.stderr!r})")
        if p.returncode == 0:
            check(kept(rows(out)) == reference, f"mutation {t} of {path}: the re-derived fields equal the uninterrupted run's")


def test_unreadable():
    """File modes: an unreadable row.json is exit 2 naming it; an unreadable certificate re-runs its cell.
    Root reads anything, so as root the sweep runs as uid 65534 (setpriv) on a world-writable copy."""
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        if not shutil.which("setpriv") or subprocess.run([*prefix, BIN, "--version"], capture_output=True).returncode != 0:
            print("skipped: unreadable files (root without a usable setpriv)")
            return
    base = tempfile.mkdtemp(prefix="memcert_sweep_modes.")
    os.chmod(base, 0o777)
    out, spec = os.path.join(base, "o"), os.path.join(base, "resume.json")
    shutil.copytree(os.path.join(WORK, "resume.orig"), out)
    shutil.copyfile(os.path.join(WORK, "resume.json"), spec)
    for d, ds, fs in os.walk(base):
        for x in ds:
            os.chmod(os.path.join(d, x), 0o777)
        for x in fs:
            os.chmod(os.path.join(d, x), 0o666)

    # The other uid runs its own copy of the executable from the world-readable scratch directory: the build
    # directory may lie under one only root can enter (a clone in a mktemp -d), and the sweep starts its
    # cells from the executable it runs as.
    binary = BIN
    if prefix:
        binary = os.path.join(base, "memcert")
        shutil.copyfile(BIN, binary)
        os.chmod(binary, 0o755)

    def run():
        return subprocess.run([*prefix, binary, "sweep", spec, "--out", out, "--json"], capture_output=True, text=True, timeout=300)
    os.chmod(cell_path(out, 3), 0)
    p = run()
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and re.search(r"000003/row.json: expected a readable file", lines[0] if lines else ""),
          f"unreadable row.json: exit 2, one line naming it ({p.returncode}: {p.stderr!r})")
    os.chmod(cell_path(out, 3), 0o666)
    os.chmod(cell_path(out, 1, "cert.json"), 0)
    p = run()  # cell 1 (at T*), and cells 2-5 beyond T* as every resume does
    check(p.returncode == 0 and json.loads(p.stdout).get("rerun") == 5 and "cell 1 (" in p.stderr,
          f"unreadable certificate: its cell re-run ({p.returncode}: {p.stdout} {p.stderr!r})")
    shutil.rmtree(base)


def test_resume_capacity():
    spec = write_spec("rescap.json", {"task": "theorem1", "data": "general", "grid": {"H": [2], "n": [4], "d": [4], "dh": [4]},
                                      "seeds": [1], "capacity": {"from": "T*", "to": "H*d"}})
    out = os.path.join(WORK, "rescap")
    p = sweep(spec, out)
    check(p.returncode == 0, f"capacity base sweep exit 0 ({p.stderr})")
    reference = normalized(out)
    check(reference[0]["capacity"]["certified"] == 8, "capacity H d = 8 certified")
    for what, fn in (("capacity.certified", lambda r: r["capacity"].update(certified=12)),
                     ("a probe", lambda r: r["capacity"]["probes"][0].update(certified=12)),
                     ("capacity bounds", lambda r: r["capacity"].update(to=12))):
        edit_json(cell_path(out, 0), fn)
        p = sweep(spec, out)
        s = json.loads(p.stdout)
        check(p.returncode == 0 and s.get("rerun") == 1 and "cell 0" in p.stderr, f"capacity row with edited {what}: re-run ({s})")
        check(normalized(out) == reference, f"capacity row with edited {what}: results as before")
    # Its answer (8 = H d > T* = 7) is the generic route's, whose result carries figures no certificate states.
    p = sweep(spec, out)
    check(json.loads(p.stdout)["rerun"] == 1, "an intact capacity row beyond T* runs again")
    check(normalized(out) == reference, "capacity row run again: results as before")


def test_resume_other_tasks():
    """ks, dana24 and claim cells: re-run when their certified figures are edited; an intact ks row is kept
    (its result re-derives from its certificate), intact dana24 and claim rows run again."""
    for name, spec_j, key, bad in (
            ("rks", {"task": "ks", "grid": {"N": [20], "n": [4], "d": [3], "C": [3]}}, "parameters", 7),
            ("rda", {"task": "dana24", "grid": {"N": [50], "S": [4], "T": [10], "H": [1], "dh": [4], "d": [8]}}, "memorized_count", 11),
            ("rcl", {"task": "claim:mahdavi24/lemma-2", "grid": {"instances": [2]}}, "confirmed", 3)):
        spec = write_spec(name + ".json", spec_j)
        out = os.path.join(WORK, name)
        p = sweep(spec, out)
        check(p.returncode == 0, f"{name}: base sweep exit 0 ({p.stderr})")
        reference = normalized(out)
        p = sweep(spec, out)
        if name == "rks":
            check(p.returncode == 0 and json.loads(p.stdout)["rerun"] == 0 and json.loads(p.stdout)["skipped"] == 1,
                  f"{name}: an intact ks row is kept ({p.stdout} {p.stderr})")
        else:
            check(p.returncode == 0 and json.loads(p.stdout)["rerun"] == 1 and "cell 0" in p.stderr,
                  f"{name}: an intact row carries figures no certificate states: re-run ({p.stdout} {p.stderr})")
        check(normalized(out) == reference, f"{name}: re-run results as before")
        edit_json(cell_path(out, 0), lambda r: r["certified"].update({key: bad}))
        p = sweep(spec, out)
        check(p.returncode == 0 and json.loads(p.stdout).get("rerun") == 1, f"{name}: edited {key} re-run ({p.stdout} {p.stderr})")
        check(normalized(out) == reference, f"{name}: results as before")
    # The claim's certificates: one edited (its scalar a changed), then one removed (2 confirmed, 1 left).
    out = os.path.join(WORK, "rcl")
    certs = sorted(os.listdir(cell_path(out, 0, "certs")))
    edit_json(os.path.join(cell_path(out, 0, "certs"), certs[0]), lambda c: c.update(a="7/3" if c["a"] != "7/3" else "5/3"))
    os.remove(os.path.join(cell_path(out, 0, "certs"), certs[1]))
    p = sweep(os.path.join(WORK, "rcl.json"), out)
    check(p.returncode == 0 and json.loads(p.stdout).get("rerun") == 1, f"claim with an edited certificate re-run ({p.stdout} {p.stderr})")
    check(len(os.listdir(cell_path(out, 0, "certs"))) == 2, "the re-run wrote both certificates again")
    if os.path.exists(os.path.join(cell_path(out, 0, "certs"), certs[1])):
        os.remove(os.path.join(cell_path(out, 0, "certs"), certs[1]))
    p = sweep(os.path.join(WORK, "rcl.json"), out)
    check(p.returncode == 0 and json.loads(p.stdout).get("rerun") == 1, f"claim missing a certificate re-run ({p.stdout} {p.stderr})")


def test_resume_underived():
    """Rows whose result carries figures the resume cannot re-derive from a certificate: edits of them never
    survive a resume (the cell runs again and its row is the fresh run's), and a cell directory that is a
    symbolic link is a damaged directory (exit 2 naming it), never a second copy of another cell."""
    # A claim cell: counts, verdict and per-instance outcomes of the run.
    spec = write_spec("rf1.json", {"task": "claim:mahdavi24/lemma-3", "grid": {"instances": [2]}, "seeds": [3]})
    out = os.path.join(WORK, "rf1")
    p = sweep(spec, out)
    check(p.returncode == 0, f"claim base sweep exit 0 ({p.stderr})")
    reference = normalized(out)

    def claim_edit(r):
        r["certified"]["counterexamples"] = 1
        r["result"]["counterexamples"] = [1]
        r["result"]["verdict"] = "counterexample"
        r["result"]["results"][-1]["outcome"] = "counterexample"
    edit_json(cell_path(out, 0), claim_edit)
    p = sweep(spec, out)
    check(p.returncode == 0 and json.loads(p.stdout).get("rerun") == 1 and "cell 0" in p.stderr,
          f"claim row with an edited outcome: re-run ({p.stdout} {p.stderr})")
    check(normalized(out) == reference, "claim row with an edited outcome: results as before")
    # theorem1 beyond T* (generic route), the theorem's construction at T*, a ks and a dana24 row.
    spec = write_spec("rf2.json", {"task": "theorem1", "data": "general",
                                    "grid": {"H": [2], "n": [4], "d": [4], "dh": [4], "T": ["T*", "H*d+1"]}, "seeds": [1, 2]})
    out = os.path.join(WORK, "rf2")
    p = sweep(spec, out)
    check(p.returncode == 0, f"theorem1 base sweep exit 0 ({p.stderr})")
    reference = normalized(out)
    check([r["result"]["method"] == "theorem" for r in reference] == [True, True, False, False], "cells 2, 3 beyond T*")
    pristine = out + ".orig"
    shutil.copytree(out, pristine)

    def sat_edit(r):
        res = r["result"]
        for h in res.get("saturation") or [{}]:
            h.update(c="5/2", c_proof="5/2", c_weyl="5/2")
        res["saturation"] = res.get("saturation") or [{"head": 1, "c": "5/2"}]
        res["c_network"] = "5/2"

    def generic_edit(r):
        g = r["result"].setdefault("generic", {})
        g["rank_Z_lower"] = 99
        r["result"]["theorem_memorized_count"] = 99
    for what, cell, fn in (("saturation / c_network beyond T*", 2, sat_edit), ("generic.* beyond T*", 3, generic_edit),
                           ("a head's c_weyl at T*", 0, lambda r: r["result"]["saturation"][-1].update(c_weyl="5/2")),
                           ("a head dropped at T*", 1, lambda r: r["result"]["saturation"].pop()),
                           ("theorem_memorized_count at T*", 0, lambda r: r["result"].update(theorem_memorized_count=99)),
                           ("a field added to the row at T*", 1, lambda r: r.update(note="verified twice"))):
        shutil.rmtree(out)
        shutil.copytree(pristine, out)
        edit_json(cell_path(out, cell), fn)
        p = sweep(spec, out)
        check(p.returncode == 0 and re.search(rf"cell {cell} \(.*re-running", p.stderr) is not None,
              f"edited {what}: cell {cell} re-run ({p.stdout} {p.stderr})")
        check(normalized(out) == reference, f"edited {what}: results as before")
    for name, spec_j, fn in (
            ("rf2ks", {"task": "ks", "grid": {"N": [20], "n": [4], "d": [3], "C": [3]}},
             lambda r: (r["result"].setdefault("bounds", {}).update(log2_R=1e9), r["result"].setdefault("eq55", {}).update(holds=False))),
            ("rf2da", {"task": "dana24", "grid": {"N": [50], "S": [4], "T": [10], "H": [1], "dh": [4], "d": [8]}},
             lambda r: r["result"].setdefault("rank_certificate", {}).update(rank_lower=99))):
        spec = write_spec(name + ".json", spec_j)
        out = os.path.join(WORK, name)
        p = sweep(spec, out)
        check(p.returncode == 0, f"{name}: base sweep exit 0 ({p.stderr})")
        reference = normalized(out)
        edit_json(cell_path(out, 0), fn)
        p = sweep(spec, out)
        check(p.returncode == 0 and json.loads(p.stdout).get("rerun") == 1, f"{name}: edited descriptive figures re-run ({p.stdout} {p.stderr})")
        check(normalized(out) == reference, f"{name}: results as before")
    # A cell directory that is a symbolic link to another cell's.
    out = os.path.join(WORK, "rf2")
    shutil.rmtree(out)
    shutil.copytree(pristine, out)
    shutil.rmtree(os.path.join(out, "cells", "000001"))
    os.symlink("000000", os.path.join(out, "cells", "000001"))
    p = sweep(os.path.join(WORK, "rf2.json"), out)
    check(p.returncode == 2 and "cells/000001" in p.stderr and "symbolic link" in p.stderr,
          f"a cell directory that is a symbolic link: exit 2 naming it ({p.returncode}: {p.stderr!r})")


def ks_bounds(c):
    """Theorem B.1's (D.1's) expressions computed here from a ks certificate's N, n, d, C and separation
    (docs/THEORY.md; an implementation independent of the engine's)."""
    import math
    from fractions import Fraction
    N, n, d, C = c["N"], c["n"], c["d"], c["C"]
    r = max(1.0, math.sqrt(float(Fraction(c["separation"]["r2"]))))
    dl2 = Fraction(c["separation"]["delta2"])
    dl = min(1.0, math.sqrt(float(dl2))) if dl2 > 0 else 1.0
    lg = max(1.0, math.log2(N))
    if c["claim"] == "ks25/theorem-D.1":
        log2_R = math.log2(80 * math.pi * n * n * N ** 5 * r / dl * math.sqrt(d))
    else:
        log2_R = math.log2(400 * math.sqrt(3) * math.pi * d * n ** 3 * r * N ** 5 / dl)
    mx = max(log2_R, math.log2(max(2, C)))
    depth = math.sqrt(N * lg) + math.sqrt(N / lg) * mx
    if c["setting"] == "seq-to-seq" and c["claim"] != "ks25/theorem-D.1":
        lm = max(1.0, math.log2(N * n))
        depth = math.sqrt(N * n * lm) + math.sqrt(N * n / lm) * mx
    return {"log2_R": log2_R, "depth_expr": depth, "bit_expr": math.log2(d) + math.sqrt(N / lg) * mx,
            "parameters_expr": d + depth, "width": 12 if c["claim"] == "ks25/theorem-D.1" else 14}


def test_resume_ks():
    """A finished ks sweep (Theorem 4.1 and D.1 cells) resumed: no cell runs again and every row stays
    byte-identical; each row's figures agree with its certificate (the bounds recomputed here); a row with
    an edited figure, or an edited certificate, runs that cell again and the results are as before."""
    spec = write_spec("rks2.json", {"task": "ks", "grid": {"N": [12, 20], "n": [4], "d": [3], "C": [3], "deep-sets": [False, True]}})
    out = os.path.join(WORK, "rks2")
    p = sweep(spec, out)
    check(p.returncode == 0, f"ks base sweep exit 0 ({p.stderr})")
    cells = len(rows(out))
    reference = normalized(out)

    def raw():
        files = [cell_path(out, i) for i in range(cells)] + [os.path.join(out, "results.jsonl")]
        return [open(f, "rb").read() for f in files]
    before = raw()
    for i, r in enumerate(rows(out)):
        with open(os.path.join(out, r["certificate"])) as f:
            c = json.load(f)
        res = r["result"]
        check(r["verdict"] == "holds" and res["claim"] == c["claim"], f"ks cell {i}: holds, claim {c['claim']}")
        for k in ("N", "n", "d", "C"):
            check(res[k] == c[k] == r["params"].get(k, c[k]), f"ks cell {i}: {k} as the certificate's and the spec's")
        for k, v in c["complexity"].items():
            check(res[k] == v, f"ks cell {i}: {k} as the certificate's complexity")
        for k, v in ks_bounds(c).items():
            check(abs(res["bounds"][k] - v) <= 1e-9 * max(1.0, abs(v)), f"ks cell {i}: bounds.{k} {res['bounds'][k]} vs {v}")
    p = sweep(spec, out)
    s = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0 and s.get("rerun") == 0 and s.get("ran") == 0 and s.get("skipped") == cells,
          f"a finished ks sweep resumed runs no cell again ({p.stdout} {p.stderr})")
    check(raw() == before, "a finished ks sweep resumed: rows and results.jsonl byte-identical")
    pristine = out + ".orig"
    shutil.copytree(out, pristine)

    def res_edit(fn):
        return lambda r: fn(r["result"])
    edits = (
        ("result.parameters", 0, res_edit(lambda x: x.update(parameters=x["parameters"] + 1))),
        ("certified and result parameters", 1, lambda r: (r["certified"].update(parameters=7), r["result"].update(parameters=7))),
        ("bounds.depth_expr", 0, res_edit(lambda x: x["bounds"].update(depth_expr=x["bounds"]["depth_expr"] * 2))),
        ("bounds.width", 1, res_edit(lambda x: x["bounds"].update(width=99))),
        ("bounds dropped", 2, res_edit(lambda x: x.pop("bounds"))),
        ("eq55.min_dist2 below 1/n^2", 0, res_edit(lambda x: x["eq55"].update(min_dist2="1/17"))),
        ("eq55.holds", 2, res_edit(lambda x: x["eq55"].update(holds=False))),
        ("eq55.bound2", 0, res_edit(lambda x: x["eq55"].update(bound2="1/9"))),
        ("separation.r2", 2, res_edit(lambda x: x["separation"].update(r2="1000"))),
        ("separation.delta2_exact", 0, res_edit(lambda x: x["separation"].update(delta2_exact=False))),
        ("distinct_tokens", 1, res_edit(lambda x: x.update(distinct_tokens=x["distinct_tokens"] + 1))),
        ("mismatches", 3, res_edit(lambda x: x.update(mismatches=2))),
        ("verified", 3, res_edit(lambda x: x.update(verified=False))),
        ("claim", 1, res_edit(lambda x: x.update(claim="ks25/corollary-4.1"))),
        ("a field added to the result", 3, res_edit(lambda x: x.update(note=1))),
        ("distinct_multisets", 2, res_edit(lambda x: x.update(distinct_multisets=0))),
        ("f2 dropped", 0, res_edit(lambda x: x.pop("f2"))),
    )
    for what, cell, fn in edits:
        shutil.rmtree(out)
        shutil.copytree(pristine, out)
        edit_json(cell_path(out, cell), fn)
        p = sweep(spec, out)
        s = json.loads(p.stdout) if p.returncode == 0 else {}
        check(p.returncode == 0 and s.get("rerun") == 1 and re.search(rf"cell {cell} \(.*re-running", p.stderr) is not None,
              f"ks row with an edited {what}: cell {cell} re-run ({p.stdout} {p.stderr})")
        check(normalized(out) == reference, f"ks row with an edited {what}: results as before")
    # Certificates edited: a complexity figure with the row's copies edited alike, and the separation.
    for what, cell, fn, row_fn in (
            ("complexity.parameters", 0, lambda c: c["complexity"].update(parameters=c["complexity"]["parameters"] + 1),
             lambda r: (r["certified"].update(parameters=r["certified"]["parameters"] + 1),
                        r["result"].update(parameters=r["result"]["parameters"] + 1))),
            ("separation.r2", 1, lambda c: c["separation"].update(r2="1000"),
             lambda r: r["result"]["separation"].update(r2="1000"))):
        shutil.rmtree(out)
        shutil.copytree(pristine, out)
        edit_json(cell_path(out, cell, "cert.json"), fn)
        edit_json(cell_path(out, cell), row_fn)
        p = sweep(spec, out)
        s = json.loads(p.stdout) if p.returncode == 0 else {}
        check(p.returncode == 0 and s.get("rerun") == 1 and re.search(rf"cell {cell} \(.*re-running", p.stderr) is not None,
              f"ks certificate with an edited {what}: cell {cell} re-run ({p.stdout} {p.stderr})")
        check(normalized(out) == reference, f"ks certificate with an edited {what}: results as before")


def test_bad_spec_values():
    """Spec errors found when the spec is read: exit 2, one line naming the spec, the key and the
    expectation, and nothing created in --out (no cell ran)."""
    base = '"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4], "T": [3]}'
    cases = {
        "dup_top.json": ('{' + base + ', "seeds": [1], "seeds": [2]}', r"/seeds: expected each key once"),
        "dup_grid.json": ('{"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4], "n": [5], "T": [3]}}',
                          r"/grid/n: expected each key once"),
        "dup_list.json": ('{"task": "theorem1", "grid": [{"H": [1], "n": [3], "d": [4], "T": [3]}, {"T": [3], "d": [4], "d": [5]}]}',
                          r"/grid/1/d: expected each key once"),
        "claim.json": (json.dumps({"task": "claim:nope/none", "grid": {"instances": [1]}}), r"/task: expected .*registered claim id"),
        "tol.json": (json.dumps({"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4], "T": [3], "tolerance": ["abc"]}}),
                     r"/grid/tolerance/0: expected an exact non-negative number"),
        "tol_neg.json": (json.dumps({"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4], "T": [3], "tolerance": ["-1/2"]}}),
                         r"/grid/tolerance/0: expected an exact non-negative number"),
        "cap_to.json": (json.dumps({"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4]},
                                    "capacity": {"from": 1, "to": 2 ** 64 - 1}}), r"/capacity/to: expected an integer in \[1, 1e8\]"),
        "cap_from.json": (json.dumps({"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4]},
                                      "capacity": {"from": 0, "to": 3}}), r"/capacity/from: expected an integer in \[1, 1e8\]"),
        "cap_formula.json": (json.dumps({"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4]},
                                         "capacity": {"from": 1, "to": "T*+99999999"}}), r"/capacity: expected 1 <= from <= to <= 1e8"),
        "size_formula.json": (json.dumps({"task": "theorem1", "grid": {"H": [1], "n": [3], "d": [4], "T": ["T*+99999999"]}}),
                              r"/grid: T: expected a formula giving a size in \[1, 1e8\]"),
        "grid_int.json": (json.dumps({"task": "theorem1", "grid": {"H": [1], "n": [2 ** 64 - 1], "d": [4], "T": [3]}}),
                          r"/grid/n/0: expected an integer in \[1, 1e8\]"),
    }
    for name, (text, pattern) in cases.items():
        path = os.path.join(WORK, "bad_" + name)
        with open(path, "w") as f:
            f.write(text)
        out = os.path.join(WORK, "bad_" + name + ".out")
        p = subprocess.run([BIN, "sweep", path, "--out", out], capture_output=True, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and path in lines[0] and re.search(pattern, lines[0]) is not None
              and "-1" not in lines[0], f"{name}: exit 2, one line '{path}: {pattern}' (got {p.returncode}: {p.stderr!r})")
        check(not os.path.exists(os.path.join(out, "cells", "000000")), f"{name}: detected before any cell ran")


def test_mpi():
    launcher = (MPI, "-n", "2", "--oversubscribe", "--allow-run-as-root")
    spec = write_spec("mpi.json", {"task": "theorem1", "data": "general",
                                   "grid": {"heads": [2, 1], "n": [4], "d": [6], "dh": [3, 4], "T": ["T*", "T*+2"]},
                                   "seeds": [11, 12, 13]})
    single, multi = os.path.join(WORK, "single"), os.path.join(WORK, "multi")
    p1 = sweep(spec, single)
    p2 = sweep(spec, multi, launcher=launcher)
    check(p1.returncode == 0, f"single-process run exit 0 ({p1.stderr})")
    check(p2.returncode == 0, f"mpirun -n 2 run exit 0 ({p2.stderr})")
    s2 = json.loads(p2.stdout.strip().splitlines()[-1])
    check(s2["ranks"] == 2 and s2["cells"] == 24, f"2 ranks shared 24 cells ({s2})")
    check(normalized(single) == normalized(multi), "merged MPI results equal the single-process results")
    # Each rank ran its own share: rank 1's cells are the odd ones (their rows exist, written by rank 1).
    check(len(rows(multi)) == 24, "24 merged rows")
    # Resume under mpirun: rows edited on both ranks' shares are re-run by their own rank.
    test_resume_hostile(launcher)


if MPI:
    test_mpi()
else:
    ref = test_single_process()
    test_kill_and_resume(ref)
    test_capacity()
    test_capacity_beyond_theorem()
    test_grid_list()
    test_other_tasks()
    test_paper_names()
    test_bad_specs()
    test_bad_spec_values()
    test_resume_hostile()
    test_resume_mutations()
    test_unreadable()
    test_resume_capacity()
    test_resume_other_tasks()
    test_resume_underived()
    test_resume_ks()

subprocess.run(["rm", "-rf", WORK])
print(f"{'FAILED' if FAILED else 'passed'}: {len(FAILED)} failure(s)")
sys.exit(1 if FAILED else 0)
