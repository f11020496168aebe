// Data set readers (docs/CLI.md "Files"): attention examples {"contexts" [T][n][d], "queries" [T][d],
// "labels" [T] | [T][d_out] real, or "class_labels" [T] integers} and token sequences {"sequences" [N][n][d], "labels" [N] | [N][n]},
// as JSON or .npz. Shapes are checked against the first example; every mismatch is one InputError line
// naming the file and the position, e.g. "data.json: contexts[3][1]: expected 8 numbers (d = 8), got 7".
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "memcert/data/dataset.hpp"
#include "memcert/data/file_kind.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/data/typed_dataset.hpp"

namespace memcert {

namespace {

using nlohmann::json;

const char* const kAttentionKeys = "contexts, queries";

bool has_extension(const std::string& path, const std::string& ext) {
  if (path.size() < ext.size()) return false;
  std::string tail = path.substr(path.size() - ext.size());
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return std::tolower(c); });
  return tail == ext;
}

std::string idx(const std::string& where, std::size_t i) { return where + "[" + std::to_string(i) + "]"; }

std::string describe(const json& v) {
  if (v.is_array()) return "a list";
  if (v.is_string()) return "a string";
  return std::string("a ") + v.type_name();
}

// `v` must be a list; of `expected` entries when given ("expected 5 tokens (n = 5), got 4").
void check_list(const json& v, const std::string& file, const std::string& where, const std::string& noun,
                std::optional<std::size_t> expected, const std::string& note) {
  if (!v.is_array()) throw input_error(file, where, "expected a list of " + noun + ", got " + describe(v));
  if (expected && v.size() != *expected)
    throw input_error(file, where, "expected " + std::to_string(*expected) + " " + noun + " (" + note + "), got " +
                                       std::to_string(v.size()));
  if (!expected && v.empty()) throw input_error(file, where, "expected a non-empty list of " + noun + ", got []");
}

// A list of `rows` rows (or any non-zero number when nullopt) of `cols` numbers each (or as many as row 0).
QMatrix json_rows(const json& v, const std::string& file, const std::string& where, const std::string& row_noun,
                  std::optional<std::size_t> rows, const std::string& rows_note, std::optional<std::size_t> cols,
                  const std::string& cols_letter) {
  check_list(v, file, where, row_noun, rows, rows_note);
  std::size_t n = cols ? *cols : 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!cols && i == 0) {
      check_list(v[0], file, idx(where, 0), "numbers", std::nullopt, "");
      n = v[0].size();
    }
    check_list(v[i], file, idx(where, i), "numbers", n, cols_letter + " = " + std::to_string(n));
  }
  QMatrix a(v.size(), n);
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = 0; j < n; ++j) a(i, j) = json_to_rational(v[i][j], file, idx(idx(where, i), j));
  return a;
}

long to_label(const Rational& q, const std::string& file, const std::string& where, bool non_negative) {
  if (q.get_den() != 1 || !q.get_num().fits_slong_p() || (non_negative && q < 0))
    throw input_error(file, where, std::string("expected ") + (non_negative ? "a non-negative" : "an") +
                                       " integer class label, got " + rational_to_string(q));
  return q.get_num().get_si();
}

// [N][n][d] of exact numbers: the first entry fixes n and d.
std::vector<QMatrix> json_blocks(const json& v, const std::string& file, const std::string& where,
                                 const std::string& block_noun, const std::string& row_noun) {
  check_list(v, file, where, block_noun, std::nullopt, "");
  std::vector<QMatrix> out;
  std::size_t n = 0, d = 0;
  for (std::size_t t = 0; t < v.size(); ++t) {
    QMatrix e = t == 0 ? json_rows(v[0], file, idx(where, 0), row_noun, std::nullopt, "", std::nullopt, "d")
                       : json_rows(v[t], file, idx(where, t), row_noun, n, "n = " + std::to_string(n), d, "d");
    if (t == 0) {
      n = e.rows();
      d = e.cols();
      if (d == 0) throw input_error(file, idx(idx(where, 0), 0), "expected a non-empty list of numbers, got []");
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string shape_text(const std::vector<std::size_t>& s) {
  std::string out = "(";
  for (std::size_t k = 0; k < s.size(); ++k) out += std::to_string(s[k]) + (k + 1 < s.size() ? ", " : s.size() == 1 ? "," : "");
  return out + ")";
}

const NdArray& npz_member(const std::map<std::string, NdArray>& arrays, const std::string& file,
                          const std::string& name, const std::string& what) {
  auto it = arrays.find(name);
  if (it == arrays.end())
    throw input_error(file, "", "expected an array named \"" + name + "\" " + what + "; " + npz_members_text(arrays));
  return it->second;
}

struct Shaped {
  const std::vector<std::size_t>& shape;
};

void check_shape(Shaped a, const std::string& file, const std::string& name, std::size_t ndim,
                 const std::string& pattern, const std::vector<std::optional<std::size_t>>& expected) {
  if (a.shape.size() != ndim)
    throw input_error(file, name, "expected a " + std::to_string(ndim) + "-d array " + pattern + ", got shape " +
                                      shape_text(a.shape));
  for (std::size_t k = 0; k < ndim; ++k) {
    if ((expected[k] && a.shape[k] != *expected[k]) || a.shape[k] == 0) {
      std::string want = "(";
      for (std::size_t j = 0; j < ndim; ++j)
        want += (expected[j] ? std::to_string(*expected[j]) : std::string("*")) + (j + 1 < ndim ? ", " : "");
      throw input_error(file, name, "expected a non-empty array of shape " + pattern + " = " + want + (ndim == 1 ? ",)" : ")") +
                                        ", got " + shape_text(a.shape));
    }
  }
}

void check_shape(const NdArray& a, const std::string& file, const std::string& name, std::size_t ndim,
                 const std::string& pattern, const std::vector<std::optional<std::size_t>>& expected) {
  check_shape(Shaped{a.shape}, file, name, ndim, pattern, expected);
}

// Splits a (N, r, c) array into N matrices r x c.
std::vector<QMatrix> ndarray_blocks(const NdArray& a) {
  std::vector<QMatrix> out;
  std::size_t r = a.shape[1], c = a.shape[2];
  for (std::size_t t = 0; t < a.shape[0]; ++t) {
    QMatrix m(r, c);
    std::copy(a.data.begin() + t * r * c, a.data.begin() + (t + 1) * r * c, m.data().begin());
    out.push_back(std::move(m));
  }
  return out;
}

QMatrix ndarray_matrix(const NdArray& a) {
  QMatrix m(a.shape[0], a.shape.size() > 1 ? a.shape[1] : 1);
  m.data() = a.data;
  return m;
}

AttentionDataset attention_from_json(const json& root, const std::string& file, bool with_labels = true) {
  if (!root.is_object()) throw input_error(file, "", "expected an object {\"contexts\", \"queries\", \"labels\"}, got " + describe(root));
  for (const char* key : {"contexts", "queries"})
    if (!root.contains(key)) throw input_error(file, "", std::string("expected a key \"") + key + "\"");
  AttentionDataset ds;
  ds.contexts = json_blocks(root["contexts"], file, "contexts", "contexts", "tokens");
  std::size_t T = ds.contexts.size(), d = ds.contexts[0].cols();
  ds.queries = json_rows(root["queries"], file, "queries", "queries", T, "T = " + std::to_string(T), d, "d");
  const bool has_real = with_labels && root.contains("labels") && !root["labels"].is_null();
  const bool has_class = with_labels && root.contains("class_labels") && !root["class_labels"].is_null();
  if (has_real && has_class)
    throw input_error(file, "class_labels", "expected either \"labels\" (real) or \"class_labels\" (integer classes), got both");
  if (has_real) {
    // Real labels (Theorem 1 is about real labels): [T] means d_out = 1, [T][d_out] is general.
    const json& l = root["labels"];
    check_list(l, file, "labels", "labels", T, "T = " + std::to_string(T));
    if (!l[0].is_array()) {
      QMatrix y(T, 1);
      for (std::size_t t = 0; t < T; ++t) {
        if (l[t].is_array()) throw input_error(file, idx("labels", t), "expected a number (as labels[0]), got a list");
        y(t, 0) = json_to_rational(l[t], file, idx("labels", t));
      }
      ds.labels = std::move(y);
    } else {
      ds.labels = json_rows(l, file, "labels", "labels", T, "T = " + std::to_string(T), std::nullopt, "d_out");
    }
  } else if (has_class) {
    const json& l = root["class_labels"];
    check_list(l, file, "class_labels", "class labels", T, "T = " + std::to_string(T));
    ds.class_labels = true;
    QMatrix y(T, 1);
    for (std::size_t t = 0; t < T; ++t) {
      std::string at = idx("class_labels", t);
      if (l[t].is_array()) throw input_error(file, at, "expected an integer class label, got a list");
      y(t, 0) = to_label(json_to_rational(l[t], file, at), file, at, true);
    }
    ds.labels = std::move(y);
  }
  return ds;
}

}  // namespace

namespace {
void attention_labels_from_arrays(const std::map<std::string, NdArray>& arrays, const std::string& file, std::size_t T,
                                  AttentionDataset& ds);
}  // namespace

AttentionDataset attention_dataset_from_arrays(const std::map<std::string, NdArray>& arrays, const std::string& file) {
  const NdArray& c = npz_member(arrays, file, "contexts", "of shape (T, n, d)");
  check_shape(c, file, "contexts", 3, "(T, n, d)", {std::nullopt, std::nullopt, std::nullopt});
  std::size_t T = c.shape[0], d = c.shape[2];
  const NdArray& q = npz_member(arrays, file, "queries", "of shape (T, d)");
  check_shape(q, file, "queries", 2, "(T, d)", {T, d});
  AttentionDataset ds;
  ds.contexts = ndarray_blocks(c);
  ds.queries = ndarray_matrix(q);
  attention_labels_from_arrays(arrays, file, T, ds);
  return ds;
}

namespace {
// The labels of a .npz data set of T examples ("labels" (T,) | (T, d_out), or "class_labels" (T,)) into ds.
void attention_labels_from_arrays(const std::map<std::string, NdArray>& arrays, const std::string& file, std::size_t T,
                                  AttentionDataset& ds) {
  auto real = arrays.find("labels"), cls = arrays.find("class_labels");
  if (real != arrays.end() && cls != arrays.end())
    throw input_error(file, "class_labels", "expected either \"labels\" (real) or \"class_labels\" (integer classes), got both");
  if (real != arrays.end()) {
    // Real labels: (T,) means d_out = 1, (T, d_out) is general.
    const NdArray& l = real->second;
    if (l.shape.size() == 1) check_shape(l, file, "labels", 1, "(T,)", {T});
    else check_shape(l, file, "labels", 2, "(T, d_out)", {T, std::nullopt});
    ds.labels = ndarray_matrix(l);
    ds.labels_integer_dtype = l.integral;  // real labels all the same (the note says so)
  } else if (cls != arrays.end()) {
    const NdArray& l = cls->second;
    check_shape(l, file, "class_labels", 1, "(T,)", {T});
    for (std::size_t t = 0; t < T; ++t) to_label(l.data[t], file, "class_labels" + ndindex_to_string(l.shape, t), true);
    ds.class_labels = true;
    ds.labels = ndarray_matrix(l);
  }
}
}  // namespace

namespace {

// A typed array's values as a rows x cols typed matrix (moved out of the array).
TypedMatrix typed_array_matrix(TypedArray& a, std::size_t rows, std::size_t cols) {
  if (a.storage == Storage::int64) return typed_matrix_from_i64(rows, cols, std::move(a.i64));
  if (a.storage == Storage::float64) {
    TypedMatrix m = typed_matrix_from_f64(rows, cols, std::move(a.f64));
    m.stored_float_bytes = a.stored_float_bytes;
    return m;
  }
  QMatrix q(rows, cols);
  std::move(a.q.begin(), a.q.end(), q.data().begin());
  return typed_matrix_from_qmat(std::move(q));
}

// attention_from_npz's checks without a rational per entry: only the (small) labels array is converted.
// Only contexts, queries and (with_labels) the label arrays are read: other members are skipped unread
// (never inflated), their names kept for messages.
TypedAttentionDataset attention_typed_from_npz(const std::string& file, bool keep_float32, bool with_labels) {
  std::vector<std::string> names;
  NpzSelect select;
  select.want = [&](const std::string& key) {
    names.push_back(key);
    return key == "contexts" || key == "queries" || (with_labels && (key == "labels" || key == "class_labels"));
  };
  auto arrays = npz_read_typed(file, keep_float32, select);
  std::sort(names.begin(), names.end());
  auto member = [&](const std::string& name, const std::string& what) -> TypedArray& {
    auto it = arrays.find(name);
    if (it == arrays.end())
      throw input_error(file, "", "expected an array named \"" + name + "\" " + what + "; " + npz_members_text(names));
    return it->second;
  };
  TypedArray& c = member("contexts", "of shape (T, n, d)");
  check_shape(Shaped{c.shape}, file, "contexts", 3, "(T, n, d)", {std::nullopt, std::nullopt, std::nullopt});
  TypedAttentionDataset ds;
  ds.T = c.shape[0], ds.n = c.shape[1], ds.d = c.shape[2];
  TypedArray& q = member("queries", "of shape (T, d)");
  check_shape(Shaped{q.shape}, file, "queries", 2, "(T, d)", {ds.T, ds.d});
  if (with_labels) {
    std::map<std::string, NdArray> label_arrays;  // the (small) label arrays as rationals, read as construct reads them
    for (const char* key : {"labels", "class_labels"}) {
      auto it = arrays.find(key);
      if (it == arrays.end()) continue;
      if (!it->second.f32.empty()) it->second.f64.assign(it->second.f32.begin(), it->second.f32.end()), it->second.f32 = {};
      label_arrays.emplace(key, ndarray_from_typed(it->second));
    }
    AttentionDataset labelled;
    attention_labels_from_arrays(label_arrays, file, ds.T, labelled);
    ds.labels = std::move(labelled.labels);
    ds.class_labels = labelled.class_labels;
    ds.labels_integer_dtype = labelled.labels_integer_dtype;
  }
  if (!c.f32.empty()) ds.contexts_f32 = std::move(c.f32);
  else ds.contexts = typed_array_matrix(c, ds.T * ds.n, ds.d);
  if (!q.f32.empty()) q.f64.assign(q.f32.begin(), q.f32.end()), q.f32 = {};  // exact widening
  ds.queries = typed_array_matrix(q, ds.T, ds.d);
  return ds;
}

AttentionDataset attention_from_npz(const std::string& file) { return attention_dataset_from_arrays(npz_read(file), file); }

std::vector<long> json_labels_row(const json& v, const std::string& file, const std::string& where,
                                  std::size_t expected, const std::string& note) {
  check_list(v, file, where, "labels", expected, note);
  std::vector<long> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_array()) throw input_error(file, idx(where, i), "expected an integer class label, got a list");
    out.push_back(to_label(json_to_rational(v[i], file, idx(where, i)), file, idx(where, i), true));
  }
  return out;
}

// "labels" [N] (next-token) or [N][n] (seq-to-seq); "token_labels" [N][n] when both are present.
void sequence_labels_from_json(const json& v, const std::string& file, const std::string& key, SequenceDataset& ds) {
  std::size_t N = ds.N(), n = ds.n();
  check_list(v, file, key, "labels", N, "N = " + std::to_string(N));
  if (!ds.token_labels.empty())
    throw input_error(file, key, "expected per-token labels only once, got them in \"labels\" and \"token_labels\"");
  if (key == "labels" && !v[0].is_array()) {
    ds.labels = json_labels_row(v, file, key, N, "N = " + std::to_string(N));
    return;
  }
  for (std::size_t i = 0; i < N; ++i)
    ds.token_labels.push_back(json_labels_row(v[i], file, idx(key, i), n, "n = " + std::to_string(n)));
}

SequenceDataset sequence_from_json(const json& root, const std::string& file) {
  if (!root.is_object()) throw input_error(file, "", "expected an object {\"sequences\", \"labels\"}, got " + describe(root));
  if (!root.contains("sequences")) throw input_error(file, "", "expected a key \"sequences\"");
  SequenceDataset ds;
  ds.sequences = json_blocks(root["sequences"], file, "sequences", "sequences", "tokens");
  for (const char* key : {"labels", "token_labels"})
    if (root.contains(key) && !root[key].is_null()) sequence_labels_from_json(root[key], file, key, ds);
  return ds;
}

// Rows of `bytes` bytes each, compared by their bytes (float64 with -0.0 made 0.0, or int64: equal bytes
// <=> equal values).
struct ByteRowHash {
  const char* base;
  std::size_t bytes;
  std::size_t operator()(std::size_t r) const { return std::hash<std::string_view>()(std::string_view(base + r * bytes, bytes)); }
};
struct ByteRowEq {
  const char* base;
  std::size_t bytes;
  bool operator()(std::size_t a, std::size_t b) const { return std::memcmp(base + a * bytes, base + b * bytes, bytes) == 0; }
};

// The members a sequence data set .npz is read from; any other member is skipped unread.
bool sequence_npz_member(const std::string& key) {
  return key == "sequences" || key == "token_ids" || key == "embedding" || key == "labels" || key == "token_labels";
}

std::string dtype_text(char kind, std::size_t itemsize) {
  if (kind == 'b') return "bool";
  return std::string(kind == 'f' ? "float" : kind == 'u' ? "uint" : "int") + std::to_string(8 * itemsize);
}

// A sequence data set .npz's layout and shapes, from its members' .npy headers alone (nothing past them is
// read): "sequences" (N, n, d), or the compact "token_ids" (N, n) of an integer dtype with "embedding"
// (V, d); "labels" (N,) | (N, n) and "token_labels" (N, n) against N and n.
struct SequenceNpzScreen {
  bool token_ids = false;
  std::size_t N = 0, n = 0, d = 0, V = 0;
};

SequenceNpzScreen sequence_npz_screen(const std::string& path) {
  std::vector<std::string> names;
  NpzSelect select;
  select.want = [&](const std::string& key) {
    names.push_back(key);
    return sequence_npz_member(key);
  };
  std::map<std::string, NpzMemberHeader> h;
  for (NpzMemberHeader& m : npz_read_headers(path, select)) h.emplace(m.key, std::move(m));
  std::sort(names.begin(), names.end());
  const bool seq = h.count("sequences") != 0, ids = h.count("token_ids") != 0;
  if (seq && ids)
    throw input_error(path, "token_ids", "expected either \"sequences\" (N, n, d) or \"token_ids\" (N, n) with \"embedding\" "
                                         "(V, d), got both");
  if (!seq && !ids)
    throw input_error(path, "", "expected an array named \"sequences\" of shape (N, n, d), or \"token_ids\" of shape (N, n) "
                                "with \"embedding\" of shape (V, d); " + npz_members_text(names));
  SequenceNpzScreen s;
  if (seq) {
    const NpzMemberHeader& a = h.at("sequences");
    check_shape(Shaped{a.shape}, path, "sequences", 3, "(N, n, d)", {std::nullopt, std::nullopt, std::nullopt});
    s.N = a.shape[0], s.n = a.shape[1], s.d = a.shape[2];
  } else {
    s.token_ids = true;
    const NpzMemberHeader& t = h.at("token_ids");
    if (t.kind != 'i' && t.kind != 'u')
      throw input_error(path, "token_ids", "expected token indices of an integer dtype (int8 to int64, uint8 to uint64), got " +
                                               dtype_text(t.kind, t.itemsize));
    check_shape(Shaped{t.shape}, path, "token_ids", 2, "(N, n)", {std::nullopt, std::nullopt});
    auto e = h.find("embedding");
    if (e == h.end())
      throw input_error(path, "", "expected an array named \"embedding\" of shape (V, d) with \"token_ids\"; " +
                                      npz_members_text(names));
    check_shape(Shaped{e->second.shape}, path, "embedding", 2, "(V, d)", {std::nullopt, std::nullopt});
    s.N = t.shape[0], s.n = t.shape[1], s.V = e->second.shape[0], s.d = e->second.shape[1];
    if (s.V > std::size_t(UINT32_MAX))
      throw input_error(path, "embedding", "expected at most " + std::to_string(UINT32_MAX) + " rows (V), got " + std::to_string(s.V));
  }
  auto l = h.find("labels"), tl = h.find("token_labels");
  if (l != h.end()) {
    if (l->second.shape.size() == 1) check_shape(Shaped{l->second.shape}, path, "labels", 1, "(N,)", {s.N});
    else check_shape(Shaped{l->second.shape}, path, "labels", 2, "(N, n)", {s.N, s.n});
  }
  if (tl != h.end()) {
    check_shape(Shaped{tl->second.shape}, path, "token_labels", 2, "(N, n)", {s.N, s.n});
    if (l != h.end() && l->second.shape.size() == 2)
      throw input_error(path, "token_labels", "expected per-token labels only once, got them in \"labels\" and \"token_labels\"");
  }
  return s;
}

// Class labels straight from a typed array (no rational per entry): non-negative integers, checked and
// reported as to_label does.
std::vector<long> typed_labels(const TypedArray& l, const std::string& file, const std::string& key) {
  const std::size_t count = l.count();
  std::vector<long> out(count);
  auto refuse = [&](const Rational& q, std::size_t k) {
    to_label(q, file, key + ndindex_to_string(l.shape, k), true);  // throws for every value refused below
    throw input_error(file, key + ndindex_to_string(l.shape, k), "expected a non-negative integer class label");
  };
  for (std::size_t k = 0; k < count; ++k) {
    if (l.storage == Storage::int64) {
      const std::int64_t x = l.i64[k];
      if (x < 0) refuse(Rational(static_cast<long>(x)), k);
      out[k] = static_cast<long>(x);
    } else if (l.storage == Storage::float64) {
      const double v = l.f32.empty() ? l.f64[k] : double(l.f32[k]);
      if (!(v >= 0 && v < 9223372036854775808.0 && std::floor(v) == v)) refuse(rational_from_double(v), k);
      out[k] = static_cast<long>(v);
    } else {
      out[k] = to_label(l.q[k], file, key + ndindex_to_string(l.shape, k), true);
    }
  }
  return out;
}

// "labels" (N,) | (N, n) and "token_labels" (N, n) of `arrays` into labels / token_labels (each array
// freed once read).
void typed_sequence_labels(std::map<std::string, TypedArray>& arrays, const std::string& path, std::size_t N,
                           std::size_t n, std::vector<long>& labels, std::vector<std::vector<long>>& token_labels) {
  for (const char* key : {"labels", "token_labels"}) {
    auto it = arrays.find(key);
    if (it == arrays.end()) continue;
    const TypedArray& l = it->second;
    const bool flat = std::string(key) == "labels" && l.shape.size() == 1;
    if (flat) check_shape(Shaped{l.shape}, path, key, 1, "(N,)", {N});
    else check_shape(Shaped{l.shape}, path, key, 2, "(N, n)", {N, n});
    std::vector<long> all = typed_labels(l, path, key);
    arrays.erase(it);
    if (flat) {
      labels = std::move(all);
    } else {
      if (!token_labels.empty())
        throw input_error(path, key, "expected per-token labels only once, got them in \"labels\" and \"token_labels\"");
      token_labels.reserve(N);
      for (std::size_t i = 0; i < N; ++i) token_labels.emplace_back(all.begin() + i * n, all.begin() + (i + 1) * n);
    }
  }
}

// The compact layout: "embedding" (V, d) and the integer "token_ids" (N, n), screened. Rows of the
// embedding with equal values are one token (the data set is the sequences of vectors, whatever the
// table's layout): the tokens are the distinct vectors in order of first use, as from "sequences".
TokenSequenceDataset sequence_tokens_from_npz(const std::string& path, const SequenceNpzScreen& sc) {
  NpzSelect small;
  small.want = [](const std::string& key) { return key == "embedding" || key == "labels" || key == "token_labels"; };
  auto arrays = npz_read_typed(path, false, small);
  auto eit = arrays.find("embedding");
  if (eit == arrays.end()) throw input_error(path, "", "expected an array named \"embedding\" of shape (V, d) with \"token_ids\"");
  TypedArray e = std::move(eit->second);
  arrays.erase(eit);
  check_shape(Shaped{e.shape}, path, "embedding", 2, "(V, d)", {sc.V, sc.d});  // as screened (the file may have changed)
  const std::size_t V = sc.V, d = sc.d;
  // rep[v]: the first row equal to row v.
  std::vector<std::uint32_t> rep(V);
  if (e.storage == Storage::rational) {
    std::map<QVector, std::uint32_t> first;
    for (std::size_t v = 0; v < V; ++v)
      rep[v] = first.emplace(QVector(e.q.begin() + v * d, e.q.begin() + (v + 1) * d), static_cast<std::uint32_t>(v)).first->second;
  } else {
    const bool f = e.storage == Storage::float64;
    if (f)
      for (double& x : e.f64)
        if (x == 0.0) x = 0.0;
    const char* base = f ? reinterpret_cast<const char*>(e.f64.data()) : reinterpret_cast<const char*>(e.i64.data());
    std::unordered_map<std::size_t, std::uint32_t, ByteRowHash, ByteRowEq> first(std::min<std::size_t>(V, 1 << 20),
                                                                                 ByteRowHash{base, d * 8}, ByteRowEq{base, d * 8});
    for (std::size_t v = 0; v < V; ++v) rep[v] = first.emplace(v, static_cast<std::uint32_t>(v)).first->second;
  }
  auto row = [&](std::size_t v) {
    QVector x(d);
    for (std::size_t j = 0; j < d; ++j)
      x[j] = e.storage == Storage::float64 ? rational_from_double(e.f64[v * d + j])
             : e.storage == Storage::int64 ? Rational(static_cast<long>(e.i64[v * d + j]))
                                           : e.q[v * d + j];
    return x;
  };
  TokenSequenceDataset t;
  t.N = sc.N, t.n = sc.n, t.d = d;
  typed_sequence_labels(arrays, path, t.N, t.n, t.labels, t.token_labels);
  arrays.clear();
  NpzSelect only_ids;
  only_ids.want = [](const std::string& key) { return key == "token_ids"; };
  auto id_arrays = npz_read_typed(path, false, only_ids);
  auto iit = id_arrays.find("token_ids");
  if (iit == id_arrays.end()) throw input_error(path, "", "expected an array named \"token_ids\" of shape (N, n)");
  const TypedArray& ids = iit->second;
  check_shape(Shaped{ids.shape}, path, "token_ids", 2, "(N, n)", {t.N, t.n});
  if (ids.storage == Storage::float64)
    throw input_error(path, "token_ids", "expected token indices of an integer dtype (int8 to int64, uint8 to uint64), got a float dtype");
  const std::size_t count = t.N * t.n;
  const std::string range = "[0, " + std::to_string(V) + ") (V = " + std::to_string(V) + " rows of \"embedding\")";
  std::vector<std::uint32_t> id_of(V, UINT32_MAX);
  t.ids.resize(count);
  for (std::size_t r = 0; r < count; ++r) {
    std::size_t v = 0;
    if (ids.storage == Storage::int64) {
      const std::int64_t x = ids.i64[r];
      if (x < 0 || static_cast<std::uint64_t>(x) >= V)
        throw input_error(path, "token_ids" + ndindex_to_string(ids.shape, r),
                          "expected a token index in " + range + ", got " + std::to_string(x));
      v = static_cast<std::size_t>(x);
    } else {  // uint64 values past 2^63 - 1
      const Rational& q = ids.q[r];
      if (q < 0 || q >= Rational(static_cast<unsigned long>(V)))
        throw input_error(path, "token_ids" + ndindex_to_string(ids.shape, r),
                          "expected a token index in " + range + ", got " + rational_to_string(q));
      v = static_cast<std::size_t>(q.get_num().get_ui());
    }
    std::uint32_t& id = id_of[rep[v]];
    if (id == UINT32_MAX) {
      id = static_cast<std::uint32_t>(t.tokens.size());
      t.tokens.push_back(row(rep[v]));
    }
    t.ids[r] = id;
  }
  return t;
}

}  // namespace

// The token table expanded into N matrices n x d (the rational reader's form).
SequenceDataset sequence_dataset_expand(TokenSequenceDataset&& t) {
  SequenceDataset ds;
  ds.sequences.reserve(t.N);
  for (std::size_t i = 0; i < t.N; ++i) {
    QMatrix x(t.n, t.d);
    for (std::size_t k = 0; k < t.n; ++k)
      for (std::size_t j = 0; j < t.d; ++j) x(k, j) = t.tokens[t.ids[i * t.n + k]][j];
    ds.sequences.push_back(std::move(x));
  }
  ds.labels = std::move(t.labels);
  ds.token_labels = std::move(t.token_labels);
  return ds;
}

namespace {

SequenceDataset sequence_from_npz(const std::string& file) {
  const SequenceNpzScreen sc = sequence_npz_screen(file);
  if (sc.token_ids) return sequence_dataset_expand(sequence_tokens_from_npz(file, sc));
  NpzSelect select;
  select.want = [](const std::string& key) { return key == "sequences" || key == "labels" || key == "token_labels"; };
  auto arrays = npz_read_typed(file, false, select);
  auto it = arrays.find("sequences");
  if (it == arrays.end()) throw input_error(file, "", "expected an array named \"sequences\" of shape (N, n, d)");
  check_shape(Shaped{it->second.shape}, file, "sequences", 3, "(N, n, d)", {sc.N, sc.n, sc.d});
  SequenceDataset ds;
  ds.sequences = ndarray_blocks(ndarray_from_typed(it->second));
  arrays.erase(it);
  typed_sequence_labels(arrays, file, sc.N, sc.n, ds.labels, ds.token_labels);
  return ds;
}

}  // namespace

std::string attention_labels_note() {
  return "labels: stored with an integer dtype and read as REAL labels (regression, as in Theorem 1); integer "
         "classes for arg-max memorization go under \"class_labels\"";
}

AttentionDataset attention_dataset_read(const std::string& path) {
  expect_data_set_file(path, kAttentionKeys);
  return has_extension(path, ".npz") ? attention_from_npz(path) : attention_from_json(json_read(path), path);
}

TypedAttentionDataset attention_dataset_read_typed(const std::string& path, bool keep_float32, bool with_labels) {
  expect_data_set_file(path, kAttentionKeys);
  if (has_extension(path, ".npz")) return attention_typed_from_npz(path, keep_float32, with_labels);
  AttentionDataset q = attention_from_json(json_read(path), path, with_labels);
  TypedAttentionDataset ds;
  ds.T = q.T(), ds.n = q.n(), ds.d = q.d();
  QMatrix all(ds.T * ds.n, ds.d);
  for (std::size_t t = 0; t < ds.T; ++t)
    std::copy(q.contexts[t].data().begin(), q.contexts[t].data().end(), all.data().begin() + t * ds.n * ds.d);
  ds.contexts = typed_matrix_from_qmat(std::move(all));
  ds.queries = typed_matrix_from_qmat(std::move(q.queries));
  ds.labels = std::move(q.labels);
  ds.class_labels = q.class_labels;
  ds.labels_integer_dtype = q.labels_integer_dtype;
  return ds;
}

TypedMatrix typed_dataset_context(const TypedAttentionDataset& ds, std::size_t t) {
  if (t >= ds.T) throw std::out_of_range("typed_dataset_context: example index past T");
  if (ds.contexts_f32.empty()) return typed_matrix_rows(ds.contexts, t * ds.n, ds.n);
  const Float32Le* e = ds.contexts_f32.data() + t * ds.n * ds.d;
  TypedMatrix out = typed_matrix_from_f64(ds.n, ds.d, std::vector<double>(e, e + ds.n * ds.d));
  out.stored_float_bytes = 4;
  return out;
}

AttentionDataset attention_dataset_read(const std::string& path, const AttentionReadOptions& options) {
  using S = AttentionReadOptions::Storage;
  if (options.storage == S::rational) return attention_dataset_read(path);
  if (options.storage == S::automatic) return attention_dataset_read_backed(path);
  auto typed = std::make_shared<TypedAttentionDataset>(
      attention_dataset_read_typed(path, options.keep_float32, options.with_labels));
  AttentionDataset ds;
  ds.queries = options.rational_queries ? typed_matrix_to_qmat(typed->queries) : QMatrix(0, typed->d);
  ds.labels = std::move(typed->labels);  // held once, beside the rational queries
  typed->labels.reset();
  ds.class_labels = typed->class_labels;
  ds.labels_integer_dtype = typed->labels_integer_dtype;
  ds.typed_T = typed->T;
  ds.typed_n = typed->n;
  ds.typed = std::move(typed);
  return ds;
}

AttentionDataset attention_dataset_from_typed(const TypedAttentionDataset& ds) {
  AttentionDataset out;
  for (std::size_t t = 0; t < ds.T; ++t) out.contexts.push_back(typed_matrix_to_qmat(typed_dataset_context(ds, t)));
  out.queries = typed_matrix_to_qmat(ds.queries);
  return out;
}

AttentionDataset attention_dataset_read_backed(const std::string& path) {
  if (!has_extension(path, ".npz")) return attention_dataset_read(path);
  expect_data_set_file(path, kAttentionKeys);
  auto arrays = npz_read_typed(path, true);
  auto c = arrays.find("contexts");
  // Missing or exotic contexts: the rational reader gives the same messages and takes any exact value.
  if (c == arrays.end() || c->second.shape.size() != 3 || c->second.count() == 0) return attention_dataset_read(path);
  TypedArray& ca = c->second;
  bool doubles = !ca.f32.empty() || ca.storage == Storage::float64;
  if (ca.f32.empty() && ca.storage == Storage::int64) {
    doubles = true;
    for (std::int64_t x : ca.i64) doubles = doubles && x <= (std::int64_t(1) << 53) && x >= -(std::int64_t(1) << 53);
  }
  if (!doubles) return attention_dataset_read(path);
  if (arrays.find("queries") == arrays.end())  // named with every array the file has (contexts included)
    throw input_error(path, "", "expected an array named \"queries\" of shape (T, d); " + npz_members_text(arrays));
  auto typed = std::make_shared<TypedAttentionDataset>();
  typed->T = ca.shape[0], typed->n = ca.shape[1], typed->d = ca.shape[2];
  const std::size_t rows = typed->T * typed->n, d = typed->d;
  if (!ca.f32.empty()) typed->contexts_f32 = std::move(ca.f32);
  else if (ca.storage == Storage::float64) {
    typed->contexts = typed_matrix_from_f64(rows, d, std::move(ca.f64));
    typed->contexts.stored_float_bytes = ca.stored_float_bytes;
  }
  else typed->contexts = typed_matrix_from_i64(rows, d, std::move(ca.i64));
  arrays.erase(c);
  std::map<std::string, NdArray> rest;
  for (auto& kv : arrays) {
    if (!kv.second.f32.empty()) kv.second.f64.assign(kv.second.f32.begin(), kv.second.f32.end()), kv.second.f32 = {};
    rest.emplace(kv.first, ndarray_from_typed(kv.second));
  }
  const NdArray& q = npz_member(rest, path, "queries", "of shape (T, d)");
  check_shape(q, path, "queries", 2, "(T, d)", {typed->T, typed->d});
  AttentionDataset ds;
  ds.queries = ndarray_matrix(q);
  attention_labels_from_arrays(rest, path, typed->T, ds);
  ds.typed_T = typed->T;
  ds.typed_n = typed->n;
  ds.typed = std::move(typed);
  return ds;
}

bool attention_context_doubles(const AttentionDataset& ds, std::size_t t, std::vector<double>& out) {
  if (!ds.typed) return false;
  const TypedAttentionDataset& ty = *ds.typed;
  if (t >= ty.T) throw std::out_of_range("attention_context_doubles: example index past T");
  const std::size_t block = ty.n * ty.d, at = t * block;
  out.resize(block);
  if (!ty.contexts_f32.empty()) std::copy(ty.contexts_f32.begin() + at, ty.contexts_f32.begin() + at + block, out.begin());
  else if (ty.contexts.storage == Storage::float64) std::copy(ty.contexts.f64.begin() + at, ty.contexts.f64.begin() + at + block, out.begin());
  else if (ty.contexts.storage == Storage::int64) {
    constexpr std::int64_t kExact = std::int64_t(1) << 53;  // a typed storage read as such may hold larger ones
    for (std::size_t i = 0; i < block; ++i) {
      const std::int64_t x = ty.contexts.i64[at + i];
      if (x > kExact || x < -kExact) return false;
      out[i] = static_cast<double>(x);  // |x| <= 2^53: exact
    }
  } else return false;
  return true;
}

QMatrix attention_context(const AttentionDataset& ds, std::size_t t) {
  if (!ds.typed) return ds.contexts.at(t);
  return typed_matrix_to_qmat(typed_dataset_context(*ds.typed, t));
}

void attention_dataset_materialize(AttentionDataset& ds) {
  if (!ds.typed) return;
  std::vector<QMatrix> ctx;
  ctx.reserve(ds.typed_T);
  for (std::size_t t = 0; t < ds.typed_T; ++t) ctx.push_back(attention_context(ds, t));
  if (ds.queries.rows() != ds.typed_T)  // left in the typed storage (AttentionReadOptions::rational_queries)
    ds.queries = typed_matrix_to_qmat(typed_matrix_rows(ds.typed->queries, 0, ds.typed_T));
  ds.contexts = std::move(ctx);
  ds.typed.reset();
  ds.typed_T = ds.typed_n = 0;
}

SequenceDataset sequence_dataset_read(const std::string& path) {
  expect_data_set_file(path, "sequences, labels");
  return has_extension(path, ".npz") ? sequence_from_npz(path) : sequence_from_json(json_read(path), path);
}

TokenSequenceDataset sequence_dataset_tokens(SequenceDataset&& ds, const std::string& file) {
  TokenSequenceDataset t;
  t.N = ds.N();
  t.n = ds.n();
  t.d = ds.d();
  if (t.N > 0 && t.n == 0) throw input_error(file, "sequences[0]", "expected at least one token, got none");
  if (t.N > 0 && t.d == 0) throw input_error(file, "sequences[0][0]", "expected at least one coordinate, got none");
  for (std::size_t i = 0; i < t.N; ++i) {
    if (ds.sequences[i].rows() != t.n)
      throw input_error(file, idx("sequences", i),
                        "expected " + std::to_string(t.n) + " tokens (n = " + std::to_string(t.n) +
                            ", as sequences[0]), got " + std::to_string(ds.sequences[i].rows()));
    if (ds.sequences[i].cols() != t.d)
      throw input_error(file, idx("sequences", i),
                        "expected tokens of dimension d = " + std::to_string(t.d) + " (as sequences[0]), got " +
                            std::to_string(ds.sequences[i].cols()));
  }
  t.ids.resize(t.N * t.n);
  std::map<QVector, std::uint32_t> ids;
  for (std::size_t i = 0; i < t.N; ++i) {
    for (std::size_t k = 0; k < t.n; ++k) {
      QVector x(ds.sequences[i].row(k), ds.sequences[i].row(k) + t.d);
      auto [it, fresh] = ids.emplace(std::move(x), static_cast<std::uint32_t>(t.tokens.size()));
      if (fresh) t.tokens.push_back(it->first);
      t.ids[i * t.n + k] = it->second;
    }
    ds.sequences[i] = QMatrix();
  }
  t.labels = std::move(ds.labels);
  t.token_labels = std::move(ds.token_labels);
  return t;
}

TokenSequenceDataset sequence_dataset_read_tokens(const std::string& path) {
  if (!has_extension(path, ".npz")) return sequence_dataset_tokens(sequence_dataset_read(path), path);
  expect_data_set_file(path, "sequences, labels");
  const SequenceNpzScreen sc = sequence_npz_screen(path);
  if (sc.token_ids) return sequence_tokens_from_npz(path, sc);
  NpzSelect select;
  select.want = [](const std::string& key) { return key == "sequences" || key == "labels" || key == "token_labels"; };
  auto arrays = npz_read_typed(path, false, select);
  auto it = arrays.find("sequences");
  if (it == arrays.end()) throw input_error(path, "", "expected an array named \"sequences\" of shape (N, n, d)");
  TypedArray& s = it->second;
  check_shape(Shaped{s.shape}, path, "sequences", 3, "(N, n, d)", {sc.N, sc.n, sc.d});
  TokenSequenceDataset t;
  t.N = s.shape[0], t.n = s.shape[1], t.d = s.shape[2];
  const std::size_t rows = t.N * t.n, d = t.d;
  if (rows > 0 && d > 0) {
    if (s.storage == Storage::rational || rows > std::size_t(UINT32_MAX)) {
      // Rational storage: through the exact reader (small files only hold such arrays).
      return sequence_dataset_tokens(sequence_dataset_read(path), path);
    }
    // Distinct rows by their bytes (float64 with -0.0 made 0.0, or int64): equal bytes <=> equal values.
    const bool f = s.storage == Storage::float64;
    if (f)
      for (double& v : s.f64)
        if (v == 0.0) v = 0.0;
    const char* base = f ? reinterpret_cast<const char*>(s.f64.data()) : reinterpret_cast<const char*>(s.i64.data());
    const std::size_t row_bytes = d * 8;
    std::unordered_map<std::size_t, std::uint32_t, ByteRowHash, ByteRowEq> first(1024, ByteRowHash{base, row_bytes},
                                                                                 ByteRowEq{base, row_bytes});
    t.ids.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      auto [pos, fresh] = first.emplace(r, static_cast<std::uint32_t>(t.tokens.size()));
      if (fresh) {
        QVector x(d);
        for (std::size_t j = 0; j < d; ++j) x[j] = f ? rational_from_double(s.f64[r * d + j]) : Rational(static_cast<long>(s.i64[r * d + j]));
        t.tokens.push_back(std::move(x));
      }
      t.ids[r] = pos->second;
    }
  }
  arrays.erase(it);
  typed_sequence_labels(arrays, path, t.N, t.n, t.labels, t.token_labels);
  return t;
}

}  // namespace memcert
