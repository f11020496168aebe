"""memcert.certify: `memcert certify MODEL DATA --arch NAME` on a model and a data set held in Python.

A model (torch.nn.Module, state_dict or path) and a data set (arrays or path) become the files the command
reads: a path is passed unchanged; anything in memory is written as .npz, every tensor in a dtype the
command reads and holding the same numbers (float16, float32, float64, integers and bool as they are;
bfloat16, which numpy lacks, widened to float32, which holds every bfloat16 value exactly). Nothing is
ever rounded. The command runs in process with --json and --margins-out; docs/MODELS.md has the meaning.
"""
import json
import os

from . import _memcert
from ._core import (Undecided, Workdir, _exact_nested, _numeric_array, check_keywords, command_options,
                    option_args, run_command)
from .results import CertifyResult, Margins

__all__ = ["certify", "has_command", "state_dict_arrays", "model_file", "data_arrays", "data_file"]

ARCHS = ("mahdavi24-baseline", "dana24-aot", "mha")
# What X and y are called in each architecture's data file (docs/MODELS.md, "Data files").
_XY_KEYS = {"mahdavi24-baseline": ("X", "y"), "dana24-aot": ("sequences", "next")}
_MARGIN_KEYS = ("verdict", "margin_lo", "margin_hi", "float32_margin", "float32_error_bound", "bits")
_commands = {}


def has_command(*words):
    """Whether this build of memcert has the command `words` (e.g. has_command("certify")): its --help
    runs and exits 0."""
    key = tuple(words)
    if key not in _commands:
        try:
            code = _memcert._run(list(words) + ["--help"])[0]
        except Exception:
            code = -1
        _commands[key] = code == 0
    return _commands[key]


# ---- tensors -------------------------------------------------------------------------------------------

def _is_torch_tensor(v):
    return type(v).__module__.split(".")[0] == "torch" and hasattr(v, "detach") and hasattr(v, "dtype")


def exact_array(v, name):
    """One tensor / array as a numpy array of a dtype the command reads, holding exactly the same numbers:
    torch tensors detached and copied to the CPU, bfloat16 (torch's or ml_dtypes') widened to float32,
    non-native byte order swapped; float16/float32/float64, integers and bool kept in their dtype.
    Anything else (complex, float128, objects, sparse or quantized tensors) is a ValueError naming `name`."""
    import numpy as np
    if _is_torch_tensor(v):
        import torch
        if getattr(v, "is_sparse", False) or v.layout != torch.strided:
            raise ValueError("%s: expected a dense tensor, got layout %s" % (name, str(v.layout).replace("torch.", "")))
        if getattr(v, "is_quantized", False):
            raise ValueError("%s: expected a float or integer tensor, got quantized dtype %s"
                             % (name, str(v.dtype).replace("torch.", "")))
        t = v.detach().cpu()
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)  # every bfloat16 is a float32 (its upper 16 bits): exact
        if t.is_complex():
            raise ValueError("%s: expected a real tensor, got %s" % (name, str(t.dtype).replace("torch.", "")))
        a = t.contiguous().numpy()
    elif isinstance(v, np.ndarray):
        a = v
    elif isinstance(v, (list, tuple, int, float, bool, np.generic)):
        a = np.asarray(v)
    else:
        raise ValueError("%s: expected a torch tensor or a numpy array, got %s" % (name, type(v).__name__))
    if a.dtype.name == "bfloat16":  # ml_dtypes' bfloat16 (e.g. from JAX)
        a = a.astype(np.float32)
    if not (a.dtype.kind in "biu" or (a.dtype.kind == "f" and a.dtype.itemsize in (2, 4, 8))):
        raise ValueError("%s: expected float16, bfloat16, float32, float64, integer or bool values, got dtype %s"
                         % (name, a.dtype))
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a if a.flags.c_contiguous else a.copy(order="C")  # (np.ascontiguousarray makes a scalar 1-d)


def state_dict_arrays(model):
    """A model held in memory as {key: numpy array}: a torch.nn.Module (its state_dict(): parameters and
    buffers), a state_dict (a dict of tensors or numpy arrays), or a checkpoint dict whose "state_dict"
    entry is one (as PyTorch Lightning and mahdavi24's Trainer save them). Values exactly as exact_array."""
    if hasattr(model, "state_dict") and callable(model.state_dict) and not isinstance(model, dict):
        sd = model.state_dict()
    elif isinstance(model, dict):
        sd = model
        if isinstance(sd.get("state_dict"), dict):
            sd = sd["state_dict"]
    else:
        raise ValueError("model: expected a torch.nn.Module, a state_dict (dict of tensors or arrays) or a path "
                         "(.pt, .safetensors, .npz), got %s" % type(model).__name__)
    if not sd:
        raise ValueError("model: the state_dict is empty")
    out = {}
    for k, v in sd.items():
        if not isinstance(k, str):
            raise ValueError("model: expected str keys, got a key of type %s" % type(k).__name__)
        out[k] = exact_array(v, "model: %s" % k)
    return out


def _write_npz(path, arrays):
    """numpy.savez(path, **arrays), atomically (a temporary name, then renamed): never half a file."""
    import numpy as np
    tmp = path + ".tmp-%d" % os.getpid()
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    return path


def model_file(model, wd, dest=None, absolute=False):
    """MODEL as the command reads it: a path unchanged (made absolute when `absolute`, so that a
    certificate naming it holds wherever it is verified from), else the state_dict written as .npz to
    `dest` or into the private directory `wd`."""
    if isinstance(model, (str, os.PathLike)):
        return os.path.abspath(os.fspath(model)) if absolute else os.fspath(model)
    arrays = state_dict_arrays(model)
    if dest:
        return _write_npz(os.path.abspath(os.fspath(dest)), arrays)
    p = wd.file("model", ".npz", "model")
    wd.arrays.append(p)
    return _write_npz(p, arrays)


def data_arrays(arch, X=None, y=None, data=None):
    """The data set as {key: array}, or a path (str) when `data` is one. mahdavi24-baseline: X (T, n+1, d_in),
    y (T,) -> {"X", "y"}; dana24-aot: X the sequences (T, S), y the next tokens (T,) -> {"sequences", "next"};
    mha: data= only (a path, or a dict of contexts, queries and labels or class_labels)."""
    if data is not None:
        if X is not None or y is not None:
            raise TypeError("certify() takes the data either as X and y or as data=, not both")
        if isinstance(data, (str, os.PathLike)):
            return os.fspath(data)
        if not isinstance(data, dict):
            raise ValueError("data: expected a path or a dict of arrays, got %s" % type(data).__name__)
        return {k: v for k, v in data.items() if v is not None}
    if X is None:
        raise TypeError("certify() needs the data set: X and y, or data= (a path or a dict of arrays)")
    if arch not in _XY_KEYS:
        raise TypeError("certify(arch=%r) reads its data set from data= (a path, or a dict with contexts, queries "
                        "and labels or class_labels), not from X and y" % arch)
    if y is None:
        raise TypeError("certify() needs y, the targets of X (class labels or regression targets)")
    kx, ky = _XY_KEYS[arch]
    return {kx: X, ky: y}


def data_file(arch, X, y, data, wd, dest=None, absolute=False):
    """DATA as the command reads it: a path unchanged (made absolute when `absolute`), else the arrays
    written as .npz (exactly, as exact_array) to `dest` or into `wd`. An mha data set given as exact
    Python numbers (lists or object arrays of Fractions, numeric strings) is written as exact JSON
    instead (`dest` then ends in .json), as memcert.assumptions writes one."""
    arrays = data_arrays(arch, X, y, data)
    if isinstance(arrays, str):
        return os.path.abspath(arrays) if absolute else arrays
    converted, exact_json = {}, False
    for k, v in arrays.items():
        if arch == "mha" and not _is_torch_tensor(v) and _numeric_array(v, "data: " + k) is None:
            exact_json = True  # Fractions / numeric strings: the JSON data set, every number as exact text
            converted[k] = v
        else:
            converted[k] = exact_array(v, "data: %s" % k)
    if exact_json:
        text = json.dumps({k: _exact_nested(v, k) for k, v in converted.items()})
        if dest:
            p = os.path.abspath(os.fspath(dest))
            p = (p[:-len(".npz")] if p.endswith(".npz") else p) + ".json" if not p.endswith(".json") else p
        else:
            p = wd.file("data", ".json", "data")
            wd.arrays.append(p)
        tmp = p + ".tmp-%d" % os.getpid()
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, p)
        return p
    if dest:
        return _write_npz(os.path.abspath(os.fspath(dest)), converted)
    p = wd.file("data", ".npz", "data")
    wd.arrays.append(p)
    return _write_npz(p, converted)


def _beside(out, what):
    """<out without .json>.<what>.npz: the default home of a model or data file a certificate names."""
    stem = os.fspath(out)
    if stem.endswith(".json"):
        stem = stem[:-len(".json")]
    return stem + "." + what + ".npz"


def _load_margins(path):
    import numpy as np
    with np.load(path, allow_pickle=False) as z:
        return Margins({k: np.array(z[k]) for k in z.files})


# ---- the function --------------------------------------------------------------------------------------

_OWN = {"arch", "heads", "tolerance", "out", "margins_out", "model_out", "data_out", "progress"}


def certify(model, X=None, y=None, *, arch, data=None, heads=None, tolerance=None, out=None, threads=None,
            progress=None, model_out=None, data_out=None, margins_out=None, **options):
    """memcert certify: which examples a trained model gets right, decided in exact real arithmetic for the
    weights exactly as stored (docs/MODELS.md).

    model: a torch.nn.Module, a state_dict (dict of torch tensors or numpy arrays, or a checkpoint dict
    with a "state_dict" entry), or a path (.pt/.pth/.ckpt, .safetensors, .npz).
    Data: X and y (mahdavi24-baseline: X (T, n+1, d_in) with the query first, y (T,) classes or targets;
    dana24-aot: X the token sequences (T, S), y the next tokens (T,)), or data= a path or a dict of arrays
    (the only form for mha: contexts, queries and labels or class_labels).
    arch: "mahdavi24-baseline", "dana24-aot" or "mha"; heads: sub-heads per attention (dana24-aot, mha);
    tolerance: regression's tolerance (exact decimal or p/q, required for regression).
    out: write the certificate there (kind "model"; .certificate reads it). The certificate names its
    model and data files, so those must outlive the call: paths given are named as absolute paths; a model
    or data set held in memory is written to model_out / data_out, by default beside the certificate as
    <out>.model.npz / <out>.data.npz (<out> without its .json). Without out, no certificate is written and
    every temporary file is gone when the call returns.
    margins_out: also keep the per-example margins file there (.margins has them either way).
    threads, progress, and the command's other options (max_seconds, max_memory, ...) as everywhere.

    Returns a CertifyResult (.verdict True: all correct, False: some certified wrong; .margins: numpy
    arrays per example). Bad input raises ValueError; an undecided example (exit 3) raises
    memcert.Undecided whose .result is the full CertifyResult, margins included."""
    if not has_command("certify"):
        raise RuntimeError("this build of memcert has no `certify` command (memcert %s)" % _memcert.__version__)
    allowed = command_options(["certify"]) | _OWN | {"threads"}
    check_keywords("certify", options, allowed)
    if not isinstance(arch, str):
        raise TypeError("certify(): arch must be a str (%s)" % ", ".join(ARCHS))
    wd = Workdir()
    written = []  # files written outside wd for the certificate (removed again unless one was written)
    keep = False
    try:
        if out is not None:
            out = os.fspath(out)
            mdest = None if isinstance(model, (str, os.PathLike)) else (model_out or _beside(out, "model"))
            ddest = None if isinstance(data, (str, os.PathLike)) else (data_out or _beside(out, "data"))
            mpath = model_file(model, wd, dest=mdest, absolute=True)
            if mdest:
                written.append(mpath)
                wd.names[mpath] = "model"  # messages name the argument, as for a temporary file
            dpath = data_file(arch, X, y, data, wd, dest=ddest, absolute=True)
            if ddest:
                written.append(dpath)
                wd.names[dpath] = "data"
        else:
            if model_out is not None or data_out is not None:
                raise TypeError("certify(): model_out and data_out name the files a certificate refers to; "
                                "give out= too")
            mpath = model_file(model, wd)
            dpath = data_file(arch, X, y, data, wd)
        margins_path = os.fspath(margins_out) if margins_out is not None else wd.file("margins", ".npz")
        opts = dict(options)
        max_seconds = opts.pop("max_seconds", None)
        opts.update(arch=arch, heads=heads, tolerance=tolerance, out=out, margins_out=margins_path,
                    threads=threads)
        words = [mpath, dpath] + option_args(opts)
        result = None
        try:
            result = run_command(["certify"], words, wd, CertifyResult, progress=progress,
                                 max_seconds=max_seconds, cert_path=out)
        except Undecided as e:
            result = e.result
            raise
        finally:
            if result is not None:
                result.__dict__["_workdir"] = None
                if os.path.isfile(margins_path):
                    result.__dict__["_margins"] = _load_margins(margins_path)
                keep = bool(out) and os.path.isfile(out)
        return result
    finally:
        wd.release_inputs()
        wd._tmp.cleanup()
        if written and not keep:
            for p in written:  # the command wrote no certificate: nothing of ours stays behind either
                try:
                    os.remove(p)
                except OSError:
                    pass
