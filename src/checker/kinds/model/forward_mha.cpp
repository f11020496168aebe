// Kind "model", arch "mha": one torch.nn.MultiheadAttention on memcert's attention data (contexts E_t
// (n x d), queries e_t (d)): the query attends to the n context tokens (no mask), out = MHA(e_t, E_t, E_t);
// then the optional read-out Linear: f = readout(out) (f = out without one). Tensors: PyTorch's
// state_dict keys in_proj_weight (3d x d) or q_proj_weight / k_proj_weight / v_proj_weight (d x d),
// in_proj_bias (3d), out_proj.weight (d x d), out_proj.bias (d), readout.weight (d_out x d), readout.bias;
// or memcert's own weight file (construct --weights-out): torch_in_proj_weight, torch_in_proj_bias,
// torch_out_proj_weight, torch_out_proj_bias, torch_readout_weight and skip (1: the query is added to out
// before the read-out, the skip connection); its per-head arrays WK, WQ, WV, WO, WD describe the same
// weights and are not read.
#include "kinds/model/forward_attention.hpp"
#include "kinds/model/model_arch.hpp"

namespace memcert_checker::model_kind {

namespace {

class Mha final : public ModelArch {
 public:
  const AttentionArrays* data = nullptr;
  std::size_t T = 0, n = 0, E = 0, dout = 0;
  bool regression = false, skip = false;
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
    b.resize(ctx, n, E);
    typename B::Vec x, q, o, f;
    std::vector<double> buf(E);
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t c = 0; c < E; ++c) buf[c] = data->context_value((t * n + j) * E + c);
      b.set_exact(x, buf.data(), E);
      b.set_row(ctx, j, x);
    }
    MhaKV<B> kv(w.K);
    if (!mha_project(b, w, ctx, n, kv)) return false;
    b.set_exact(q, &data->queries[t * E], E);
    if (!mha_query(b, w, q, kv, n, o)) return false;
    if (skip && !b.add_exact(o, &data->queries[t * E])) return false;
    if (!regression) return b.class_margin(R.data(), rb.empty() ? nullptr : rb.data(), dout, data->classes[t], o, out);
    if (!b.mv_exact(R.data(), dout, E, o, f) || (!rb.empty() && !b.add_exact(f, rb.data()))) return false;
    return b.abs_error(f, targets[t], out);
  }

  bool evaluate(std::size_t t, long bits, Bounds& out) const override {
    if (bits <= 53) return forward(DoubleEnc(), t, out);
    return forward(MpfrEnc(bits), t, out);
  }
};

}  // namespace

std::unique_ptr<ModelArch> make_mha(const std::vector<NamedArray>& model, const AttentionArrays& data, std::size_t heads,
                                    bool regression, std::string& why) {
  auto m = std::make_unique<Mha>();
  m->data = &data;
  m->regression = regression;
  const std::string M = "model";
  std::vector<std::size_t> s;
  const bool ours = model_find(model, "torch_in_proj_weight") != nullptr;
  const std::string pre = ours ? "torch_" : "";
  const std::string out_w = ours ? "torch_out_proj_weight" : "out_proj.weight", out_b = ours ? "torch_out_proj_bias" : "out_proj.bias";
  const std::string ro_w = ours ? "torch_readout_weight" : "readout.weight", ro_b = ours ? "torch_readout_bias" : "readout.bias";
  std::vector<std::string> known = {pre + "in_proj_weight", pre + "in_proj_bias", out_w, out_b, ro_w, ro_b};
  if (ours)
    for (const char* k : {"WK", "WQ", "WV", "WO", "WD", "skip"}) known.push_back(k);
  else
    for (const char* k : {"q_proj_weight", "k_proj_weight", "v_proj_weight"}) known.push_back(k);
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
  if (ours && model_find(model, "skip")) {
    const NamedArray& sk = *model_find(model, "skip");
    if (sk.size() != 1 || !(sk.value(0) == 0 || sk.value(0) == 1)) {
      why = "model: tensor \"skip\" must be one value, 0 or 1";
      return nullptr;
    }
    m->skip = sk.value(0) == 1;
  }
  // the data set
  if (data.d != E || data.n == 0) {
    why = "data: contexts of dimension " + std::to_string(data.d) + " and " + std::to_string(data.n) +
          " tokens, expected dimension " + std::to_string(E) + " (the model's) and at least one token";
    return nullptr;
  }
  m->T = data.T;
  m->n = data.n;
  using L = AttentionArrays::Labels;
  if (!regression) {
    if (data.label_kind != L::classes || data.classes.size() != data.T) {
      why = "data: a classification certificate needs class labels (class_labels) for every example";
      return nullptr;
    }
    if (m->dout < 2) {
      why = "model: one output, expected at least 2 classes for classification";
      return nullptr;
    }
    for (std::size_t t = 0; t < data.T; ++t)
      if (data.classes[t] >= m->dout) {
        why = "data: class_labels[" + std::to_string(t) + "] is not a class in [0, " + std::to_string(m->dout) + ")";
        return nullptr;
      }
  } else {
    if (data.label_kind != L::real || data.d_out != m->dout || data.labels.size() != data.T * data.d_out) {
      why = "data: a regression certificate needs real labels with " + std::to_string(m->dout) +
            " entries (the model's outputs) for every example";
      return nullptr;
    }
    m->targets.assign(data.T, std::vector<mpq_class>(m->dout));
    for (std::size_t t = 0; t < data.T; ++t)
      for (std::size_t c = 0; c < m->dout; ++c) {
        mpq_class& q = m->targets[t][c];
        if (q.set_str(data.labels[t * m->dout + c], 10) != 0 || q.get_den() == 0) {
          why = "data: label " + std::to_string(t * m->dout + c) + " is not an exact rational";
          return nullptr;
        }
        q.canonicalize();
      }
  }
  return m;
}

}  // namespace memcert_checker::model_kind
