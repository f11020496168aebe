// nn.MultiheadAttention state_dicts and memcert's --weights-out arrays as one attention read-out (mha_model.hpp).
#include "memcert/model/mha_model.hpp"

#include <cmath>

#include "memcert/data/typed_dataset.hpp"
#include "memcert/util/error.hpp"
#include "model_load.hpp"

namespace memcert {

using model_load::kAny;

namespace {

// values false (load_*): `sd` holds headers only, checked as the full load checks them (heads 0: not
// checked).
MhaModel load_torch(const StateDict& sd, std::size_t heads, const std::string& file, bool values) {
  MhaModel m;
  m.layout = "torch";
  AttentionReadout& a = m.net;
  std::vector<double> Wq, Wk, Wv, b;
  std::size_t E = 0;
  std::set<std::string> known = {"out_proj.weight", "out_proj.bias", "in_proj_bias", "readout.weight", "readout.bias"};
  if (sd.find("in_proj_weight")) {
    const Tensor& w = model_load::tensor(sd, file, "in_proj_weight", {kAny, kAny}, "3 embed_dim, embed_dim");
    E = w.shape[1];
    if (w.shape[0] != 3 * E)
      throw input_error(file, "in_proj_weight", "expected a float tensor of shape " + model_load::shape_text({3 * E, E}) +
                                                    " (3 embed_dim, embed_dim), got shape " + model_load::shape_text(w.shape));
    if (values) {
      Wq.assign(w.f64.begin(), w.f64.begin() + E * E);
      Wk.assign(w.f64.begin() + E * E, w.f64.begin() + 2 * E * E);
      Wv.assign(w.f64.begin() + 2 * E * E, w.f64.end());
    }
    known.insert("in_proj_weight");
  } else {
    const Tensor& q = model_load::tensor(sd, file, "q_proj_weight", {kAny, kAny}, "embed_dim, embed_dim (or in_proj_weight)");
    E = q.shape[0];
    Wq = model_load::values(sd, file, "q_proj_weight", {E, E}, "embed_dim, embed_dim");
    Wk = model_load::values(sd, file, "k_proj_weight", {E, E}, "embed_dim, kdim = embed_dim");
    Wv = model_load::values(sd, file, "v_proj_weight", {E, E}, "embed_dim, vdim = embed_dim");
    known.insert({"q_proj_weight", "k_proj_weight", "v_proj_weight"});
  }
  const bool bias = sd.find("in_proj_bias") || sd.find("out_proj.bias");
  if (bias) b = model_load::values(sd, file, "in_proj_bias", {3 * E}, "3 embed_dim");
  const std::vector<double> Wout = model_load::values(sd, file, "out_proj.weight", {E, E}, "embed_dim, embed_dim");
  std::vector<double> bout;
  if (bias) bout = model_load::values(sd, file, "out_proj.bias", {E}, "embed_dim");
  if (heads == 0 && !values) heads = 1;
  if (heads == 0) throw InputError("--heads: required for a torch nn.MultiheadAttention (its num_heads; the tensors do not say)");
  if (E % heads != 0)
    throw InputError("--heads " + std::to_string(heads) + ": expected a divisor of embed_dim = " + std::to_string(E));
  if (const Tensor* r = sd.find("readout.weight")) {
    (void)r;
    const Tensor& rw = model_load::tensor(sd, file, "readout.weight", {kAny, E}, "C, embed_dim");
    a.readout = true;
    a.C = rw.shape[0];
    a.Wr = rw.f64;
    if (sd.find("readout.bias")) a.br = model_load::values(sd, file, "readout.bias", {a.C}, "C");
  } else if (sd.find("readout.bias")) {
    model_load::tensor(sd, file, "readout.weight", {kAny, E}, "C, embed_dim");
  } else {
    a.C = E;
  }
  model_load::no_extra(sd, file, known, "mha");
  if (!values) return m;
  const std::size_t hd = E / heads;
  m.heads = heads;
  a.d_in = a.D = E;
  a.H = heads;
  a.dh = a.dv = hd;
  a.d_o = E;
  a.scale_m = hd;
  a.Wq.assign(heads * E * hd, 0.0);
  a.Wk.assign(heads * E * hd, 0.0);
  a.Wv.assign(heads * E * hd, 0.0);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t l = 0; l < E; ++l)
      for (std::size_t c = 0; c < hd; ++c) {
        const std::size_t row = h * hd + c;  // q = W_q x + b_q: row `row` of W_q is head h's coordinate c
        a.Wq[(h * E + l) * hd + c] = Wq[row * E + l];
        a.Wk[(h * E + l) * hd + c] = Wk[row * E + l];
        a.Wv[(h * E + l) * hd + c] = Wv[row * E + l];
      }
  if (bias) {
    a.bq.assign(b.begin(), b.begin() + E);
    a.bk.assign(b.begin() + E, b.begin() + 2 * E);
    a.bv.assign(b.begin() + 2 * E, b.end());
    a.bo = bout;
  }
  a.Wo.assign(E * E, 0.0);  // out = W_out o + b_out: Wo[(h hd + c)][k] = W_out[k][h hd + c]
  for (std::size_t k = 0; k < E; ++k)
    for (std::size_t i = 0; i < E; ++i) a.Wo[i * E + k] = Wout[k * E + i];
  attention_readout_check(a);
  return m;
}

MhaModel load_memcert(const StateDict& sd, std::size_t heads, const std::string& file, bool values) {
  MhaModel m;
  m.layout = "memcert";
  AttentionReadout& a = m.net;
  const Tensor& wk = model_load::tensor(sd, file, "WK", {kAny, kAny, kAny}, "H, d, dh");
  a.H = wk.shape[0];
  a.D = a.d_in = wk.shape[1];
  a.dh = wk.shape[2];
  a.Wk = wk.f64;
  a.Wq = model_load::values(sd, file, "WQ", {a.H, a.D, a.dh}, "H, d, dh");
  const Tensor& wv = model_load::tensor(sd, file, "WV", {a.H, a.D, kAny}, "H, d, dv");
  a.dv = wv.shape[2];
  a.Wv = wv.f64;
  a.Wo = model_load::values(sd, file, "WO", {a.H * a.dv, a.D}, "H dv, d");
  a.d_o = a.D;
  const Tensor& wd = model_load::tensor(sd, file, "WD", {a.D, kAny}, "d, d_out");
  a.C = wd.shape[1];
  a.readout = true;
  if (values) {
    a.Wr.assign(a.C * a.D, 0.0);
    for (std::size_t k = 0; k < a.D; ++k)
      for (std::size_t c = 0; c < a.C; ++c) a.Wr[c * a.D + k] = wd.f64[k * a.C + c];
  }
  const Tensor* skip = sd.find("skip");
  if (!skip) throw input_error(file, "skip", "missing: expected a scalar 0 or 1 (shape ())");
  if (!skip->shape.empty() || (values && (dtype_is_float(skip->dtype) ? !(skip->f64[0] == 0 || skip->f64[0] == 1)
                                                                      : !(skip->i64[0] == 0 || skip->i64[0] == 1))))
    throw input_error(file, "skip", "expected a scalar 0 or 1 (shape ())");
  if (values) a.skip = dtype_is_float(skip->dtype) ? skip->f64[0] == 1 : skip->i64[0] == 1;
  std::set<std::string> known = {"WK", "WQ", "WV", "WO", "WD", "skip"};
  const std::vector<std::pair<std::string, std::vector<std::size_t>>> torch_keys = {
      {"torch_in_proj_weight", {3 * a.D, a.D}}, {"torch_in_proj_bias", {3 * a.D}}, {"torch_out_proj_weight", {a.D, a.D}},
      {"torch_out_proj_bias", {a.D}}, {"torch_readout_weight", {a.C, a.D}}};
  bool any_torch = false;
  for (const auto& [k, s] : torch_keys) any_torch = any_torch || sd.find(k);
  if (any_torch)
    for (const auto& [k, s] : torch_keys) {
      model_load::tensor(sd, file, k, s, "the PyTorch layout --weights-out adds");
      known.insert(k);
    }
  model_load::no_extra(sd, file, known, "mha");
  if (heads != 0 && heads != a.H)
    throw InputError("--heads " + std::to_string(heads) + ": expected " + std::to_string(a.H) + " (WK's first dimension) or none");
  m.heads = a.H;
  a.scale_m = 1;
  if (values) attention_readout_check(a);
  return m;
}

std::vector<double> exact_doubles(const TypedMatrix& a, const std::string& path, const char* what) {
  Matrix<double> m;
  if (!typed_matrix_to_double(a, m))
    throw input_error(path, what, "expected values that are exactly doubles (an integer beyond 2^53 or a non-dyadic rational "
                                  "such as 1/3 cannot be certified against a model)");
  return std::move(m.data());
}

}  // namespace

MhaModel mha_load(const StateDict& sd, std::size_t heads, const std::string& file) {
  if (sd.find("WK") || sd.find("WQ") || sd.find("WD")) return load_memcert(sd, heads, file, true);
  return load_torch(sd, heads, file, true);
}

void mha_screen(const StateDict& headers, std::size_t heads, const std::string& file) {
  if (headers.find("WK") || headers.find("WQ") || headers.find("WD")) (void)load_memcert(headers, heads, file, false);
  else (void)load_torch(headers, heads, file, false);
}

MhaData mha_read_data(const std::string& path) {
  AttentionReadOptions read;
  read.storage = AttentionReadOptions::Storage::typed;
  read.keep_float32 = true;
  read.rational_queries = false;  // the queries are taken from the typed storage
  AttentionDataset ds = attention_dataset_read(path, read);
  const TypedAttentionDataset& ty = *ds.typed;
  MhaData d;
  d.T = ty.T;
  d.n = ty.n;
  d.d = ty.d;
  if (d.T == 0 || d.n == 0 || d.d == 0) throw input_error(path, "contexts", "expected T >= 1 examples of n >= 1 tokens of d >= 1");
  if (!ty.contexts_f32.empty()) d.contexts32 = ty.contexts_f32;  // shares the storage (a mapped file stays mapped)
  else d.contexts64 = exact_doubles(ty.contexts, path, "contexts");
  d.queries = exact_doubles(ty.queries, path, "queries");
  ds.typed.reset();
  if (!ds.labels) throw input_error(path, "labels", "missing: expected labels (T, d_out) or class_labels (T,) to certify against");
  if (ds.class_labels) {
    d.classification = true;
    d.classes.resize(d.T);
    for (std::size_t t = 0; t < d.T; ++t) {
      const Rational& q = (*ds.labels)(t, 0);
      if (!q.get_num().fits_slong_p()) throw input_error(path, "class_labels[" + std::to_string(t) + "]", "expected a class label below 2^63");
      d.classes[t] = q.get_num().get_si();
    }
  } else {
    d.classification = false;
    d.d_out = ds.labels->cols();
    d.targets = ds.labels->data();
  }
  return d;
}

void mha_check(const MhaModel& m, const MhaData& data, const std::string& data_file, const CertifyOptions& opts) {
  const AttentionReadout& a = m.net;
  if (data.d != a.D)
    throw input_error(data_file, "contexts", "expected token width d = " + std::to_string(a.D) + " (the model's embed_dim), got " +
                                                 std::to_string(data.d));
  if (data.classification) {
    if (a.C < 2) throw input_error(data_file, "class_labels", "expected real labels for a model with one output");
    for (std::size_t t = 0; t < data.T; ++t)
      if (data.classes[t] < 0 || std::uint64_t(data.classes[t]) >= a.C)
        throw input_error(data_file, "class_labels[" + std::to_string(t) + "]",
                          "expected a class label in [0, " + std::to_string(a.C) + ") (the model's outputs)");
    if (!opts.tolerance.empty()) throw InputError("--tolerance: applies to regression data (real labels) only");
  } else {
    if (data.d_out != a.C)
      throw input_error(data_file, "labels", "expected " + std::to_string(a.C) + " label columns (the model's outputs), got " +
                                                 std::to_string(data.d_out));
    if (opts.tolerance.empty()) throw InputError("--tolerance: required for real labels: an exact decimal such as 1e-6");
  }
}

ModelVerdicts mha_certify(const MhaModel& m, const MhaData& data, const CertifyOptions& opts) {
  ReadoutExamples ex;
  ex.T = data.T;
  ex.n = data.n;
  ex.d = data.d;
  ex.q64 = data.queries.data();
  ex.q_stride = data.d;
  if (!data.contexts32.empty()) ex.k32 = data.contexts32.data();
  else ex.k64 = data.contexts64.data();
  ex.k_stride = data.n * data.d;
  ex.set_labels(data.classification, data.classes.data(), data.targets.data(), opts.tolerance);
  return attention_readout_certify(m.net, ex, opts);
}

}  // namespace memcert
