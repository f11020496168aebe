// mahdavi24's BaselineAttention as stored by torch.save(model.state_dict()) (mahdavi24_baseline.hpp).
#include "memcert/model/mahdavi24_baseline.hpp"

#include <cmath>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"
#include "model_load.hpp"

namespace memcert {

using model_load::kAny;

namespace {
// values false: `sd` holds headers only (keys, dtypes, shapes), checked as the full load checks them.
Mahdavi24Baseline mahdavi24_load(const StateDict& sd, const std::string& file, bool values) {
  Mahdavi24Baseline m;
  AttentionReadout& a = m.net;
  const Tensor& emb = model_load::tensor(sd, file, "embedding.weight", {kAny, kAny}, "d_model, d_in");
  a.D = emb.shape[0];
  a.d_in = emb.shape[1];
  a.embed = true;
  a.We = emb.f64;
  a.be = model_load::values(sd, file, "embedding.bias", {a.D}, "d_model");
  const Tensor& pe = model_load::tensor(sd, file, "pos_enc.pe", {kAny, a.D}, "max_len, d_model");
  a.pe_rows = pe.shape[0];
  a.pe = pe.f64;
  const Tensor& wq = model_load::tensor(sd, file, "attention.Wq", {kAny, a.D, kAny}, "H, d_model, dh");
  a.H = wq.shape[0];
  a.dh = wq.shape[2];
  a.Wq = wq.f64;
  a.Wk = model_load::values(sd, file, "attention.Wk", {a.H, a.D, a.dh}, "H, d_model, dh");
  const Tensor& wv = model_load::tensor(sd, file, "attention.Wv", {a.H, a.D, kAny}, "H, d_model, dv");
  a.dv = wv.shape[2];
  a.Wv = wv.f64;
  const Tensor& wo = model_load::tensor(sd, file, "attention.Wo", {a.H * a.dv, kAny}, "H dv, d_o");
  a.d_o = wo.shape[1];
  a.Wo = wo.f64;
  const Tensor& dec = model_load::tensor(sd, file, "decoder.weight", {kAny, a.d_o}, "C, d_o");
  a.C = dec.shape[0];
  a.readout = true;
  a.Wr = dec.f64;
  a.br = model_load::values(sd, file, "decoder.bias", {a.C}, "C");
  model_load::no_extra(sd, file,
                       {"embedding.weight", "embedding.bias", "pos_enc.pe", "attention.Wq", "attention.Wk", "attention.Wv",
                        "attention.Wo", "decoder.weight", "decoder.bias"},
                       "mahdavi24-baseline");
  a.scale_m = a.D;  // CustomAttention divides by math.sqrt(d), d = query.shape[-1] = d_model
  if (values) attention_readout_check(a);
  return m;
}
}  // namespace

Mahdavi24Baseline mahdavi24_baseline_load(const StateDict& sd, const std::string& file) { return mahdavi24_load(sd, file, true); }

void mahdavi24_baseline_screen(const StateDict& headers, const std::string& file) { (void)mahdavi24_load(headers, file, false); }

Mahdavi24Data mahdavi24_baseline_read_data(const std::string& path) {
  if (path_extension_lower(path) != ".npz")
    throw input_error(path, "", "expected an .npz data set with X (T, n+1, d_in) and y (T,) for --arch mahdavi24-baseline");
  // Only X and y are read (other members are skipped unread); X's rank and dtype are checked before its
  // values are read.
  NpzSelect select;
  select.want = [](const std::string& name) { return name == "X" || name == "y"; };
  select.header = [&](const std::string& name, const std::vector<std::size_t>& shape, char kind) {
    if (name != "X") return;
    if (shape.size() != 3 || shape[0] == 0 || shape[1] < 2 || shape[2] == 0)
      throw input_error(path, "X", "expected a float array of shape (T, n+1, d_in) with T >= 1, n >= 1, d_in >= 1, got shape " +
                                       model_load::shape_text(shape));
    if (kind != 'f') throw input_error(path, "X", "expected float16, float32 or float64 values, got an integer dtype");
  };
  std::map<std::string, TypedArray> a = npz_read_typed(path, /*keep_float32=*/true, select);
  auto it = a.find("X");
  if (it == a.end()) throw input_error(path, "X", "missing: expected a float array of shape (T, n+1, d_in)");
  TypedArray& X = it->second;
  if (X.shape.size() != 3 || X.shape[0] == 0 || X.shape[1] < 2 || X.shape[2] == 0)
    throw input_error(path, "X", "expected a float array of shape (T, n+1, d_in) with T >= 1, n >= 1, d_in >= 1, got shape " +
                                     model_load::shape_text(X.shape));
  if (X.storage != Storage::float64)
    throw input_error(path, "X", "expected float16, float32 or float64 values, got an integer dtype");
  Mahdavi24Data d;
  d.T = X.shape[0];
  d.n = X.shape[1] - 1;
  d.d_in = X.shape[2];
  if (!X.f32.empty()) d.X32 = std::move(X.f32);
  else d.X64 = std::move(X.f64);
  auto iy = a.find("y");
  if (iy == a.end()) throw input_error(path, "y", "missing: expected labels of shape (T,) = (" + std::to_string(d.T) + ",)");
  const TypedArray& y = iy->second;
  const bool shape_ok = (y.shape.size() == 1 && y.shape[0] == d.T) || (y.shape.size() == 2 && y.shape[0] == d.T && y.shape[1] == 1);
  if (!shape_ok)
    throw input_error(path, "y", "expected shape (" + std::to_string(d.T) + ",) or (" + std::to_string(d.T) + ", 1), got " +
                                     model_load::shape_text(y.shape));
  d.y_shape = y.shape;
  if (y.storage == Storage::int64) {
    if (y.shape.size() != 1)  // (T, 1) is for regression targets only (docs/FORMATS.md)
      throw input_error(path, "y", "expected integer class labels of shape (" + std::to_string(d.T) + ",), got " +
                                       model_load::shape_text(y.shape));
    d.classification = true;
    d.classes = y.i64;
    for (std::size_t t = 0; t < d.T; ++t)
      if (d.classes[t] < 0) throw input_error(path, "y[" + std::to_string(t) + "]", "expected a class label >= 0");
  } else if (y.storage == Storage::float64) {
    d.classification = false;
    d.targets.reserve(d.T);
    for (std::size_t t = 0; t < d.T; ++t) d.targets.emplace_back(y.f32.empty() ? y.f64[t] : double(y.f32[t]));
  } else {
    throw input_error(path, "y", "expected integer class labels or float targets, got integers beyond 2^63");
  }
  return d;
}

void mahdavi24_baseline_check(const Mahdavi24Baseline& m, const Mahdavi24Data& data, const std::string& data_file,
                              const CertifyOptions& opts) {
  const AttentionReadout& a = m.net;
  if (data.d_in != a.d_in)
    throw input_error(data_file, "X", "expected d_in = " + std::to_string(a.d_in) + " (embedding.weight's columns), got " +
                                          std::to_string(data.d_in));
  if (data.n + 1 > a.pe_rows)
    throw input_error(data_file, "X", "expected at most " + std::to_string(a.pe_rows) + " tokens per example (pos_enc.pe's rows), got " +
                                          std::to_string(data.n + 1));
  if (data.classification) {
    if (a.C < 2)
      throw input_error(data_file, "y", "expected float regression targets for a model with C = 1 decoder row (integer y are "
                                        "class labels, which need C >= 2)");
    for (std::size_t t = 0; t < data.T; ++t)
      if (std::uint64_t(data.classes[t]) >= a.C)
        throw input_error(data_file, "y[" + std::to_string(t) + "]",
                          "expected a class label in [0, " + std::to_string(a.C) + "), got " + std::to_string(data.classes[t]));
    if (!opts.tolerance.empty()) throw InputError("--tolerance: applies to regression data (float y) only");
  } else {
    if (a.C != 1)
      throw input_error(data_file, "y", "expected integer class labels for a model with C = " + std::to_string(a.C) +
                                        " decoder rows (float y are regression targets, which need C = 1)");
    if (opts.tolerance.empty()) throw InputError("--tolerance: required for regression data (float y): an exact decimal such as 1e-3");
  }
}

ModelVerdicts mahdavi24_baseline_certify(const Mahdavi24Baseline& m, const Mahdavi24Data& data, const CertifyOptions& opts) {
  ReadoutExamples ex;
  ex.T = data.T;
  ex.n = data.n;
  ex.d = data.d_in;
  const std::size_t stride = (data.n + 1) * data.d_in;
  if (!data.X32.empty()) {
    ex.q32 = data.X32.data();
    ex.k32 = ex.q32 + data.d_in;
  } else {
    ex.q64 = data.X64.data();
    ex.k64 = ex.q64 + data.d_in;
  }
  ex.q_stride = ex.k_stride = stride;
  ex.set_labels(data.classification, data.classes.data(), data.targets.data(), opts.tolerance);
  return attention_readout_certify(m.net, ex, opts);
}

std::vector<memcert_checker::NamedArray> mahdavi24_baseline_data_arrays(const Mahdavi24Data& data) {
  std::vector<memcert_checker::NamedArray> out(2);
  out[0].name = "X";
  out[0].shape = {data.T, data.n + 1, data.d_in};
  if (!data.X32.empty()) {
    out[0].values_f32.resize(data.X32.size());
    for (std::size_t i = 0; i < data.X32.size(); ++i) out[0].values_f32[i] = data.X32[i];
  } else {
    out[0].values = data.X64;
  }
  out[1].name = "y";
  out[1].shape = data.y_shape;
  out[1].values.resize(data.T);
  for (std::size_t t = 0; t < data.T; ++t)
    out[1].values[t] = data.classification ? double(data.classes[t]) : data.targets[t].get_d();
  return out;
}

}  // namespace memcert
