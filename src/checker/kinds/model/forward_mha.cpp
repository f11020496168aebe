// Kind "model", arch "mha": one torch.nn.MultiheadAttention on memcert's attention data (contexts E_t
// (n x d), queries e_t (d)): the query attends to the n context tokens (no mask), out = MHA(e_t, E_t, E_t);
// then the optional read-out Linear: f = readout(out) (f = out without one). Tensors: PyTorch's
// state_dict keys in_proj_weight (3d x d) or q_proj_weight / k_proj_weight / v_proj_weight (d x d),
// in_proj_bias (3d), out_proj.weight (d x d), out_proj.bias (d), readout.weight (d_out x d), readout.bias;
// or memcert's own weight file (construct --weights-out), read through its exact per-head arrays with
// memcert's semantics (docs/THEORY.md section 1): WK, WQ (H x d x dh), WV (H x d x dv), WO (H dv x d),
// WD (d x d_out), skip; a_h = E WK_h WQ_h^T e (no scaling), p_h = E^T softmax(a_h), o = WO^T [WV_h^T p_h]_h
// (+ e when skip = 1), f = WD^T o. Its torch_* arrays (PyTorch's layout of nearly the same weights: the
// query projection scaled by a rounded sqrt) are covered by the digest but not read.
#include "kinds/model/forward_attention.hpp"
#include "kinds/model/model_arch.hpp"

namespace memcert_checker::model_kind {

namespace {

// Example t's context (n x d) into ctx, exactly.
template <class B>
void load_context(const B& b, const AttentionArrays& data, std::size_t t, typename B::Mat& ctx) {
  const std::size_t n = data.n, d = data.d;
  b.resize(ctx, n, d);
  typename B::Vec x;
  std::vector<double> buf(d);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t c = 0; c < d; ++c) buf[c] = data.context_value((t * n + j) * d + c);
    b.set_exact(x, buf.data(), d);
    b.set_row(ctx, j, x);
  }
}

class Mha final : public ModelArch {
 public:
  const AttentionArrays* data = nullptr;
  std::size_t T = 0, n = 0, E = 0, dout = 0;
  bool regression = false;
  MhaW w;
  std::vector<double> R, rb;  // read-out (dout x E) or the identity; its bias (or empty)
  std::vector<std::vector<mpq_class>> targets;

  std::size_t examples() const override { return T; }
  double ops_double() const override {
    return double(n) * mha_project_ops(E) + mha_query_ops(E, n) + 3.0 * double(dout) * double(E);
  }
  double ops_mpfr() const override { return ops_double(); }
  double bytes() const override { return 0; }
  bool prepare() override { return true; }

  template <class B>
  bool forward(const B& b, std::size_t t, Bounds& out) const {
    typename B::Mat ctx;
    typename B::Vec q, o, f;
    load_context(b, *data, t, ctx);
    MhaKV<B> kv(w.K);
    if (!mha_project(b, w, ctx, n, kv)) return false;
    b.set_exact(q, &data->queries[t * E], E);
    if (!mha_query(b, w, q, kv, n, o)) return false;
    if (!regression) return b.class_margin(R.data(), rb.empty() ? nullptr : rb.data(), dout, data->classes[t], o, out);
    if (!b.mv_exact(R.data(), dout, E, o, f) || (!rb.empty() && !b.add_exact(f, rb.data()))) return false;
    return b.abs_error(f, targets[t], out);
  }

  bool evaluate(std::size_t t, long bits, Bounds& out) const override {
    if (bits <= 53) return forward(DoubleEnc(), t, out);
    return forward(MpfrEnc(bits), t, out);
  }
};

// memcert's own --weights-out arrays (see the top of this file).
class MhaOwn final : public ModelArch {
 public:
  const AttentionArrays* data = nullptr;
  std::size_t T = 0, n = 0, d = 0, H = 0, dh = 0, dv = 0, dout = 0;
  bool regression = false, skip = false;
  std::vector<std::vector<double>> WQt, WK, WVt;  // per head: WQ_h^T (dh x d), WK_h (d x dh), WV_h^T (dv x d)
  std::vector<double> WOt, WDt;                    // WO^T (d x H dv), WD^T (d_out x d)
  std::vector<std::vector<mpq_class>> targets;

  std::size_t examples() const override { return T; }
  double ops_double() const override {
    return double(H) * (3.0 * double(d) * double(dh) + 4.0 * double(n) * double(d) + double(d) * double(dv) + 40.0 * double(n)) +
           double(d) * double(H * dv) + 3.0 * double(dout) * double(d);
  }
  double ops_mpfr() const override { return ops_double(); }
  double bytes() const override { return 0; }
  bool prepare() override { return true; }

  template <class B>
  bool forward(const B& b, std::size_t t, Bounds& out) const {
    typename B::Mat ctx;
    typename B::Vec e, u, v, s, p, oh, z, o;
    std::vector<double> zero(H * dv, 0.0);
    load_context(b, *data, t, ctx);
    b.set_exact(e, &data->queries[t * d], d);
    b.set_exact(z, zero.data(), H * dv);
    for (std::size_t h = 0; h < H; ++h) {
      // a = E (WK_h (WQ_h^T e)), alpha = softmax(a), p = E^T alpha, o_h = WV_h^T p
      if (!b.mv_exact(WQt[h].data(), dh, d, e, u) || !b.mv_exact(WK[h].data(), d, dh, u, v) || !b.mv(ctx, 0, n, v, s) ||
          !b.softmax(s) || !b.mix(ctx, 0, n, s, p) || !b.mv_exact(WVt[h].data(), dv, d, p, oh))
        return false;
      b.place(z, h * dv, oh);
    }
    if (!b.mv_exact(WOt.data(), d, H * dv, z, o)) return false;
    if (skip && !b.add_exact(o, &data->queries[t * d])) return false;
    if (!regression) return b.class_margin(WDt.data(), nullptr, dout, data->classes[t], o, out);
    typename B::Vec f;
    return b.mv_exact(WDt.data(), dout, d, o, f) && b.abs_error(f, targets[t], out);
  }

  bool evaluate(std::size_t t, long bits, Bounds& out) const override {
    if (bits <= 53) return forward(DoubleEnc(), t, out);
    return forward(MpfrEnc(bits), t, out);
  }
};

// rows x cols (row-major) transposed.
std::vector<double> transposed(const double* a, std::size_t rows, std::size_t cols) {
  std::vector<double> t(rows * cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  return t;
}

// The labels of `data` as the certificate's task needs them (shared by both layouts).
bool mha_labels(const AttentionArrays& data, bool regression, std::size_t dout, std::vector<std::vector<mpq_class>>& targets,
                std::string& why);

std::unique_ptr<ModelArch> make_mha_own(const std::vector<NamedArray>& model, const AttentionArrays& data, std::size_t heads,
                                        bool regression, std::string& why) {
  auto m = std::make_unique<MhaOwn>();
  m->data = &data;
  m->regression = regression;
  const std::string M = "model";
  std::vector<std::size_t> s;
  if (!model_no_extra(model, M, {"WK", "WQ", "WV", "WO", "WD", "skip", "torch_in_proj_weight", "torch_in_proj_bias",
                                 "torch_out_proj_weight", "torch_out_proj_bias", "torch_readout_weight"}, why) ||
      !model_need(model, M, "WK", {0, 0, 0}, s, why))
    return nullptr;
  const std::size_t H = s[0], d = s[1], dh = s[2];
  if (!model_need(model, M, "WQ", {H, d, dh}, s, why) || !model_need(model, M, "WV", {H, d, 0}, s, why)) return nullptr;
  const std::size_t dv = s[2];
  if (!model_need(model, M, "WO", {H * dv, d}, s, why) || !model_need(model, M, "WD", {d, 0}, s, why)) return nullptr;
  const std::size_t dout = s[1];
  if (H == 0 || d == 0 || dh == 0 || dv == 0 || dout == 0) {
    why = "model: WK, WV and WD must have non-zero dimensions";
    return nullptr;
  }
  if (heads != H) {
    why = "heads: " + std::to_string(heads) + ", but WK holds " + std::to_string(H) + " heads";
    return nullptr;
  }
  m->H = H, m->d = d, m->dh = dh, m->dv = dv, m->dout = dout;
  const std::vector<double> wk = model_values(*model_find(model, "WK")), wq = model_values(*model_find(model, "WQ")),
                            wv = model_values(*model_find(model, "WV"));
  for (std::size_t h = 0; h < H; ++h) {
    m->WK.emplace_back(wk.begin() + static_cast<long>(h * d * dh), wk.begin() + static_cast<long>((h + 1) * d * dh));
    m->WQt.push_back(transposed(&wq[h * d * dh], d, dh));
    m->WVt.push_back(transposed(&wv[h * d * dv], d, dv));
  }
  m->WOt = transposed(model_values(*model_find(model, "WO")).data(), H * dv, d);
  m->WDt = transposed(model_values(*model_find(model, "WD")).data(), d, dout);
  if (const NamedArray* sk = model_find(model, "skip")) {
    if (sk->size() != 1 || !(sk->value(0) == 0 || sk->value(0) == 1)) {
      why = "model: tensor \"skip\" must be one value, 0 or 1";
      return nullptr;
    }
    m->skip = sk->value(0) == 1;
  }
  if (data.d != d || data.n == 0) {
    why = "data: contexts of dimension " + std::to_string(data.d) + " and " + std::to_string(data.n) +
          " tokens, expected dimension " + std::to_string(d) + " (the model's) and at least one token";
    return nullptr;
  }
  m->T = data.T;
  m->n = data.n;
  if (!mha_labels(data, regression, dout, m->targets, why)) return nullptr;
  return m;
}

}  // namespace

std::unique_ptr<ModelArch> make_mha(const std::vector<NamedArray>& model, const AttentionArrays& data, std::size_t heads,
                                    bool regression, std::string& why) {
  if (model_find(model, "WK")) return make_mha_own(model, data, heads, regression, why);
  auto m = std::make_unique<Mha>();
  m->data = &data;
  m->regression = regression;
  const std::string M = "model";
  std::vector<std::size_t> s;
  const std::string pre, out_w = "out_proj.weight", out_b = "out_proj.bias", ro_w = "readout.weight", ro_b = "readout.bias";
  const std::vector<std::string> known = {"in_proj_weight", "in_proj_bias", out_w, out_b, ro_w, ro_b,
                                          "q_proj_weight", "k_proj_weight", "v_proj_weight"};
  if (!model_no_extra(model, M, known, why)) return nullptr;
  if (!model_need(model, M, out_w, {0, 0}, s, why)) return nullptr;
  const std::size_t E = s[0];
  m->E = E;
  if (s[1] != E) {
    why = "model: tensor \"" + out_w + "\" is not square, expected (d, d)";
    return nullptr;
  }
  if (E % heads != 0) {
    why = "heads: " + std::to_string(heads) + " does not divide the embedding dimension " + std::to_string(E);
    return nullptr;
  }
  MhaW& w = m->w;
  w.E = E;
  w.K = heads;
  if (model_find(model, pre + "in_proj_weight")) {
    if (!model_need(model, M, pre + "in_proj_weight", {3 * E, E}, s, why)) return nullptr;
    const std::vector<double> in = model_values(*model_find(model, pre + "in_proj_weight"));
    w.Wq.assign(in.begin(), in.begin() + static_cast<long>(E * E));
    w.Wk.assign(in.begin() + static_cast<long>(E * E), in.begin() + static_cast<long>(2 * E * E));
    w.Wv.assign(in.begin() + static_cast<long>(2 * E * E), in.end());
  } else {
    for (const char* k : {"q_proj_weight", "k_proj_weight", "v_proj_weight"})
      if (!model_need(model, M, k, {E, E}, s, why)) return nullptr;
    w.Wq = model_values(*model_find(model, "q_proj_weight"));
    w.Wk = model_values(*model_find(model, "k_proj_weight"));
    w.Wv = model_values(*model_find(model, "v_proj_weight"));
  }
  w.Wout = model_values(*model_find(model, out_w));
  if (model_find(model, pre + "in_proj_bias")) {
    if (!model_need(model, M, pre + "in_proj_bias", {3 * E}, s, why)) return nullptr;
    const std::vector<double> bi = model_values(*model_find(model, pre + "in_proj_bias"));
    w.bq.assign(bi.begin(), bi.begin() + static_cast<long>(E));
    w.bk.assign(bi.begin() + static_cast<long>(E), bi.begin() + static_cast<long>(2 * E));
    w.bv.assign(bi.begin() + static_cast<long>(2 * E), bi.end());
  }
  if (model_find(model, out_b)) {
    if (!model_need(model, M, out_b, {E}, s, why)) return nullptr;
    w.bout = model_values(*model_find(model, out_b));
  }
  if (model_find(model, ro_w)) {
    if (!model_need(model, M, ro_w, {0, E}, s, why)) return nullptr;
    m->dout = s[0];
    m->R = model_values(*model_find(model, ro_w));
    if (model_find(model, ro_b)) {
      if (!model_need(model, M, ro_b, {m->dout}, s, why)) return nullptr;
      m->rb = model_values(*model_find(model, ro_b));
    }
  } else {
    if (model_find(model, ro_b)) {
      why = "model: tensor \"" + ro_b + "\" without \"" + ro_w + "\"";
      return nullptr;
    }
    m->dout = E;
    m->R.assign(E * E, 0.0);
    for (std::size_t i = 0; i < E; ++i) m->R[i * E + i] = 1;
  }
  // the data set
  if (data.d != E || data.n == 0) {
    why = "data: contexts of dimension " + std::to_string(data.d) + " and " + std::to_string(data.n) +
          " tokens, expected dimension " + std::to_string(E) + " (the model's) and at least one token";
    return nullptr;
  }
  m->T = data.T;
  m->n = data.n;
  if (!mha_labels(data, regression, m->dout, m->targets, why)) return nullptr;
  return m;
}

namespace {
bool mha_labels(const AttentionArrays& data, bool regression, std::size_t dout, std::vector<std::vector<mpq_class>>& targets,
                std::string& why) {
  using L = AttentionArrays::Labels;
  if (!regression) {
    if (data.label_kind != L::classes || data.classes.size() != data.T) {
      why = "data: a classification certificate needs class labels (class_labels) for every example";
      return false;
    }
    if (dout < 2) {
      why = "model: one output, expected at least 2 classes for classification";
      return false;
    }
    for (std::size_t t = 0; t < data.T; ++t)
      if (data.classes[t] >= dout) {
        why = "data: class_labels[" + std::to_string(t) + "] is not a class in [0, " + std::to_string(dout) + ")";
        return false;
      }
  } else {
    if (data.label_kind != L::real || data.d_out != dout || data.labels.size() != data.T * data.d_out) {
      why = "data: a regression certificate needs real labels with " + std::to_string(dout) +
            " entries (the model's outputs) for every example";
      return false;
    }
    targets.assign(data.T, std::vector<mpq_class>(dout));
    for (std::size_t t = 0; t < data.T; ++t)
      for (std::size_t c = 0; c < dout; ++c) {
        mpq_class& q = targets[t][c];
        if (q.set_str(data.labels[t * dout + c], 10) != 0 || q.get_den() == 0) {
          why = "data: label " + std::to_string(t * dout + c) + " is not an exact rational";
          return false;
        }
        q.canonicalize();
      }
  }
  return true;
}
}  // namespace

}  // namespace memcert_checker::model_kind
