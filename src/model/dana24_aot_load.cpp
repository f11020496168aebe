// dana24-aot: the state_dict of the authors' Transformer / AoT classes read into Dana24Aot, every tensor
// checked against the shapes the keys imply; the data set's .npz.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "memcert/data/matrix_io.hpp"
#include "memcert/model/dana24_aot.hpp"
#include "memcert/util/error.hpp"

namespace memcert {

namespace {

std::string shape_text(const std::vector<std::size_t>& s) {
  std::string t = "(";
  for (std::size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + (s.size() == 1 ? ",)" : ")");
}

class Loader {
 public:
  Loader(const StateDict& sd, const std::string& file) : sd_(sd), file_(file) {}

  const Tensor* find(const std::string& key) const { return sd_.find(key); }

  // The float tensor under `key` of exactly `shape` (every value finite); marks the key as used.
  const std::vector<double>& take(const std::string& key, const std::vector<std::size_t>& shape) {
    const Tensor* t = sd_.find(key);
    if (!t) throw input_error(file_, key, "expected a tensor of shape " + shape_text(shape) + ", missing");
    if (!dtype_is_float(t->dtype))
      throw input_error(file_, key, std::string("expected a floating-point tensor, got ") + dtype_name(t->dtype));
    if (t->shape != shape)
      throw input_error(file_, key, "expected shape " + shape_text(shape) + ", got " + shape_text(t->shape));
    for (std::size_t k = 0; k < t->f64.size(); ++k)
      if (!std::isfinite(t->f64[k]))
        throw input_error(file_, key + ndindex_to_string(t->shape, k), "expected a finite value");
    used_.insert(key);
    return t->f64;
  }
  // The 2-D float tensor under `key`, its shape inferred (each dimension >= 1).
  const Tensor& take_2d(const std::string& key) {
    const Tensor* t = sd_.find(key);
    if (!t) throw input_error(file_, key, "expected a 2-D tensor, missing");
    if (t->shape.size() != 2 || t->shape[0] == 0 || t->shape[1] == 0)
      throw input_error(file_, key, "expected a non-empty 2-D tensor, got shape " + shape_text(t->shape));
    take(key, t->shape);
    return *t;
  }
  void mark(const std::string& key) { used_.insert(key); }
  void check_no_extra() const {
    for (const auto& [key, t] : sd_.entries())
      if (!used_.count(key)) throw input_error(file_, key, "expected no such tensor in a dana24-aot state_dict");
  }
  const std::string& file() const { return file_; }

 private:
  const StateDict& sd_;
  std::string file_;
  std::set<std::string> used_;
};

std::string block_key(std::size_t l, std::size_t p, const char* leaf) {
  return "attn_seq." + std::to_string(l) + "." + std::to_string(p) + "." + leaf;
}
std::string mlp_key(std::size_t l, const char* leaf) { return "mlp_seq." + std::to_string(l) + "." + leaf; }

}  // namespace

namespace {
// values false: `sd` holds headers only (keys, dtypes, shapes), checked as the full load checks them
// (heads 0: not checked).
Dana24Aot aot_load(const StateDict& sd, std::size_t heads, const std::string& file, bool values) {
  Loader ld(sd, file);
  Dana24Aot m;
  m.file = file;
  const Tensor& we = ld.take_2d("word_emb.weight");
  m.N = we.shape[0];
  m.d = we.shape[1];
  m.word_emb = we.f64;
  if (m.N < 2) throw input_error(file, "word_emb.weight", "expected at least 2 rows (tokens), got 1");
  const Tensor& pe = ld.take_2d("pos_emb.weight");
  m.S_max = pe.shape[0];
  m.d_head = pe.shape[1];
  m.pos_emb = pe.f64;
  m.unemb = ld.take("unemb.weight", {m.N, m.d});
  m.compress = m.d != m.d_head;

  // Layers and parallel blocks, from the keys attn_seq.<l>.<p>.in_proj_weight.
  while (ld.find(block_key(m.layers, 0, "in_proj_weight"))) ++m.layers;
  if (m.layers > 0)
    while (ld.find(block_key(0, m.parallel, "in_proj_weight"))) ++m.parallel;
  if (m.layers > 0 && (values || heads != 0)) {
    if (heads == 0 || m.d_head % heads != 0)
      throw input_error(file, "--heads", "expected a divisor of d_head = " + std::to_string(m.d_head) + ", got " +
                                             std::to_string(heads));
  }
  m.heads = heads == 0 ? 1 : heads;
  const std::size_t dh = m.d_head;
  for (std::size_t l = 0; l < m.layers; ++l)
    for (std::size_t p = 0; p < m.parallel; ++p) {
      m.in_proj.push_back(ld.take(block_key(l, p, "in_proj_weight"), {3 * dh, dh}));
      m.out_proj.push_back(ld.take(block_key(l, p, "out_proj.weight"), {dh, dh}));
    }

  if (m.compress) {
    m.compress_w = ld.take("linear_compress.weight", {dh, m.d});
    m.decompress_w = ld.take("linear_decompress.weight", {m.d, dh});
  } else {  // stored by the authors' class even when unused
    if (ld.find("linear_compress.weight")) ld.take("linear_compress.weight", {dh, m.d});
    if (ld.find("linear_decompress.weight")) ld.take("linear_decompress.weight", {m.d, dh});
  }

  // MLPs: all layers or none.
  if (ld.find(mlp_key(0, "0.weight"))) {
    if (m.layers == 0) throw input_error(file, mlp_key(0, "0.weight"), "expected no MLP in a model without attention layers");
    const Tensor& w1 = ld.take_2d(mlp_key(0, "0.weight"));
    m.width = w1.shape[0];
    for (std::size_t l = 0; l < m.layers; ++l) {
      m.mlp_w1.push_back(ld.take(mlp_key(l, "0.weight"), {m.width, m.d}));
      m.mlp_b1.push_back(ld.take(mlp_key(l, "0.bias"), {m.width}));
      m.mlp_w2.push_back(ld.take(mlp_key(l, "2.weight"), {m.d, m.width}));
    }
  }

  // attn_mask: the causal mask (True above the diagonal) of size context_window - 1.
  m.max_len = m.S_max;
  if (const Tensor* mask = ld.find("attn_mask")) {
    const std::size_t n = m.S_max - 1;
    if (mask->shape != std::vector<std::size_t>{n, n})
      throw input_error(file, "attn_mask", "expected shape " + shape_text({n, n}) + " (pos_emb.weight rows - 1), got " +
                                               shape_text(mask->shape));
    for (std::size_t i = 0; values && i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t k = i * n + j;
        const double v = dtype_is_float(mask->dtype) ? mask->f64[k] : static_cast<double>(mask->i64[k]);
        if (v != (j > i ? 1.0 : 0.0))
          throw input_error(file, "attn_mask" + ndindex_to_string(mask->shape, k),
                            std::string("expected the causal mask (") + (j > i ? "True" : "False") + " at this position)");
      }
    ld.mark("attn_mask");
    m.max_len = n;
    m.has_mask = true;
    if (n == 0) throw input_error(file, "attn_mask", "expected pos_emb.weight to have at least 2 rows with an attn_mask");
  }
  ld.check_no_extra();
  return m;
}
}  // namespace

Dana24Aot dana24_aot_load(const StateDict& sd, std::size_t heads, const std::string& file) {
  return aot_load(sd, heads, file, true);
}

void dana24_aot_screen(const StateDict& headers, std::size_t heads, const std::string& file) {
  (void)aot_load(headers, heads, file, false);
}

Dana24AotData dana24_aot_read_data(const std::string& path) {
  // Member names, then each member's dtype and rank, are checked before its values are read.
  NpzSelect select;
  select.want = [&](const std::string& name) {
    if (name != "sequences" && name != "next")
      throw input_error(path, name, "expected only the members sequences (T, S) and next (T,)");
    return true;
  };
  select.header = [&](const std::string& name, const std::vector<std::size_t>& shape, char kind) {
    if (kind == 'f') throw input_error(path, name, "expected an integer array (token ids), got floating-point values");
    const std::size_t dims = name == "sequences" ? 2 : 1;
    if (shape.size() != dims)
      throw input_error(path, name, "expected a " + std::to_string(dims) + "-D array, got shape " + shape_text(shape));
  };
  auto arrays = npz_read_typed(path, /*keep_float32=*/false, select);
  Dana24AotData data;
  data.file = path;
  auto get = [&](const char* name, std::size_t dims) -> const TypedArray& {
    auto it = arrays.find(name);
    if (it == arrays.end()) throw input_error(path, name, "expected an integer array, missing");
    const TypedArray& a = it->second;
    if (a.storage != Storage::int64)
      throw input_error(path, name, "expected an integer array (token ids), got floating-point values");
    if (a.shape.size() != dims)
      throw input_error(path, name, "expected a " + std::to_string(dims) + "-D array, got shape " + shape_text(a.shape));
    return a;
  };
  const TypedArray& seq = get("sequences", 2);
  const TypedArray& next = get("next", 1);
  data.T = seq.shape[0];
  data.S = seq.shape[1];
  if (data.T == 0 || data.S == 0)
    throw input_error(path, "sequences", "expected at least one sequence of at least one token, got shape " + shape_text(seq.shape));
  if (next.shape[0] != data.T)
    throw input_error(path, "next", "expected shape (" + std::to_string(data.T) + ",) (one target per sequence), got " +
                                        shape_text(next.shape));
  data.sequences = seq.i64;
  data.next = next.i64;
  return data;
}

void dana24_aot_check_data(const Dana24Aot& m, const Dana24AotData& data) {
  if (data.sequences.size() != data.T * data.S || data.next.size() != data.T)
    throw input_error(data.file, "sequences", "expected T x S token ids and T targets");
  if (data.S > m.max_len)
    throw input_error(data.file, "sequences",
                      "expected at most " + std::to_string(m.max_len) + " tokens per sequence (the model's " +
                          (m.max_len < m.S_max ? "attn_mask" : "pos_emb.weight rows") + "), got " +
                          std::to_string(data.S));
  // The authors' forward gives attn_mask (max_len x max_len) to MultiheadAttention, which raises unless
  // the sequence length is max_len: a shorter sequence is not an input of the model as stored.
  if (m.has_mask && data.S != m.max_len)
    throw input_error(data.file, "sequences[0]",
                      "expected exactly " + std::to_string(m.max_len) + " tokens per sequence (the model's attn_mask is " +
                          std::to_string(m.max_len) + " x " + std::to_string(m.max_len) +
                          ", and its forward refuses any other length), got " + std::to_string(data.S));
  const auto n = static_cast<std::int64_t>(m.N);
  for (std::size_t k = 0; k < data.sequences.size(); ++k)
    if (data.sequences[k] < 0 || data.sequences[k] >= n)
      throw input_error(data.file, "sequences[" + std::to_string(k / data.S) + "][" + std::to_string(k % data.S) + "]",
                        "expected a token id in [0, " + std::to_string(m.N) + ")");
  for (std::size_t t = 0; t < data.T; ++t)
    if (data.next[t] < 0 || data.next[t] >= n)
      throw input_error(data.file, "next[" + std::to_string(t) + "]",
                        "expected a token id in [0, " + std::to_string(m.N) + ")");
}

}  // namespace memcert
