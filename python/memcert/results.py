"""Typed results: one class per command family over the command's --json object.

Every key of the JSON object is an attribute (and an item: result["T"]); `.to_json()` is exactly the
object `memcert ... --json` prints; `.certificate` is read on demand from the file the command wrote;
`str(result)` is the command line's human summary; `repr` fits on one screen whatever the size.
"""
import html
import json
from fractions import Fraction

__all__ = ["Result", "RankResult", "KruskalResult", "AssumptionsResult", "ConstructResult", "Theorem1Result",
           "GenerateResult", "ClaimsResult", "VerifyResult", "SweepResult", "CertifyResult", "Margins"]

REPR_LIMIT = 1500  # characters: a result's repr never exceeds this, whatever the data's size


def _short(value, limit=60):
    """A JSON value as short text: long lists as their first items and their length."""
    if isinstance(value, list):
        if len(value) > 8 or len(json.dumps(value)) > limit:
            head = ", ".join(_short(v, 20) for v in value[:6])
            return "[%s, ... (%d in all)]" % (head, len(value))
        return "[" + ", ".join(_short(v, 20) for v in value) + "]"
    if isinstance(value, dict):
        text = json.dumps(value)
        return text if len(text) <= limit else "{%d keys}" % len(value)
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Result:
    """The result of one memcert command (see the subclasses)."""

    #: JSON keys shown by repr / _repr_html_ (when present), after the verdict
    key_fields = ()
    #: JSON keys listing items not decided / not memorized (shown truncated)
    item_fields = ()

    def __init__(self, command, exit_code, data, human, stderr, workdir, cert_path):
        self.__dict__["_data"] = data
        self.__dict__["command"] = " ".join(command)
        self.__dict__["exit_code"] = exit_code
        self.__dict__["summary"] = human  # the command line's human output
        self.__dict__["stderr"] = stderr
        self.__dict__["_workdir"] = workdir  # keeps the files the command wrote
        self.__dict__["cert_path"] = cert_path
        self.__dict__["_certificate"] = None
        lines = human.splitlines() + [l[len("memcert: "):] for l in stderr.splitlines() if l.startswith("memcert: ")]
        self.__dict__["warnings"] = [l[len("warning: "):] for l in lines if l.startswith("warning: ")]
        # How the input was read (e.g. integer-dtype labels taken as REAL labels): the JSON's "notes", [] if none.
        self.__dict__["notes"] = list((data or {}).get("notes", []))

    # -- the JSON object
    def to_json(self):
        """The command's --json object (a dict, exactly as `memcert ... --json` prints it)."""
        return json.loads(json.dumps(self._data))

    def keys(self):
        return self._data.keys()

    def __getitem__(self, key):
        return self._data[key]

    def __contains__(self, key):
        return key in self._data

    def get(self, key, default=None):
        return self._data.get(key, default)

    def __getattr__(self, name):
        data = self.__dict__.get("_data") or {}
        if name in data:
            return data[name]
        raise AttributeError("%s has no attribute %r (its JSON keys: %s)" % (
            type(self).__name__, name, ", ".join(sorted(data)[:40])))

    def __setattr__(self, name, value):
        raise AttributeError("%s is read-only" % type(self).__name__)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    # -- certificate
    @property
    def certificate(self):
        """The certificate the command wrote (a dict, read on first use), or None when none was written."""
        if self._certificate is None and self.cert_path:
            try:
                with open(self.cert_path) as f:
                    self.__dict__["_certificate"] = json.load(f)
            except FileNotFoundError:
                return None
        return self._certificate

    # -- verdict and display
    @property
    def verdict(self):
        """True / False / None (undecided), by the command's exit code: 0 holds, 1 negative."""
        return {0: True, 1: False}.get(self.exit_code)

    def verdict_text(self):
        return {True: "holds", False: "NEGATIVE", None: "undecided"}[self.verdict]

    def _fields(self):
        out = []
        for k in self.key_fields:
            if k in self._data:
                out.append((k, _short(self._data[k])))
        return out

    def _items(self):
        out = []
        for k in self.item_fields:
            v = self._data.get(k)
            if v:
                out.append((k, _short(v)))
        return out

    def __repr__(self):
        parts = ["%s=%s" % kv for kv in self._fields() + self._items()]
        if self.warnings:
            parts.append("warnings=%d" % len(self.warnings))
        if self.cert_path:
            parts.append("certificate=<%s>" % ("on demand" if self._certificate is None else "loaded"))
        text = "<%s %s: %s; %s>" % (type(self).__name__, self.command, self.verdict_text(), ", ".join(parts))
        if len(text) > REPR_LIMIT:
            text = text[:REPR_LIMIT - 5] + " ...>"
        return text

    def __str__(self):
        return self.summary

    def _repr_html_(self):
        rows = [("command", "memcert " + self.command), ("verdict", self.verdict_text())]
        rows += self._fields() + self._items()
        rows += [("warning", w[:300]) for w in self.warnings]
        cells = "".join("<tr><th style='text-align:left'>%s</th><td style='text-align:left'>%s</td></tr>"
                        % (html.escape(k), html.escape(str(v))) for k, v in rows)
        return "<table><caption>%s</caption>%s</table>" % (html.escape(type(self).__name__), cells)


class RankResult(Result):
    key_fields = ("rank", "rank_lower", "rank_upper", "rows", "cols", "storage", "method", "numerical_rank")

    def verdict_text(self):
        return "rank %s" % self._data.get("rank")


class KruskalResult(Result):
    key_fields = ("kruskal_rank", "kruskal_lower", "kruskal_upper", "count", "dim", "method", "at_least", "holds",
                  "numerical_rank")
    item_fields = ("dependent_subset",)

    def verdict_text(self):
        if "at_least" in self._data:
            return "Kruskal rank >= %s: %s" % (self._data["at_least"], {True: "holds", False: "fails", None: "undecided"}[
                self._data.get("holds")])
        if "kruskal_rank" in self._data:
            return "Kruskal rank %s" % self._data["kruskal_rank"]
        return "%s <= Kruskal rank <= %s" % (self._data.get("kruskal_lower"), self._data.get("kruskal_upper"))


class AssumptionsResult(Result):
    key_fields = ("T", "n", "d")

    def _fields(self):
        out = list(super()._fields())
        for k in ("assumption1", "assumption2", "assumption3", "general_position"):
            v = self._data.get(k)
            if isinstance(v, dict):
                out.append((k, {True: "holds", False: "FAILS", None: "undecided"}.get(v.get("holds"), "?")))
        num = self._data.get("numerical")
        if isinstance(num, dict) and num.get("contexts_rank_below_n"):
            out.append(("numerically deficient contexts", _short(num["contexts_rank_below_n"])))
        return out

    def _items(self):
        a2 = self._data.get("assumption2") or {}
        return [("assumption2.failing", _short(a2["failing"]))] if a2.get("failing") else []


def _fraction_matrix(m):
    """A certificate matrix ({"rows","cols","data"} or a list of rows of exact strings) as a numpy object
    array of fractions.Fraction."""
    import numpy as np
    rows = m["data"] if isinstance(m, dict) else m
    nr = m["rows"] if isinstance(m, dict) else len(rows)
    nc = m["cols"] if isinstance(m, dict) else (len(rows[0]) if rows else 0)
    out = np.empty((nr, nc), dtype=object)
    for i in range(nr):
        for j in range(nc):
            out[i, j] = Fraction(str(rows[i][j]))
    return out


class _Weights:
    def __init__(self, heads, WO, WD):
        self.heads, self.WO, self.WD = heads, WO, WD

    def __repr__(self):
        return "<weights: %d heads, WO %s, WD %s (exact Fractions)>" % (len(self.heads), self.WO.shape, self.WD.shape)


class ConstructResult(Result):
    """construct theorem1 / ks / dana24."""
    key_fields = ("claim", "memorized", "memorized_count", "T", "T_star", "N", "H", "n", "d", "dh", "r", "rank_Z_lower",
                  "verified", "method", "hypotheses", "reason", "undecided")
    item_fields = ("not_memorized",)

    def verdict_text(self):
        if "memorized" in self._data:
            m = self._data.get("memorized")
            return "memorized" if m else "NOT all memorized"
        return super().verdict_text()


class Theorem1Result(ConstructResult):
    @property
    def weights(self):
        """The certified weights as exact numpy object arrays of Fraction: .heads[h]["WK"|"WQ"|"WV"], .WO,
        .WD (from the certificate), or None when no certificate was written."""
        cert = self.certificate
        if not cert or "weights" not in cert:
            return None
        w = cert["weights"]
        heads = [{k: _fraction_matrix(h[k]) for k in ("WK", "WQ", "WV")} for h in w["heads"]]
        return _Weights(heads, _fraction_matrix(w["WO"]), _fraction_matrix(w["WD"]))


class GenerateResult(Result):
    key_fields = ("kind", "T", "N", "n", "d", "S", "seed", "out")

    def verdict_text(self):
        return "written"

    def load(self):
        """The data set written (numpy.load of the .npz/.npy, or the parsed JSON)."""
        import numpy as np
        path = self._data["out"]
        if path.endswith((".npz", ".npy")):
            return np.load(path)
        with open(path) as f:
            return json.load(f)


class ClaimsResult(Result):
    key_fields = ("claim", "verdict", "mode", "expect", "instances", "budget", "confirmed", "undecided", "holds")
    item_fields = ("counterexamples",)

    def _fields(self):
        out = list(super()._fields())
        if isinstance(self._data.get("claims"), list):
            out.append(("claims", "%d registered" % len(self._data["claims"])))
        return out


class VerifyResult(Result):
    key_fields = ("valid", "kind", "claim", "reason")

    @property
    def reason(self):
        """Why the certificate was rejected ("" when valid: the JSON has no "reason" then)."""
        return self._data.get("reason", "")

    @property
    def verdict(self):
        return self._data.get("valid", super().verdict)

    def verdict_text(self):
        v = self._data.get("valid")
        return "VALID" if v else ("REJECTED" if v is False else "undecided")


class SweepResult(Result):
    key_fields = ("task", "cells", "done", "skipped", "failed", "out")


class Margins:
    """`memcert certify --margins-out`'s arrays, one entry per example t (docs/MODELS.md): verdict (int8:
    1 certified correct, -1 certified wrong, 0 undecided), margin_lo <= exact margin <= margin_hi
    (float64, outward-rounded), float32_margin and float32_error_bound (float64: PyTorch's float32 margin
    and a bound on its distance to the exact one), bits (int16: 53 the double filter, 128/256/512 MPFR,
    0 undecided). Attributes and items (m.margin_lo, m["margin_lo"]); len(m) is T."""

    def __init__(self, arrays):
        self.__dict__["_arrays"] = dict(arrays)

    def __getattr__(self, name):
        arrays = self.__dict__["_arrays"]
        if name in arrays:
            return arrays[name]
        raise AttributeError("Margins has no array %r (it has: %s)" % (name, ", ".join(sorted(arrays))))

    def __setattr__(self, name, value):
        raise AttributeError("Margins is read-only")

    def __getitem__(self, key):
        return self._arrays[key]

    def __contains__(self, key):
        return key in self._arrays

    def keys(self):
        return self._arrays.keys()

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._arrays))

    def __len__(self):
        return len(next(iter(self._arrays.values()))) if self._arrays else 0

    def __repr__(self):
        return "<Margins: T=%d; %s>" % (len(self), ", ".join("%s %s" % (k, v.dtype) for k, v in self._arrays.items()))


class CertifyResult(Result):
    """memcert certify: per-example verdicts of a trained model. .verdict: True when every example is
    certified correct, False when some is certified wrong, None when some are undecided (and none wrong);
    .margins: the per-example arrays (Margins); .certificate: the certificate when out= was given."""
    key_fields = ("arch", "task", "heads", "T", "certified_correct", "certified_wrong", "undecided", "min_margin",
                  "max_error")
    item_fields = ("wrong", "undecided_examples", "float32_disagreements")

    @property
    def margins(self):
        """The per-example margins (Margins, numpy arrays of length T), or None when none were written."""
        return self.__dict__.get("_margins")

    def verdict_text(self):
        T = self._data.get("T")
        if self.exit_code == 0:
            return "all %s certified correct" % T
        if self.exit_code == 1:
            return "%s of %s certified WRONG" % (self._data.get("certified_wrong"), T)
        return "%s of %s undecided" % (self._data.get("undecided"), T)

    def _fields(self):
        out = list(super()._fields())
        f32 = self._data.get("float32_disagreements")
        if isinstance(f32, list):
            out.append(("float32 disagreements", len(f32)))
        return out

    def __repr__(self):
        text = super().__repr__()
        if self.margins is not None and len(text) < REPR_LIMIT - 40:
            text = text[:-1] + ", margins=<%d examples>>" % len(self.margins)
        return text
