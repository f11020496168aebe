// The Python module `memcert` (pybind11): the library calls behind `memcert rank`, `kruskal`,
// `assumptions`, `construct theorem1` and `verify`, on numpy arrays. Semantics are the CLI's:
//  * every number is taken EXACTLY (a float64/float32 entry is the dyadic rational it stores, integers
//    are integers, an object array may hold int, float, fractions.Fraction or exact-number strings);
//  * results carry the certified bounds and the certificate (a dict, the same JSON the CLI writes);
//  * bad input raises ValueError with the CLI's one-line message "name: position: expected ...".
// numpy arrays are read in place through their strides (no copy, whatever the layout); only arrays in
// non-native byte order are converted first.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memcert/cert/linalg_cert.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/dispatch.hpp"
#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/qmat.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/error.hpp"
#include "memcert/version.hpp"

namespace py = pybind11;
using namespace memcert;
using namespace pybind11::literals;

namespace {

// ---- numbers in ------------------------------------------------------------------------------------

// One entry of an object array, exactly: int and Fraction through their exact text, float as the
// double it stores, str parsed like a JSON/text number. InputError otherwise.
Rational rational_from_pyobject(py::handle x, const std::string& name, const std::string& where) {
  if (py::isinstance<py::bool_>(x)) return Rational(x.cast<bool>() ? 1 : 0);
  if (py::isinstance<py::float_>(x)) {
    double v = x.cast<double>();
    if (!std::isfinite(v)) throw input_error(name, where, "expected a finite number, got " + py::str(x).cast<std::string>());
    return rational_from_double(v);
  }
  std::string text = py::str(x).cast<std::string>();
  bool exact_type = py::isinstance<py::int_>(x) || py::isinstance<py::str>(x) ||
                    py::isinstance(x, py::module_::import("fractions").attr("Fraction"));
  std::optional<Rational> q = exact_type ? rational_parse(text) : std::nullopt;
  if (!q) throw input_error(name, where, "expected an exact number (int, float, Fraction or numeric str), got " +
                                             std::string(py::str(py::type::of(x).attr("__name__"))) + " " + text);
  return *q;
}

// The exact value of the element at byte address `p` of an array with dtype kind `kind` and `size` bytes.
Rational rational_from_element(const char* p, char kind, py::ssize_t size, const std::string& name,
                               const std::string& where) {
  auto finite = [&](double v) {
    if (!std::isfinite(v)) throw input_error(name, where, "expected a finite number, got " + std::to_string(v));
    return rational_from_double(v);
  };
  switch (kind) {
    case 'b': return Rational(*reinterpret_cast<const bool*>(p) ? 1 : 0);
    case 'f':
      if (size == 8) return finite(*reinterpret_cast<const double*>(p));
      if (size == 4) return finite(static_cast<double>(*reinterpret_cast<const float*>(p)));
      break;
    case 'i':
      if (size == 8) return Rational(mpz_class(std::to_string(*reinterpret_cast<const std::int64_t*>(p))));
      if (size == 4) return Rational(static_cast<long>(*reinterpret_cast<const std::int32_t*>(p)));
      if (size == 2) return Rational(static_cast<long>(*reinterpret_cast<const std::int16_t*>(p)));
      if (size == 1) return Rational(static_cast<long>(*reinterpret_cast<const std::int8_t*>(p)));
      break;
    case 'u':
      if (size == 8) return Rational(mpz_class(std::to_string(*reinterpret_cast<const std::uint64_t*>(p))));
      if (size == 4) return Rational(static_cast<unsigned long>(*reinterpret_cast<const std::uint32_t*>(p)));
      if (size == 2) return Rational(static_cast<unsigned long>(*reinterpret_cast<const std::uint16_t*>(p)));
      if (size == 1) return Rational(static_cast<unsigned long>(*reinterpret_cast<const std::uint8_t*>(p)));
      break;
    case 'O': return rational_from_pyobject(*reinterpret_cast<PyObject* const*>(p), name, where);
  }
  throw input_error(name, "", "expected an array of bool, integers, float32/float64 or exact Python numbers, got dtype " +
                                  std::to_string(size) + "-byte kind '" + std::string(1, kind) + "'");
}

// Any array-like -> NdArray (C order, exact), reading numpy memory in place through the strides.
// `ndim` = required number of dimensions; `name` names the argument in error messages.
NdArray ndarray_from_python(py::handle obj, const std::string& name, std::size_t ndim) {
  py::array a = py::array::ensure(obj);
  if (!a) throw input_error(name, "", "expected an array-like of numbers");
  if (!a.dtype().attr("isnative").cast<bool>()) a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
  NdArray out;
  for (py::ssize_t k = 0; k < a.ndim(); ++k) out.shape.push_back(static_cast<std::size_t>(a.shape(k)));
  if (static_cast<std::size_t>(a.ndim()) != ndim)
    throw input_error(name, "", "expected a " + std::to_string(ndim) + "-d array, got shape " +
                                    py::str(a.attr("shape")).cast<std::string>());
  std::size_t total = 1;
  for (std::size_t s : out.shape) total *= s;
  char kind = a.dtype().kind();
  py::ssize_t size = a.itemsize();
  out.integral = kind == 'i' || kind == 'u' || kind == 'b';
  out.data.reserve(total);
  const char* base = static_cast<const char*>(a.data());
  std::vector<std::size_t> index(ndim, 0);
  for (std::size_t flat = 0; flat < total; ++flat) {
    const char* p = base;
    for (std::size_t k = 0; k < ndim; ++k) p += static_cast<py::ssize_t>(index[k]) * a.strides(static_cast<py::ssize_t>(k));
    out.data.push_back(rational_from_element(p, kind, size, name, ndindex_to_string(out.shape, flat)));
    for (std::size_t k = ndim; k-- > 0;) {  // next index, C order
      if (++index[k] < out.shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

QMatrix qmat_from_python(py::handle obj, const std::string& name) {
  NdArray a = ndarray_from_python(obj, name, 2);
  if (a.shape[0] == 0 || a.shape[1] == 0) throw input_error(name, "", "expected a non-empty matrix, got 0 rows or columns");
  QMatrix m(a.shape[0], a.shape[1]);
  m.data() = std::move(a.data);
  return m;
}

// A 2-d numeric numpy array (bool, integers of up to 64 bits, float32, float64; finite) in the engine's
// typed storage, read in place through the strides: int64 for integers (uint64 entries past 2^63 - 1
// go the exact rational way), float64 for floats (a float32 is exactly a double). nullopt for anything
// else (lists, object arrays, a non-finite entry, an empty shape): the caller then takes the exact
// rational reader, which also raises the one-line errors.
std::optional<TypedMatrix> typed_from_numpy(py::handle obj) {
  if (!py::isinstance<py::array>(obj)) return std::nullopt;
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (a.ndim() != 2 || a.shape(0) == 0 || a.shape(1) == 0 || !a.dtype().attr("isnative").cast<bool>()) return std::nullopt;
  const char kind = a.dtype().kind();
  const py::ssize_t size = a.itemsize();
  const bool is_float = kind == 'f' && (size == 8 || size == 4);
  const bool is_int = kind == 'b' || ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8));
  if (!is_float && !is_int) return std::nullopt;
  const auto m = static_cast<std::size_t>(a.shape(0)), n = static_cast<std::size_t>(a.shape(1));
  const char* base = static_cast<const char*>(a.data());
  const py::ssize_t s0 = a.strides(0), s1 = a.strides(1);
  auto at = [&](std::size_t i, std::size_t j) { return base + static_cast<py::ssize_t>(i) * s0 + static_cast<py::ssize_t>(j) * s1; };
  if (is_float) {
    std::vector<double> v(m * n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const char* p = at(i, j);
        const double x = size == 8 ? *reinterpret_cast<const double*>(p) : static_cast<double>(*reinterpret_cast<const float*>(p));
        if (!std::isfinite(x)) return std::nullopt;
        v[i * n + j] = x;
      }
    TypedMatrix t = typed_matrix_from_f64(m, n, std::move(v));
    t.stored_float_bytes = static_cast<unsigned>(size);  // numpy's eps for a numerical rank is the dtype's
    return t;
  }
  std::vector<std::int64_t> v(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const char* p = at(i, j);
      std::int64_t x = 0;
      if (kind == 'b') x = *reinterpret_cast<const bool*>(p) ? 1 : 0;
      else if (kind == 'i')
        x = size == 8 ? *reinterpret_cast<const std::int64_t*>(p) : size == 4 ? *reinterpret_cast<const std::int32_t*>(p)
            : size == 2 ? *reinterpret_cast<const std::int16_t*>(p) : *reinterpret_cast<const std::int8_t*>(p);
      else {
        const std::uint64_t u = size == 8 ? *reinterpret_cast<const std::uint64_t*>(p) : size == 4 ? *reinterpret_cast<const std::uint32_t*>(p)
                                : size == 2 ? *reinterpret_cast<const std::uint16_t*>(p) : *reinterpret_cast<const std::uint8_t*>(p);
        if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
        x = static_cast<std::int64_t>(u);
      }
      v[i * n + j] = x;
    }
  return typed_matrix_from_i64(m, n, std::move(v));
}

// The matrix argument `name` in typed storage: numpy's own numeric arrays directly, anything else
// exactly through rationals, then narrowed (typed_matrix_from_qmat).
TypedMatrix typed_from_python(py::handle obj, const std::string& name) {
  if (auto t = typed_from_numpy(obj)) return std::move(*t);
  return typed_matrix_from_qmat(qmat_from_python(obj, name));
}

// contexts (T, n, d) [or a list of T (n, d) arrays], queries (T, d), labels (T,) | (T, d_out) | None ->
// the data set, with the .npz reader's checks and messages.
AttentionDataset dataset_from_python(py::handle contexts, py::handle queries, py::handle labels) {
  std::map<std::string, NdArray> arrays;
  arrays["contexts"] = ndarray_from_python(contexts, "contexts", 3);
  arrays["queries"] = ndarray_from_python(queries, "queries", 2);
  if (!labels.is_none()) {
    py::array l = py::array::ensure(labels);
    arrays["labels"] = ndarray_from_python(labels, "labels", l && l.ndim() == 1 ? 1 : 2);
  }
  return attention_dataset_from_arrays(arrays, "arrays");
}

// ---- results out -----------------------------------------------------------------------------------

// JSON -> Python objects (dict, list, str, int, float, bool, None) through the json module: certificates
// keep their exact numbers as strings, exactly as in the files the CLI writes.
py::object python_from_json(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// An exact matrix as a numpy object array of fractions.Fraction (exact; .astype(float) rounds).
py::object numpy_from_qmat(const QMatrix& m) {
  py::object fraction = py::module_::import("fractions").attr("Fraction");
  py::list rows;
  for (std::size_t i = 0; i < m.rows(); ++i) {
    py::list row;
    for (std::size_t j = 0; j < m.cols(); ++j) row.append(fraction(py::str(rational_to_string(m(i, j)))));
    rows.append(row);
  }
  py::object out = py::module_::import("numpy").attr("empty")(py::make_tuple(m.rows(), m.cols()), "dtype"_a = "object");
  if (m.rows() && m.cols()) out[py::slice(0, static_cast<py::ssize_t>(m.rows()), 1)] = rows;
  return out;
}

py::object namespace_of(py::dict fields) { return py::module_::import("types").attr("SimpleNamespace")(**fields); }

// ---- the five calls ------------------------------------------------------------------------------------

// memcert rank: exact rank, certified from both sides (a non-zero minor mod p, an exact kernel basis).
// The engine's storage-filtered route (linalg/dispatch.hpp), as `memcert rank`.
py::object rank(py::handle a_obj) {
  const TypedMatrix a = typed_from_python(a_obj, "a");
  CertifiedRank c;
  std::string cert;
  {
    py::gil_scoped_release unlocked;
    c = rank_certified(a);
    cert = rank_certificate_text(a, c);
  }
  py::dict r;
  r["rows"] = a.rows;
  r["cols"] = a.cols;
  r["rank"] = c.rank;
  r["rank_lower"] = c.rank;
  r["rank_upper"] = c.rank;
  r["method"] = c.method();
  r["storage"] = std::string(storage_name(a.storage));
  r["certificate"] = py::module_::import("json").attr("loads")(cert);
  return namespace_of(r);
}

// memcert kruskal: certified bounds on the Kruskal rank of the ROWS of `a`; with at_least = K only
// "kruskal >= K" is decided (holds: True / False / None when the budget ran out).
py::object kruskal(py::handle a_obj, std::optional<std::size_t> at_least, std::uint64_t budget) {
  const TypedMatrix v = typed_from_python(a_obj, "a");
  KruskalOptions opt;
  opt.at_least = at_least;
  opt.max_subsets = budget;
  KruskalResult k;
  nlohmann::json cert;
  {
    py::gil_scoped_release unlocked;
    k = kruskal_rank_certified(v, opt);
    cert = kruskal_certificate_to_json(typed_matrix_to_qmat(v), k);
  }
  py::dict r;
  r["count"] = k.count;
  r["dim"] = k.dim;
  r["kruskal_lower"] = k.lower;
  r["kruskal_upper"] = k.upper;
  r["kruskal_rank"] = k.exact() ? py::object(py::int_(k.lower)) : py::object(py::none());
  r["dependent_subset"] = k.dependent_subset;
  r["method"] = k.method;
  if (at_least) {
    std::optional<bool> holds;
    if (k.lower >= *at_least) holds = true;
    else if (k.upper < *at_least) holds = false;
    r["at_least"] = *at_least;
    r["holds"] = holds ? py::object(py::bool_(*holds)) : py::object(py::none());
  }
  r["certificate"] = python_from_json(cert);
  return namespace_of(r);
}

// memcert assumptions: mahdavi24's Assumptions 1-3, general position and separation, decided exactly;
// the same report (a dict) as `memcert assumptions --json` without "seconds".
py::object assumptions(py::handle contexts, py::handle queries, std::uint64_t budget) {
  AttentionDataset ds = dataset_from_python(contexts, queries, py::none());
  nlohmann::json j;
  {
    py::gil_scoped_release unlocked;
    j = mahdavi24::assumptions_report(ds, budget);
  }
  return python_from_json(j);
}

// memcert verify: the independent checker's verdict on a certificate (dict, JSON str or bytes).
py::object verify(py::handle cert) {
  std::string text;
  if (py::isinstance<py::str>(cert) || py::isinstance<py::bytes>(cert)) text = cert.cast<std::string>();
  else text = py::module_::import("json").attr("dumps")(cert).cast<std::string>();
  memcert_checker::Verdict v;
  {
    py::gil_scoped_release unlocked;
    v = memcert_checker::verify_certificate_text(text);
  }
  py::dict r;
  r["valid"] = v.valid;
  r["kind"] = v.kind;
  r["claim"] = v.claim;
  r["reason"] = v.reason;
  return namespace_of(r);
}

// memcert construct theorem1: mahdavi24 Theorem 1's weights for the data, certified, and re-verified by
// the independent checker (as the CLI does before it writes a certificate). Raises HypothesisFailure
// (with .witness) when the theorem's hypotheses fail on the data.
py::object construct_theorem1(py::handle contexts, py::handle queries, py::handle labels, std::size_t heads,
                              std::size_t dh, std::optional<std::size_t> dv, bool skip, std::uint64_t seed,
                              const std::string& tolerance, bool saturation, const std::string& c, py::handle hypothesis_error) {
  AttentionDataset ds = dataset_from_python(contexts, queries, labels);
  mahdavi24::Theorem1Options opt;
  opt.H = heads;
  opt.dh = dh;
  opt.dv = dv;
  opt.skip = skip;
  opt.seed = seed;
  opt.saturation = saturation;
  // The scale of every saturating head, as the CLI's --c: proof | weyl | network | an exact value.
  if (c == "proof" || c == "weyl" || c == "network") {
    opt.scale = c;
  } else {
    auto value = rational_parse(c);
    if (!value || *value < 0) throw InputError("c: expected proof, weyl, network or an exact number >= 0, got " + c);
    opt.scale = "value";
    opt.c_value = *value;
  }
  auto tol = rational_parse(tolerance);
  if (!tol || *tol < 0) throw InputError("tolerance: expected an exact non-negative number, got " + tolerance);
  opt.tolerance = *tol;
  mahdavi24::Theorem1Result res;
  memcert_checker::Verdict v;
  std::optional<mahdavi24::HypothesisFailure> failure;
  {
    py::gil_scoped_release unlocked;
    try {
      res = mahdavi24::theorem1_construct(ds, opt);
      if (res.memorized) v = memcert_checker::verify_certificate_text(res.certificate.dump());
    } catch (const mahdavi24::HypothesisFailure& f) {
      failure = f;
    }
  }
  if (failure) {
    py::object e = hypothesis_error(failure->what());
    e.attr("witness") = python_from_json(failure->witness);
    PyErr_SetObject(hypothesis_error.ptr(), e.ptr());
    throw py::error_already_set();
  }
  py::list head_weights;
  for (const MhaHead& h : res.weights.heads) {
    py::dict w;
    w["WK"] = numpy_from_qmat(h.WK);
    w["WQ"] = numpy_from_qmat(h.WQ);
    w["WV"] = numpy_from_qmat(h.WV);
    head_weights.append(w);
  }
  py::dict weights;
  weights["heads"] = head_weights;
  weights["WO"] = numpy_from_qmat(res.weights.WO);
  weights["WD"] = numpy_from_qmat(res.weights.WD);
  py::dict r;
  r["H"] = res.H;
  r["n"] = res.n;
  r["d"] = res.d;
  r["dh"] = res.dh;
  r["r"] = res.r;
  r["T"] = res.T_star;
  r["rank_Z_lower"] = res.rank_Z_lower;
  r["memorized"] = res.memorized && v.valid;
  r["verified"] = v.valid;
  r["reason"] = v.reason;
  r["hypotheses"] = res.hypotheses;
  r["examples"] = res.examples;
  r["weights"] = namespace_of(weights);
  r["certificate"] = res.memorized ? python_from_json(res.certificate) : py::object(py::none());
  return namespace_of(r);
}

}  // namespace

PYBIND11_MODULE(memcert, m) {
  m.doc() = "memcert: exact-arithmetic verification of memorization theory for Transformers";
  m.attr("__version__") = memcert::version_string;
  // Bad input: the CLI's one-line message (its exit 2) as ValueError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  py::object hypothesis_error = py::exception<std::runtime_error>(m, "HypothesisFailure", PyExc_ValueError);
  hypothesis_error.attr("__doc__") = "The data violate the theorem's hypotheses; .witness says how (a dict).";

  m.def("rank", &rank, py::arg("a"),
        "Exact rank of a 2-d array (entries taken exactly), certified from both sides.\n"
        "Returns a namespace: rank, rank_lower, rank_upper, rows, cols, method, storage (int64 | float64 | rational), certificate (dict).");
  m.def("kruskal", &kruskal, py::arg("a"), py::arg("at_least") = py::none(), py::arg("budget") = 20'000'000,
        "Certified Kruskal rank of the ROWS of a 2-d array: kruskal_lower, kruskal_upper, kruskal_rank\n"
        "(None unless both agree), dependent_subset, method, holds (with at_least), certificate.");
  m.def("assumptions", &assumptions, py::arg("contexts"), py::arg("queries"), py::arg("budget") = 20'000'000,
        "mahdavi24 Assumptions 1-3, general position and separation for contexts (T, n, d) and\n"
        "queries (T, d), decided exactly; returns the report as a dict.");
  m.def("construct_theorem1",
        [hypothesis_error](py::handle contexts, py::handle queries, py::handle labels, std::size_t heads,
                           std::size_t dh, std::optional<std::size_t> dv, bool skip, std::uint64_t seed,
                           const std::string& tolerance, bool saturation, const std::string& c) {
          return construct_theorem1(contexts, queries, labels, heads, dh, dv, skip, seed, tolerance, saturation, c,
                                    hypothesis_error);
        },
        py::arg("contexts"), py::arg("queries"), py::arg("labels"), py::arg("heads"), py::arg("dh"),
        py::arg("dv") = py::none(), py::arg("skip") = false, py::arg("seed") = 1, py::arg("tolerance") = "1e-6",
        py::arg("saturation") = true, py::arg("c") = "proof",
        "mahdavi24 Theorem 1 on the data: exact weights (numpy object arrays of Fraction) memorizing\n"
        "H(r-1)+1 examples, certified and re-verified by the independent checker. labels: (T,) or\n"
        "(T, d_out) real labels (a flat (T,) array means d_out = 1), or None (generated). Raises\n"
        "HypothesisFailure when the data violate the hypotheses.");
  m.def("verify", &verify, py::arg("cert"),
        "Re-check a certificate (dict, JSON str or bytes) with the independent checker: valid, kind,\n"
        "claim, reason.");
}
