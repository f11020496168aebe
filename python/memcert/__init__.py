"""memcert: exact-arithmetic verification of memorization theory for Transformers, from Python.

Each function runs the command of the same name of the `memcert` command line, in this process, through
the same code (memcert._memcert._run): the same options (keyword `foo_bar=` is `--foo-bar`), the same
defaults, the same verdicts and the same JSON keys (`result.to_json()` is the command's --json object).
Arrays may be numpy arrays (written for the command in their own dtype: float16/32/64, integers, bool),
lists or object arrays of int / float / fractions.Fraction / numeric str (exact JSON), or paths of files
the command line reads. Errors: bad input -> ValueError (the command line's one-line message), a failed
hypothesis -> HypothesisFailure (.witness), no decision (exit 3) -> Undecided (.result). Progress: tqdm
when installed (progress=False: none, or a callable(label, done, total)); Ctrl-C interrupts a long call.
docs/PYTHON.md has the details.
"""
import os as _os

from . import _memcert
from ._core import (EXIT_BAD_INPUT, EXIT_HOLDS, EXIT_NEGATIVE, EXIT_UNDECIDED, HypothesisFailure, MemcertError,
                    NumericalWarning, Undecided, Workdir, check_keywords, command_options, dataset_file, executable,
                    json_file, matrix_file, option_args, run_command)
from .results import (AssumptionsResult, CertifyResult, ClaimsResult, ConstructResult, GenerateResult, KruskalResult,
                      Margins, RankResult, Result, SweepResult, Theorem1Result, VerifyResult)
from ._certify import certify, has_command

__version__ = _memcert.__version__

__all__ = ["rank", "kruskal", "assumptions", "generate", "generate_mahdavi24", "generate_theorem1", "generate_shared",
           "generate_general", "generate_ks25", "generate_ks", "generate_dana24", "generate_pe", "construct_mahdavi24",
           "construct_theorem1", "construct_ks25", "construct_ks", "construct_dana24",
           "claims_list", "claims_run", "claims_search", "verify", "sweep", "certify", "run", "executable",
           "has_command",
           "HypothesisFailure", "Undecided", "MemcertError", "NumericalWarning", "Result", "RankResult",
           "KruskalResult", "AssumptionsResult", "ConstructResult", "Theorem1Result", "GenerateResult",
           "ClaimsResult", "VerifyResult", "VerifyResults", "SweepResult", "CertifyResult", "Margins"]

# Python-only keywords every function takes next to the command's options.
_PY_KEYWORDS = {"progress"}


def _call(function, command, positional, options, result_class, wd, cert_option=None, cert_suffix=".json",
          default_max_seconds=0.0):
    """Checks the keywords against the command's own options, asks for the certificate file when the
    caller gave none, runs the command."""
    check_keywords(function, options, command_options(command) | _PY_KEYWORDS | ({"progress_flag"} if "progress" in
                                                                                  command_options(command) else set()))
    progress = options.pop("progress", None)
    if options.pop("progress_flag", False):  # a command's own --progress flag (sweep)
        options["progress"] = True
    max_seconds = options.pop("max_seconds", None)
    cert_path = None
    if cert_option:
        if options.get(cert_option) is None:
            options[cert_option] = wd.file("certificate", cert_suffix)
        cert_path = _os.fspath(options[cert_option])
    for k in ("out", "weights_out", "cert_dir", "cert"):  # output paths as given (os.PathLike too)
        if isinstance(options.get(k), _os.PathLike):
            options[k] = _os.fspath(options[k])
    words = list(positional) + option_args(options)
    return run_command(command, words, wd, result_class, progress=progress, max_seconds=max_seconds,
                       default_max_seconds=default_max_seconds, cert_path=cert_path)


def run(*argv, progress=None):
    """Any command line: run(["construct", "theorem1", "d.npz", "--heads", "2", ...]) or run("rank", "a.npy").
    Returns the Result of its --json object (files are paths; nothing is converted)."""
    words = list(argv[0]) if len(argv) == 1 and isinstance(argv[0], (list, tuple)) else [str(a) for a in argv]
    return run_command(words, [], None, Result, progress=progress)


# ---- matrices ------------------------------------------------------------------------------------------

def rank(a, **options):
    """memcert rank: the exact rank of a 2-d array (entries taken exactly), certified from both sides,
    with numpy's numerical rank next to it (a NumericalWarning when they differ).

    Options (as `memcert rank --help`): key, tol, cert (certificate path; default a temporary file read
    by .certificate), max_seconds, max_memory, threads, decimals; progress.
    Result keys: rank, rank_lower, rank_upper, rows, cols, method, storage, threads, numerical_rank,
    numerical_tol, numerical_method, warning (when the two ranks differ), seconds."""
    wd = Workdir()
    return _call("rank", ["rank"], [matrix_file(a, "a", wd)], options, RankResult, wd, cert_option="cert")


def kruskal(a, at_least=None, **options):
    """memcert kruskal: certified bounds on the Kruskal rank of the ROWS of a 2-d array.

    Options: key, at_least (then .holds and exit-code verdict), sample, trials, seed, tol, cert,
    max_seconds, max_memory, threads, decimals; progress.
    Result keys: count, dim, kruskal_lower, kruskal_upper, kruskal_rank (when equal), dependent_subset,
    method, at_least / holds, sample, numerical_rank, warning, seconds.
    An enumeration that runs out of budget before deciding --at-least raises Undecided."""
    wd = Workdir()
    options["at_least"] = at_least
    return _call("kruskal", ["kruskal"], [matrix_file(a, "a", wd)], options, KruskalResult, wd, cert_option="cert")


# ---- attention data sets -------------------------------------------------------------------------------

def _attention_dataset(dataset, queries, labels, wd, extra=None, class_labels=None):
    """DATASET: a path (unchanged), or arrays contexts (T, n, d) [dataset], queries (T, d), and labels:
    `labels` REAL labels (T,) / (T, d_out), or `class_labels` integer classes (T,) -- the file keys of the
    same names (docs/FORMATS.md); both is bad input, as in a file."""
    if labels is not None and class_labels is not None:
        raise ValueError("labels, class_labels: expected either labels (real) or class_labels (integer classes), got both")
    if queries is None and labels is None and class_labels is None and (isinstance(dataset, (str, _os.PathLike))):
        return _os.fspath(dataset)
    if isinstance(dataset, dict):
        given = {k: v for k, v in (("labels", labels), ("class_labels", class_labels)) if v is not None}
        for k in given:
            if dataset.get(k) is not None:
                raise ValueError("%s: given both in the data set dict and as a keyword" % k)
        return dataset_file(dict(dataset, **given), "dataset", wd)
    if queries is None:
        raise ValueError("queries: expected a (T, d) array with contexts (or a data set path)")
    arrays = {"contexts": dataset, "queries": queries, "labels": labels, "class_labels": class_labels}
    arrays.update(extra or {})
    return dataset_file(arrays, "dataset", wd)


def assumptions(contexts, queries=None, labels=None, class_labels=None, **options):
    """memcert assumptions: mahdavi24's Assumptions 1-3, general position and token separation, decided
    exactly, with numpy's numerical ranks (a NumericalWarning when Assumption 2 rests on rounding-level
    directions). contexts: a data set path, a dict of arrays, or the (T, n, d) contexts with queries.
    labels (real) / class_labels (integer classes) are accepted and ignored (the assumptions do not use them).

    Options: tol, budget, separation, max_seconds, max_memory, threads, decimals; progress.
    Verdict (exit code): Assumptions 1 and 2 hold / one fails; an undecided Assumption 1 raises Undecided
    (its .result holds the whole report)."""
    wd = Workdir()
    path = _attention_dataset(contexts, queries, labels, wd, class_labels=class_labels)
    return _call("assumptions", ["assumptions"], [path], options, AssumptionsResult, wd)


def _construct_theorem1(function, command, contexts, queries, labels, heads, dh, class_labels, options):
    wd = Workdir()
    options.update(heads=heads, dh=dh)
    if "saturation" in options:  # the earlier keyword: saturation=False is --no-saturation
        options.setdefault("no_saturation", not options.pop("saturation"))
    path = _attention_dataset(contexts, queries, labels, wd, class_labels=class_labels)
    return _call(function, command, [path], options, Theorem1Result, wd, cert_option="out")


def construct_mahdavi24(contexts, queries=None, labels=None, heads=None, dh=None, class_labels=None, **options):
    """memcert construct mahdavi24: mahdavi24 Theorem 1's weights, certified and re-checked by the
    independent checker. T is the data set's size; the theorem memorizes T* = min(T, H(r-1)+1) examples
    and, when T > T*, generic weights are tried on all T (--beyond generic): .memorized is True only when
    all T are certified, .memorized_count / .not_memorized / .theorem_memorized_count say how many.

    contexts: a data set path, a dict of arrays, or (T, n, d) contexts with queries (T, d) and either
    labels ((T,) / (T, d_out) REAL labels: regression, even when the array has an integer dtype, which the
    result's .notes then say) or class_labels ((T,) integer classes: arg-max memorization); neither:
    generated. Options: heads, dh (required), dv, skip, seed,
    tolerance, c, beyond, data_ref, fit, no_saturation (or saturation=False), no_check, out,
    weights_out, max_seconds, max_memory, threads, decimals; progress.
    .weights: the exact weights (Fraction arrays) from .certificate. A violated hypothesis raises
    HypothesisFailure (.witness); a rank certificate that does not go through raises Undecided."""
    return _construct_theorem1("construct_mahdavi24", ["construct", "mahdavi24"], contexts, queries, labels, heads,
                               dh, class_labels, options)


def construct_theorem1(contexts, queries=None, labels=None, heads=None, dh=None, class_labels=None, **options):
    """memcert construct theorem1: construct_mahdavi24 by its earlier name (the same command)."""
    return _construct_theorem1("construct_theorem1", ["construct", "theorem1"], contexts, queries, labels, heads,
                               dh, class_labels, options)


# ---- other constructions -------------------------------------------------------------------------------

def _sequence_dataset(sequences, labels, token_labels, wd):
    if labels is None and token_labels is None and isinstance(sequences, (str, _os.PathLike)):
        return _os.fspath(sequences)
    if isinstance(sequences, dict):
        return dataset_file(sequences, "dataset", wd)
    return dataset_file({"sequences": sequences, "labels": labels, "token_labels": token_labels}, "dataset", wd)


def construct_ks25(sequences, labels=None, token_labels=None, **options):
    """memcert construct ks25: ks25 Theorem 4.1 built exactly and certified. sequences: a data set path, a
    dict of arrays, or (N, n, d) sequences with labels (N,) / (N, n) and optional token_labels.
    Options: ablation, deep_sets, C, seed, check, out, weights_out, max_seconds, max_memory, threads,
    decimals; progress."""
    wd = Workdir()
    path = _sequence_dataset(sequences, labels, token_labels, wd)
    return _call("construct_ks25", ["construct", "ks25"], [path], options, ConstructResult, wd, cert_option="out")


def construct_ks(sequences, labels=None, token_labels=None, **options):
    """memcert construct ks: construct_ks25 by its earlier name (the same command)."""
    wd = Workdir()
    path = _sequence_dataset(sequences, labels, token_labels, wd)
    return _call("construct_ks", ["construct", "ks"], [path], options, ConstructResult, wd, cert_option="out")


def construct_dana24(dataset, **options):
    """memcert construct dana24: the attention-only Transformer memorizing H d_h + d associations.
    dataset: a token association set (path, or a dict of its arrays). Options: heads, dh (required), d,
    seed, targets, check, out, weights_out, max_seconds, max_memory, threads, decimals; progress."""
    wd = Workdir()
    path = _os.fspath(dataset) if isinstance(dataset, (str, _os.PathLike)) else dataset_file(dataset, "dataset", wd)
    return _call("construct_dana24", ["construct", "dana24"], [path], options, ConstructResult, wd, cert_option="out")


# ---- generate ------------------------------------------------------------------------------------------

_GENERATE_SUFFIX = {"pe": ".npy"}


def generate(kind, **options):
    """memcert generate KIND (mahdavi24 = theorem1, shared, general, ks25 = ks, dana24, pe): writes a data set. out= the
    file (default: a temporary .npz / .npy, kept while the result lives; .load() reads it back)."""
    wd = Workdir()
    if options.get("out") is None:
        options["out"] = wd.file(kind, _GENERATE_SUFFIX.get(kind, ".npz"))
    return _call("generate_" + str(kind), ["generate", str(kind)], [], options, GenerateResult, wd)


def generate_mahdavi24(**options):
    """memcert generate mahdavi24 (T, n, d required; C, seed, kruskal, family, out)."""
    return generate("mahdavi24", **options)


def generate_theorem1(**options):
    """memcert generate theorem1: generate_mahdavi24 by its earlier name (the same command)."""
    return generate("theorem1", **options)


def generate_shared(**options):
    """memcert generate shared (T, n, d required; C, seed, kruskal, out)."""
    return generate("shared", **options)


def generate_general(**options):
    """memcert generate general (T, n, d required; C, seed, kruskal, out)."""
    return generate("general", **options)


def generate_ks25(**options):
    """memcert generate ks25 (N, n, d required; V, C, seed, float64, seq2seq, layout, out). layout="tokens":
    the same data set as token_ids (N, n) + embedding (V, d) in a .npz, as `--layout tokens`."""
    return generate("ks25", **options)


def generate_ks(**options):
    """memcert generate ks: generate_ks25 by its earlier name (the same command)."""
    return generate("ks", **options)


def generate_dana24(**options):
    """memcert generate dana24 (N, S required; T, all, seed, out)."""
    return generate("dana24", **options)


def generate_pe(**options):
    """memcert generate pe (n, d required; out, default a temporary .npy)."""
    return generate("pe", **options)


# ---- claims --------------------------------------------------------------------------------------------

def claims_list(**options):
    """memcert claims list: the registered theory claims (.claims)."""
    return _call("claims_list", ["claims", "list"], [], options, ClaimsResult, Workdir())


def claims_run(id, **options):
    """memcert claims run ID: the claim on generated instances, each certified. Options: instances, seed,
    cert_dir, max_seconds, max_memory, threads; progress."""
    return _call("claims_run", ["claims", "run"], [str(id)], options, ClaimsResult, Workdir())


def claims_search(id, **options):
    """memcert claims search ID --budget B: structured and adversarial instances, any counterexample
    certified. Options: budget (required), seed, cert_dir, max_seconds, max_memory, threads; progress."""
    return _call("claims_search", ["claims", "search"], [str(id)], options, ClaimsResult, Workdir())


# ---- verify and sweep ----------------------------------------------------------------------------------

class VerifyResults(list):
    """verify([A, B, ...]): one VerifyResult per certificate, in the order given, as `memcert verify A B ...`
    reports one line per certificate. exit_code is that command's status: 0 when every certificate is
    valid, else the most severe of theirs, 2 (bad input) before 1 (rejected) before 3 (undecided)."""

    @property
    def exit_code(self):
        codes = {r.exit_code for r in self}
        return next((c for c in (EXIT_BAD_INPUT, EXIT_NEGATIVE, EXIT_UNDECIDED) if c in codes), EXIT_HOLDS)

    @property
    def valid(self):
        return all(r.get("valid") is True for r in self)


def _verify_each(certs, options):
    """verify of a list: each certificate checked on its own with the same options (and its own budget,
    as the command line gives each); bad input or an undecided check is that certificate's result
    (bad_input / undecided true, exit_code 2 / 3), never an exception that hides the others'."""
    if not certs:
        raise ValueError("verify: expected at least one certificate, got an empty list")
    out = VerifyResults()
    for cert in certs:
        try:
            out.append(verify(cert, **dict(options)))
        except Undecided as e:
            out.append(e.result if e.result is not None else VerifyResult(
                ["verify"], EXIT_UNDECIDED, {"valid": False, "kind": "", "claim": "", "undecided": True,
                                            "reason": str(e)}, "", "", None, None))
        except HypothesisFailure:
            raise
        except ValueError as e:  # bad input: the command line's one-line message
            out.append(VerifyResult(["verify"], EXIT_BAD_INPUT, {"valid": False, "kind": "", "claim": "",
                                                                 "bad_input": True, "reason": str(e)},
                                    "", str(e), None, None))
    return out


def verify(cert, **options):
    """memcert verify: the independent checker's verdict on a certificate: a path (as on the command
    line), a dict, or JSON text (str starting with '{', or bytes). Options: data (a path, or a dict of
    arrays), max_seconds (default 60, as the command line's), max_memory, threads, decimals.
    Result: valid, kind, claim, reason (and the command's other keys). A rejected certificate is a
    result with valid False; a check over its budget raises Undecided.
    A list (or tuple) of certificates is `memcert verify A B ...`: a VerifyResults list, one result per
    certificate in order, bad input and undecided ones included as results (bad_input / undecided
    true) rather than raised; its exit_code is the command line's."""
    if isinstance(cert, (list, tuple)):
        return _verify_each(cert, options)
    wd = Workdir()
    path = json_file(cert, "cert", wd)
    if isinstance(options.get("data"), dict):
        options["data"] = dataset_file(options["data"], "data", wd)
    result = _call("verify", ["verify"], [path], options, VerifyResult, wd, default_max_seconds=60.0)
    result.__dict__["cert_path"] = path
    return result


def sweep(spec, out, **options):
    """memcert sweep SPEC --out DIR: a grid of constructions or claims (resumable). spec: a path or a
    dict (written to a file); each cell runs the memcert executable (memcert.executable()).
    Options: progress (the command line's --progress flag is progress_flag=True), max_seconds,
    max_memory, threads."""
    wd = Workdir()
    path = json_file(spec, "spec", wd)
    options["out"] = _os.fspath(out)
    if not executable():
        raise RuntimeError("memcert.sweep runs each cell with the memcert executable, and none was found "
                           "(set MEMCERT_EXE, or put memcert on PATH)")
    return _call("sweep", ["sweep"], [path], options, SweepResult, wd)


# ---- signatures: each function's keywords are its command's options (for help() and completion) -----

def _set_signatures():
    import inspect
    commands = {rank: ["rank"], kruskal: ["kruskal"], assumptions: ["assumptions"],
                construct_mahdavi24: ["construct", "mahdavi24"], construct_theorem1: ["construct", "theorem1"],
                construct_ks25: ["construct", "ks25"], construct_ks: ["construct", "ks"],
                construct_dana24: ["construct", "dana24"], claims_list: ["claims", "list"],
                claims_run: ["claims", "run"], claims_search: ["claims", "search"], verify: ["verify"],
                sweep: ["sweep"], generate_mahdavi24: ["generate", "mahdavi24"], generate_theorem1: ["generate", "theorem1"],
                generate_shared: ["generate", "shared"], generate_general: ["generate", "general"],
                generate_ks25: ["generate", "ks25"], generate_ks: ["generate", "ks"],
                generate_dana24: ["generate", "dana24"], generate_pe: ["generate", "pe"], certify: ["certify"]}
    for f, command in commands.items():
        sig = inspect.signature(f)
        params = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
        taken = {p.name for p in params}
        names = sorted(command_options(command) - taken)
        if "progress" in names:  # the command's own --progress flag (sweep)
            names = [n if n != "progress" else "progress_flag" for n in names]
        params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in names]
        params.append(inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=None))
        f.__signature__ = sig.replace(parameters=params)


try:
    _set_signatures()
except Exception:  # introspection only: never a reason for the import to fail
    pass
