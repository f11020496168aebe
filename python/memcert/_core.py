"""Running a memcert command in process, and what goes in and out of it.

Every public function of the package is a thin wrapper over `run_command`: its arguments become the
command line of `memcert` (keyword `foo_bar=` is the option `--foo-bar`), in-memory inputs are written to
a private temporary directory in the formats the command line reads, and the command runs in this
process through the same code as the `memcert` executable (memcert._memcert._run) with `--json`.
"""
import difflib
import json
import os
import re
import shutil
import tempfile
import warnings
from fractions import Fraction

from . import _memcert

__all__ = ["MemcertError", "HypothesisFailure", "Undecided", "NumericalWarning"]

EXIT_HOLDS, EXIT_NEGATIVE, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3


class MemcertError(Exception):
    """Base of memcert's own exceptions (bad input is ValueError, as for any Python function)."""


class HypothesisFailure(MemcertError, ValueError):
    """The data violate a theorem's hypotheses (the command's exit 1 with a witness).

    .witness: the witness (a dict); .result: the command's full result."""

    def __init__(self, message, witness=None, result=None):
        super().__init__(message)
        self.witness = witness
        self.result = result


class Undecided(MemcertError):
    """The command ran but decided nothing (exit 3: over a budget, an enumeration out of budget, a
    certificate that did not go through). .result: the command's result when it printed one, else None."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


class NumericalWarning(UserWarning):
    """A warning the command line prints (e.g. the exact rank rests on rounding-level directions)."""


# ---- the executable that child commands run (sweep's cells) -------------------------------------------

def executable():
    """The `memcert` executable: $MEMCERT_EXE, the one installed with this package, the one of the build
    tree this module was built in, or `memcert` on PATH ("" when none is found)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.environ.get("MEMCERT_EXE", ""), os.path.join(here, "bin", "memcert"), _memcert.BUILD_EXECUTABLE,
                 shutil.which("memcert") or ""):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return ""


# ---- progress ------------------------------------------------------------------------------------------

class _TqdmProgress:
    """progress(label, done, total) drawn with tqdm, one bar per stage."""

    def __init__(self, tqdm):
        self.tqdm, self.bar, self.label = tqdm, None, None

    def __call__(self, label, done, total):
        if label != self.label or self.bar is None:
            self.close()
            self.bar, self.label = self.tqdm(total=total, desc=label, leave=False), label
        self.bar.total = total
        self.bar.n = min(done, total)
        self.bar.refresh()
        if done >= total:
            self.close()

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar, self.label = None, None


def _progress_callback(progress):
    """progress=: None/True -> tqdm when installed (else nothing), False -> nothing, a callable -> it."""
    if progress is False:
        return None
    if callable(progress):
        return progress
    try:
        from tqdm.auto import tqdm
    except Exception:  # tqdm not installed: no progress display
        return None
    return _TqdmProgress(tqdm)


# ---- inputs --------------------------------------------------------------------------------------------

class Workdir:
    """A private temporary directory holding a call's input and output files; removed with the last
    result that refers to it (the certificate is read from it on demand)."""

    def __init__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="memcert-")
        self.path = self._tmp.name
        self.names = {}  # file path -> the argument it holds (for messages)
        self.arrays = []  # files holding copies of array arguments (removed after the run)
        self._count = 0

    def release_inputs(self):
        """Removes the copies of array arguments (they can be large); the command's outputs stay."""
        for p in self.arrays:
            try:
                os.remove(p)
            except OSError:
                pass
        self.arrays = []

    def file(self, stem, suffix, argument=None):
        self._count += 1
        p = os.path.join(self.path, "%s-%d%s" % (stem, self._count, suffix))
        if argument is not None:
            self.names[p] = argument
        return p


def _is_pathlike(x):
    return isinstance(x, (str, os.PathLike))


def _exact_text(x, name, where):
    """One Python number as exact text (the command line's exact number syntax)."""
    import numpy as np
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if f != f or f in (float("inf"), float("-inf")):
            raise ValueError("%s: %s: expected a finite number, got %r" % (name, where, f))
        q = Fraction(f)
        return str(q)
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, str):  # as written: the command reads it as exact text (under --decimals)
        return x
    raise ValueError("%s: %s: expected an exact number (int, float, Fraction or numeric str), got %s"
                     % (name, where, type(x).__name__))


def _exact_nested(a, name, prefix=""):
    """An object array (or nested list) as nested lists of exact number strings."""
    import numpy as np
    if isinstance(a, np.ndarray):
        if a.ndim == 0:
            return _exact_text(a.item(), name, prefix or "[]")
        return [_exact_nested(a[i], name, "%s[%d]" % (prefix, i)) for i in range(a.shape[0])]
    if isinstance(a, (list, tuple)):
        return [_exact_nested(v, name, "%s[%d]" % (prefix, i)) for i, v in enumerate(a)]
    return _exact_text(a, name, prefix or "[]")


def _numeric_array(x, name):
    """x as a numpy array of a dtype the command line reads in .npy (bool, integers, float16/32/64), in
    native byte order, or None when it holds other objects (Fractions, strings: written as exact JSON)."""
    import numpy as np
    if isinstance(x, np.ndarray):
        a = x
    else:
        try:
            a = np.asarray(x)
        except Exception:
            return None
    if a.dtype.kind in "biu" or (a.dtype.kind == "f" and a.dtype.itemsize in (2, 4, 8)):
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        return a
    if a.dtype.kind in "OUS":  # Python objects, strings: exact JSON
        return None
    raise ValueError("%s: expected an array of bool, integers, float16/float32/float64 or exact Python numbers, "
                     "got dtype %s" % (name, a.dtype))


def matrix_file(x, name, wd):
    """A matrix argument as a file the command reads: a path unchanged, a numeric numpy array as .npy in
    its own dtype, anything else (object arrays, lists of Fractions) as exact JSON."""
    import numpy as np
    if _is_pathlike(x):
        return os.fspath(x)
    a = _numeric_array(x, name)
    if a is not None:
        if a.ndim != 2:
            raise ValueError("%s: expected a 2-d array, got shape %s" % (name, tuple(a.shape)))
        p = wd.file(name, ".npy", name)
        wd.arrays.append(p)
        np.save(p, a, allow_pickle=False)
        return p
    rows = _exact_nested(x, name)
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise ValueError("%s: expected a 2-d array" % name)
    p = wd.file(name, ".json", name)
    wd.arrays.append(p)
    with open(p, "w") as f:
        json.dump({"rows": len(rows), "cols": len(rows[0]), "data": rows}, f)
    return p


def dataset_file(arrays, name, wd):
    """A data set given as arrays {key: array-like} (None values left out): .npz when every array is
    numeric (each in its own dtype), else exact JSON."""
    import numpy as np
    arrays = {k: v for k, v in arrays.items() if v is not None}
    numeric = {}
    for k, v in arrays.items():
        if isinstance(v, (list, tuple)) and v and all(isinstance(c, np.ndarray) for c in v):
            v = np.stack(v)  # contexts as a list of (n, d) arrays
        a = _numeric_array(v, k)
        if a is None:
            numeric = None
            break
        numeric[k] = a
    if numeric is not None:
        p = wd.file(name, ".npz", name)
        wd.arrays.append(p)
        np.savez(p, **numeric)
        return p
    p = wd.file(name, ".json", name)
    wd.arrays.append(p)
    with open(p, "w") as f:
        json.dump({k: _exact_nested(v, k) for k, v in arrays.items()}, f)
    return p


def json_file(x, name, wd):
    """A JSON argument (certificate, spec): a path unchanged, JSON text (a str starting with '{') or bytes
    or a dict written to a file."""
    if isinstance(x, bytes):
        x = x.decode("utf-8")
    if isinstance(x, str) and x.lstrip().startswith(("{", "[")):
        text = x
    elif _is_pathlike(x):
        return os.fspath(x)
    else:
        text = json.dumps(x)
    p = wd.file(name, ".json", name)
    with open(p, "w") as f:
        f.write(text)
    return p


# ---- options -------------------------------------------------------------------------------------------

GLOBAL_OPTIONS = ("threads", "quiet", "decimals")
_help_cache = {}


def command_options(command):
    """The option names (without dashes, dashes as underscores) the command line accepts for `command`
    (a list such as ["construct", "theorem1"]), read from its own --help."""
    key = tuple(command)
    if key not in _help_cache:
        code, _, human, _ = _memcert._run(list(command) + ["--help"])
        names = set()
        for line in human.splitlines():
            # An option's line: "  -h,--help   text" / "  --heads UINT ... REQUIRED   text" (descriptions
            # that wrap are indented further); the names are in its first column.
            if re.match(r"^ {2}-", line):
                for opt in re.findall(r"(?<![\w-])--([A-Za-z][\w-]*)", re.split(r"\s{2,}", line.strip())[0]):
                    names.add(opt.replace("-", "_"))
        names.discard("help")
        names.discard("json")
        _help_cache[key] = names | set(GLOBAL_OPTIONS)
    return _help_cache[key]


def check_keywords(function, given, allowed):
    """TypeError naming the first keyword the function does not take (and the close match), never the
    values passed."""
    for k in given:
        if k not in allowed:
            close = difflib.get_close_matches(k, sorted(allowed), n=1, cutoff=0.6)
            raise TypeError("%s() got an unexpected keyword argument %r%s" % (
                function, k, "; did you mean %r?" % close[0] if close else ""))


def option_args(options, cli_names=None):
    """Keyword options -> command-line words: True -> the flag, False/None -> nothing, a list -> the
    option repeated, anything else -> --name value (os.PathLike as its path)."""
    words = []
    for k, v in options.items():
        if v is None or v is False:
            continue
        flag = "--" + (cli_names or {}).get(k, k.replace("_", "-"))
        if v is True:
            words.append(flag)
        elif isinstance(v, (list, tuple)):
            for item in v:
                words += [flag, str(item)]
        else:
            words += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
    return words


# ---- running -------------------------------------------------------------------------------------------

def _clean_message(text, wd):
    """The command line's one-line message, its temporary file paths named after the arguments."""
    line = text.strip().splitlines()[-1] if text.strip() else ""
    if line.startswith("memcert: "):
        line = line[len("memcert: "):]
    if wd is not None:
        for path, arg in sorted(wd.names.items(), key=lambda kv: -len(kv[0])):
            line = line.replace(path, arg)
        line = line.replace(wd.path + os.sep, "")
    return line


def _caller_level():
    """warnings.warn's stacklevel of the first frame outside this package (the user's call)."""
    import sys
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "memcert":
        frame, level = frame.f_back, level + 1
    return level


def run_command(command, words, wd, result_class, progress=None, max_seconds=None, default_max_seconds=0.0,
                cert_path=None):
    """Run `memcert COMMAND WORDS... --json` in process and map its exit code to a result or exception."""
    argv = list(command) + list(words) + ["--json"]
    if max_seconds is not None:
        argv += ["--max-seconds", str(max_seconds)]
    seconds = default_max_seconds if max_seconds is None else float(max_seconds)
    callback = _progress_callback(progress)
    try:
        code, json_text, human, err = _memcert._run(argv, callback, seconds, executable())
    finally:
        if isinstance(callback, _TqdmProgress):
            callback.close()
    data = None
    if json_text:
        try:
            data = json.loads(json_text)
        except ValueError:
            data = None
    result = result_class(command, code, data, human, err, wd, cert_path) if data is not None else None
    # The copies of array arguments go now, unless the certificate names its data set by file.
    if wd is not None and not (data is not None and data.get("data_ref") is True):
        wd.release_inputs()
    if result is not None:
        for w in result.warnings:
            warnings.warn(w, NumericalWarning, stacklevel=_caller_level())
    if code == EXIT_BAD_INPUT:
        raise ValueError(_clean_message(err, wd) or "bad input")
    if code == EXIT_UNDECIDED:
        msg = _clean_message(err, wd)
        if not msg and data is not None and isinstance(data.get("undecided"), str):
            msg = data["undecided"]
        if not msg:  # the summary line that says what is undecided (e.g. Assumption 1's)
            msg = next((l.strip() for l in human.splitlines() if "undecided" in l.lower()), "")
            msg = _clean_message(msg, wd)
        raise Undecided(msg or "undecided", result)
    if code == EXIT_NEGATIVE and data is not None and ("hypothesis_failure" in data or "witness" in data):
        raise HypothesisFailure(str(data.get("hypothesis_failure", "hypothesis failure")), data.get("witness"), result)
    if code not in (EXIT_HOLDS, EXIT_NEGATIVE):  # e.g. sweep's 70: a cell crashed
        raise MemcertError(_clean_message(err, wd) or "memcert exited with status %d" % code)
    if result is None:
        raise Undecided(_clean_message(err, wd) or "the command printed no result (exit %d)" % code)
    return result


for _cls in (MemcertError, HypothesisFailure, Undecided, NumericalWarning):
    _cls.__module__ = "memcert"  # shown as memcert.Undecided in tracebacks
