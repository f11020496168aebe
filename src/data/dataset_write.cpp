// Data set writers: JSON (exact strings; real "labels" or integer "class_labels") and float64 .npz (only for data that is exactly
// representable in double, as generated float data is). Formats as read by dataset.cpp.
#include <algorithm>
#include <bit>
#include <functional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "memcert/data/dataset.hpp"
#include "memcert/data/matrix_io.hpp"

namespace memcert {

namespace {

using nlohmann::json;
using NpzArrays = std::map<std::string, std::pair<std::vector<std::size_t>, std::vector<double>>>;

json blocks_to_json(const std::vector<QMatrix>& blocks) {
  json out = json::array();
  for (const QMatrix& b : blocks) out.push_back(qmat_to_json(b));
  return out;
}

json labels_to_json(const std::vector<long>& labels) {
  json out = json::array();
  for (long v : labels) out.push_back(static_cast<std::int64_t>(v));
  return out;
}

json label_rows_to_json(const std::vector<std::vector<long>>& rows) {
  json out = json::array();
  for (const auto& r : rows) out.push_back(labels_to_json(r));
  return out;
}

long class_label(const Rational& q, std::size_t t) {
  if (q.get_den() != 1 || !q.get_num().fits_slong_p())
    throw std::invalid_argument("class label " + std::to_string(t) + " is not an integer: " + rational_to_string(q));
  return q.get_num().get_si();
}

std::vector<long> class_labels(const AttentionDataset& ds) {
  std::vector<long> out;
  for (std::size_t t = 0; t < ds.labels->rows(); ++t) out.push_back(class_label((*ds.labels)(t, 0), t));
  return out;
}

double exact_double(const Rational& q_in, const char* what) {
  Rational q = q_in;
  q.canonicalize();  // generators may build non-canonical values such as -2/2
  double x = rational_to_double(q);
  if (rational_from_double(x) != q)
    throw std::invalid_argument(std::string("npz writer: ") + what + " holds " + rational_to_string(q) +
                                ", which is not exactly a double");
  return x;
}

void append(std::vector<double>& out, const QMatrix& m, const char* what) {
  for (const Rational& q : m.data()) out.push_back(exact_double(q, what));
}

// A data set is several arrays: .npy (one array) cannot hold it.
void refuse_npy(const std::string& path) {
  if (path_extension_lower(path) == ".npy")
    throw input_error(path, "", "expected a data set file name ending in .json or .npz (.npy holds one array; "
                                "numpy.savez writes .npz), got .npy");
}

}  // namespace

void attention_dataset_write(const std::string& path, const AttentionDataset& ds) {
  refuse_npy(path);
  if (path_extension_lower(path) == ".npz") attention_dataset_write_npz(path, ds);
  else attention_dataset_write_json(path, ds);
}

void sequence_dataset_write(const std::string& path, const SequenceDataset& ds) {
  refuse_npy(path);
  if (path_extension_lower(path) == ".npz") sequence_dataset_write_npz(path, ds);
  else sequence_dataset_write_json(path, ds);
}

void attention_dataset_write_json(const std::string& path, const AttentionDataset& ds) {
  json root{{"contexts", blocks_to_json(ds.contexts)}, {"queries", qmat_to_json(ds.queries)}};
  if (ds.labels && ds.class_labels) root["class_labels"] = labels_to_json(class_labels(ds));
  else if (ds.labels) root["labels"] = qmat_to_json(*ds.labels);
  file_write_atomic(path, root.dump() + "\n");
}

void sequence_dataset_write_json(const std::string& path, const SequenceDataset& ds) {
  json root{{"sequences", blocks_to_json(ds.sequences)}};
  if (!ds.labels.empty()) {
    root["labels"] = labels_to_json(ds.labels);
    if (!ds.token_labels.empty()) root["token_labels"] = label_rows_to_json(ds.token_labels);
  } else if (!ds.token_labels.empty()) {
    root["labels"] = label_rows_to_json(ds.token_labels);
  }
  file_write_atomic(path, root.dump() + "\n");
}

void attention_dataset_write_npz(const std::string& path, const AttentionDataset& ds) {
  NpzArrays arrays;
  auto& c = arrays["contexts"];
  c.first = {ds.T(), ds.n(), ds.T() ? ds.contexts[0].cols() : 0};
  for (const QMatrix& e : ds.contexts) append(c.second, e, "contexts");
  auto& q = arrays["queries"];
  q.first = {ds.queries.rows(), ds.queries.cols()};
  append(q.second, ds.queries, "queries");
  if (ds.labels) {
    auto& l = arrays[ds.class_labels ? "class_labels" : "labels"];
    if (ds.class_labels) {
      for (long v : class_labels(ds)) l.second.push_back(exact_double(Rational(v), "class_labels"));
      l.first = {ds.T()};
    } else {
      l.first = {ds.labels->rows(), ds.labels->cols()};
      append(l.second, *ds.labels, "labels");
    }
  }
  npz_write_float64(path, arrays);
}

void sequence_dataset_write_npz(const std::string& path, const SequenceDataset& ds) {
  NpzArrays arrays;
  auto& s = arrays["sequences"];
  s.first = {ds.N(), ds.n(), ds.d()};
  for (const QMatrix& x : ds.sequences) append(s.second, x, "sequences");
  auto labels = [&](const char* key, std::vector<std::size_t> shape, const std::vector<long>& flat) {
    auto& l = arrays[key];
    l.first = std::move(shape);
    for (long v : flat) l.second.push_back(exact_double(Rational(v), key));
  };
  std::vector<long> tokens;
  for (const auto& r : ds.token_labels) tokens.insert(tokens.end(), r.begin(), r.end());
  if (!ds.labels.empty()) labels("labels", {ds.N()}, ds.labels);
  if (!ds.token_labels.empty()) labels(ds.labels.empty() ? "labels" : "token_labels", {ds.N(), ds.n()}, tokens);
  npz_write_float64(path, arrays);
}

void sequence_dataset_write_tokens(const std::string& path, const TokenSequenceDataset& ds) {
  refuse_npy(path);
  if (path_extension_lower(path) == ".npz") {
    // The float64 arrays of sequence_dataset_write_npz, each distinct token converted (and checked) once,
    // streamed into the archive (the N x n x d array is never held in memory).
    std::vector<std::vector<double>> tok(ds.tokens.size());
    for (std::size_t t = 0; t < ds.tokens.size(); ++t)
      for (const Rational& q : ds.tokens[t]) tok[t].push_back(exact_double(q, "sequences"));
    for (std::uint32_t id : ds.ids)
      if (id >= tok.size()) throw std::logic_error("sequence_dataset_write_tokens: token index out of range");
    std::vector<NpzFloat64Stream> members;
    members.push_back({"sequences", {ds.N, ds.n, ds.d}, [&](const auto& put) {
                         for (std::uint32_t id : ds.ids) put(tok[id].data(), tok[id].size());
                       }});
    auto labels = [&](const char* key, std::vector<std::size_t> shape, std::vector<double> flat) {
      members.push_back({key, std::move(shape), [flat = std::move(flat)](const auto& put) { put(flat.data(), flat.size()); }});
    };
    auto doubles = [](const std::vector<long>& v, const char* key) {
      std::vector<double> out;
      out.reserve(v.size());
      for (long x : v) out.push_back(exact_double(Rational(x), key));
      return out;
    };
    std::vector<long> tokens;
    for (const auto& r : ds.token_labels) tokens.insert(tokens.end(), r.begin(), r.end());
    if (!ds.labels.empty()) labels("labels", {ds.N}, doubles(ds.labels, "labels"));
    if (!ds.token_labels.empty()) {
      const char* key = ds.labels.empty() ? "labels" : "token_labels";
      labels(key, {ds.N, ds.n}, doubles(tokens, key));
    }
    npz_write_float64_stream(path, std::move(members));
    return;
  }
  // JSON: the text of sequence_dataset_write_json (keys in its order), each token's text made once.
  std::vector<std::string> tok(ds.tokens.size());
  for (std::size_t t = 0; t < ds.tokens.size(); ++t) tok[t] = qvec_to_json(ds.tokens[t]).dump();
  std::string out = "{";
  if (!ds.labels.empty()) {
    out += "\"labels\":" + labels_to_json(ds.labels).dump() + ",";
  } else if (!ds.token_labels.empty()) {
    out += "\"labels\":" + label_rows_to_json(ds.token_labels).dump() + ",";
  }
  out += "\"sequences\":[";
  for (std::size_t i = 0; i < ds.N; ++i) {
    if (i) out += ',';
    out += '[';
    for (std::size_t k = 0; k < ds.n; ++k) {
      if (k) out += ',';
      out += tok[ds.ids[i * ds.n + k]];
    }
    out += ']';
  }
  out += ']';
  if (!ds.labels.empty() && !ds.token_labels.empty())
    out += ",\"token_labels\":" + label_rows_to_json(ds.token_labels).dump();
  out += "}\n";
  file_write_atomic(path, out);
}

void sequence_dataset_write_token_ids(const std::string& path, const TokenSequenceDataset& ds) {
  if (path_extension_lower(path) != ".npz")
    throw input_error(path, "", "expected a file name ending in .npz for the token_ids layout (token_ids and embedding arrays)");
  const std::size_t V = ds.tokens.size();
  if (ds.ids.size() != ds.N * ds.n) throw std::logic_error("sequence_dataset_write_token_ids: N n token indices expected");
  for (std::uint32_t id : ds.ids)
    if (id >= V) throw std::logic_error("sequence_dataset_write_token_ids: token index out of range");
  std::vector<double> table;
  table.reserve(V * ds.d);
  for (const QVector& t : ds.tokens) {
    if (t.size() != ds.d) throw std::logic_error("sequence_dataset_write_token_ids: token of another dimension");
    for (const Rational& q : t) table.push_back(exact_double(q, "embedding"));
  }
  const bool narrow = V <= 65536;
  std::vector<NpzStream> members;
  members.push_back({"embedding", {V, ds.d}, "<f8", [&table](const auto& put) {
                       std::string bytes(8 * table.size(), '\0');
                       for (std::size_t i = 0; i < table.size(); ++i) {
                         const std::uint64_t bits = std::bit_cast<std::uint64_t>(table[i]);
                         for (int b = 0; b < 8; ++b) bytes[8 * i + std::size_t(b)] = static_cast<char>((bits >> (8 * b)) & 0xff);
                       }
                       put(bytes.data(), table.size());
                     }});
  // Integers as little-endian bytes of `width`, in pieces of 64 Ki values.
  auto integers = [](const char* name, std::vector<std::size_t> shape, const char* descr, std::size_t width, std::size_t count,
                     std::function<std::int64_t(std::size_t)> at) {
    return NpzStream{name, std::move(shape), descr, [width, count, at = std::move(at)](const auto& put) {
                       constexpr std::size_t kPiece = std::size_t(1) << 16;
                       std::string bytes;
                       for (std::size_t from = 0; from < count; from += kPiece) {
                         const std::size_t m = std::min(kPiece, count - from);
                         bytes.assign(m * width, '\0');
                         for (std::size_t i = 0; i < m; ++i) {
                           const std::uint64_t v = static_cast<std::uint64_t>(at(from + i));
                           for (std::size_t b = 0; b < width; ++b) bytes[i * width + b] = static_cast<char>((v >> (8 * b)) & 0xff);
                         }
                         put(bytes.data(), m);
                       }
                     }};
  };
  if (ds.labels.size() != 0 && ds.labels.size() != ds.N) throw std::logic_error("sequence_dataset_write_token_ids: N labels expected");
  const bool wide = V > (std::size_t(1) << 31);  // int32 holds indices below 2^31
  members.push_back(integers("token_ids", {ds.N, ds.n}, narrow ? "<u2" : wide ? "<i8" : "<i4", narrow ? 2 : wide ? 8 : 4, ds.ids.size(),
                             [&ds](std::size_t r) { return std::int64_t(ds.ids[r]); }));
  if (!ds.labels.empty())
    members.push_back(integers("labels", {ds.N}, "<i8", 8, ds.N, [&ds](std::size_t i) { return std::int64_t(ds.labels[i]); }));
  if (!ds.token_labels.empty()) {
    for (const auto& row : ds.token_labels)
      if (row.size() != ds.n) throw std::logic_error("sequence_dataset_write_token_ids: per-token labels of another length");
    members.push_back(integers(ds.labels.empty() ? "labels" : "token_labels", {ds.N, ds.n}, "<i8", 8, ds.N * ds.n,
                               [&ds](std::size_t r) { return std::int64_t(ds.token_labels[r / ds.n][r % ds.n]); }));
  }
  npz_write_stream(path, std::move(members));
}

}  // namespace memcert
