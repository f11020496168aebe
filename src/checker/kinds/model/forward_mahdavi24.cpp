// Kind "model", arch "mahdavi24-baseline": BaselineAttention of smahdavi4/attention-memorization
// (src/attn_models.py). x = X W_emb^T + b_emb + pe[0:n+1]; per head h, token 0 (the query, where the
// prediction is read) attends to tokens 1..n (column 0 masked) with scores x_0 Wq_h (x_j Wk_h)^T /
// sqrt(d_model); out = concat_h(sum_j alpha_hj x_j Wv_h) Wo; logits = out W_dec^T + b_dec.
// The double pass uses A_h^T = Wk_h Wq_h^T / sqrt(d_model) (d_model x d_model, enclosed once), so
// scores_j = x_j . (A_h^T x_0); the MPFR pass computes Wk_h (Wq_h^T x_0) / sqrt(d_model) directly.
#include "kernel/float_kernels.hpp"
#include "kinds/model/model_arch.hpp"

namespace memcert_checker::model_kind {

namespace {

class Mahdavi24 final : public ModelArch {
 public:
  std::size_t T = 0, n = 0, din = 0, dm = 0, H = 0, dh = 0, dv = 0, dO = 0, C = 0;
  bool regression = false;
  std::vector<double> Wemb, bemb, pe, WqT, Wk, WvT, WoT, Wdec, bdec;  // WqT: H x dh x dm, WvT: H x dv x dm
  const NamedArray* X = nullptr;
  std::vector<std::size_t> cls;
  std::vector<double> target;
  std::vector<DoubleEnc::Mat> AT;  // per head: Wk_h Wq_h^T / sqrt(d_model)

  std::size_t examples() const override { return T; }
  double ops_double() const override {
    return double(n + 1) * double(din) * double(dm) +
           double(H) * (double(dm) * double(dm) + 2.0 * double(n) * double(dm) * 2 + double(dv) * double(dm)) +
           double(dO) * double(H) * double(dv) + 3.0 * double(C) * double(dO) + 40.0 * double(H) * double(n);
  }
  double ops_mpfr() const override {
    return double(n + 1) * double(din) * double(dm) +
           double(H) * (2.0 * double(dm) * double(dh) + 2.0 * double(n) * double(dm) + double(dv) * double(dm)) +
           double(dO) * double(H) * double(dv) + double(C) * double(dO);
  }
  double bytes() const override { return 16.0 * double(H) * double(dm) * double(dm); }

  bool prepare() override {
    DoubleEnc b;
    AT.assign(H, DoubleEnc::Mat{});
    DoubleEnc::Vec kc, row;
    std::vector<double> Wq(dm * dh);
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < dm; ++i)  // Wq_h (dm x dh) from its transpose
        for (std::size_t k = 0; k < dh; ++k) Wq[i * dh + k] = WqT[(h * dh + k) * dm + i];
      b.resize(AT[h], dm, dm);
      for (std::size_t c = 0; c < dm; ++c) {
        b.set_exact(kc, &Wk[(h * dm + c) * dh], dh);
        // row c of A_h^T: entry i = sum_k Wk_h[c][k] Wq_h[i][k]
        if (!b.mv_exact(Wq.data(), dm, dh, kc, row) || !b.scale_inv_sqrt(row, dm)) return false;
        b.set_row(AT[h], c, row);
      }
    }
    return true;
  }

  template <class B>
  bool forward(const B& b, std::size_t t, Bounds& out) const {
    typename B::Mat tok;
    b.resize(tok, n + 1, dm);
    typename B::Vec xin, e, x0, v, q, s, p, z, zall, o, f;
    std::vector<double> buf(din);
    for (std::size_t j = 0; j <= n; ++j) {
      const std::size_t base = (t * (n + 1) + j) * din;
      for (std::size_t k = 0; k < din; ++k) buf[k] = X->value(base + k);
      b.set_exact(xin, buf.data(), din);
      if (!b.mv_exact(Wemb.data(), dm, din, xin, e) || !b.add_exact(e, bemb.data()) || !b.add_exact(e, &pe[j * dm]))
        return false;
      b.set_row(tok, j, e);
    }
    b.row(tok, 0, x0);
    std::vector<double> zero(H * dv, 0.0);
    b.set_exact(zall, zero.data(), H * dv);
    for (std::size_t h = 0; h < H; ++h) {
      if constexpr (B::kDouble) {
        if (!b.mv(AT[h], 0, dm, x0, v)) return false;
      } else {
        if (!b.mv_exact(&WqT[h * dh * dm], dh, dm, x0, q) || !b.mv_exact(&Wk[h * dm * dh], dm, dh, q, v) ||
            !b.scale_inv_sqrt(v, dm))
          return false;
      }
      if (!b.mv(tok, 1, n + 1, v, s) || !b.softmax(s) || !b.mix(tok, 1, n + 1, s, p) ||
          !b.mv_exact(&WvT[h * dv * dm], dv, dm, p, z))
        return false;
      b.place(zall, h * dv, z);  // zall is zero in head h's block
    }
    if (!b.mv_exact(WoT.data(), dO, H * dv, zall, o)) return false;
    if (!regression) return b.class_margin(Wdec.data(), bdec.data(), C, cls[t], o, out);
    if (!b.mv_exact(Wdec.data(), 1, dO, o, f) || !b.add_exact(f, bdec.data())) return false;
    return b.abs_error(f, {mpq_class(target[t])}, out);
  }
  bool evaluate(std::size_t t, long bits, Bounds& out) const override {
    if (bits <= 53) return forward(DoubleEnc(), t, out);
    return forward(MpfrEnc(bits), t, out);
  }
};

}  // namespace

std::unique_ptr<ModelArch> make_mahdavi24_baseline(const std::vector<NamedArray>& model, const std::vector<NamedArray>& data,
                                                   bool regression, std::string& why) {
  auto m = std::make_unique<Mahdavi24>();
  m->regression = regression;
  std::vector<std::size_t> s;
  const std::string M = "model";
  if (!model_no_extra(model, M, {"embedding.weight", "embedding.bias", "pos_enc.pe", "attention.Wq", "attention.Wk",
                                 "attention.Wv", "attention.Wo", "decoder.weight", "decoder.bias"}, why) ||
      !model_no_extra(data, "data", {"X", "y"}, why))
    return nullptr;
  if (!model_need(model, M, "embedding.weight", {0, 0}, s, why)) return nullptr;
  m->dm = s[0];
  m->din = s[1];
  if (!model_need(model, M, "embedding.bias", {m->dm}, s, why) || !model_need(model, M, "attention.Wq", {0, m->dm, 0}, s, why))
    return nullptr;
  m->H = s[0];
  m->dh = s[2];
  if (!model_need(model, M, "attention.Wk", {m->H, m->dm, m->dh}, s, why) ||
      !model_need(model, M, "attention.Wv", {m->H, m->dm, 0}, s, why))
    return nullptr;
  m->dv = s[2];
  if (!model_need(model, M, "attention.Wo", {m->H * m->dv, 0}, s, why)) return nullptr;
  m->dO = s[1];
  if (!model_need(model, M, "decoder.weight", {0, m->dO}, s, why)) return nullptr;
  m->C = s[0];
  if (!model_need(model, M, "decoder.bias", {m->C}, s, why) || !model_need(model, M, "pos_enc.pe", {0, m->dm}, s, why))
    return nullptr;
  const std::size_t max_len = s[0];
  if (!model_need(data, "data", "X", {0, 0, m->din}, s, why)) return nullptr;
  m->T = s[0];
  m->n = s[1] - 1;
  if (s[1] < 2 || s[1] > max_len) {
    why = "data: X has " + std::to_string(s[1]) + " tokens per example, expected 2 .. " + std::to_string(max_len) +
          " (a query and at least one context token, at most pos_enc.pe's rows)";
    return nullptr;
  }
  const NamedArray* y = model_find(data, "y");
  if (!y || !((y->shape.size() == 1 && y->shape[0] == m->T) ||
              (regression && y->shape.size() == 2 && y->shape[0] == m->T && y->shape[1] == 1)) ||
      y->size() != m->T) {
    why = std::string("data: tensor \"y\" ") + (y ? "has the wrong shape" : "is missing") + ", expected (" +
          std::to_string(m->T) + (regression ? ",) or (" + std::to_string(m->T) + ", 1)" : ",)");
    return nullptr;
  }
  if (regression && m->C != 1) {
    why = "model: tensor \"decoder.weight\" has " + std::to_string(m->C) + " rows, expected 1 for regression";
    return nullptr;
  }
  if (!regression && m->C < 2) {
    why = "model: tensor \"decoder.weight\" has 1 row, expected at least 2 classes for classification";
    return nullptr;
  }
  if (regression) {
    m->target = model_values(*y);
  } else {
    m->cls.resize(m->T);
    for (std::size_t t = 0; t < m->T; ++t) {
      const double v = y->value(t);
      if (!(v >= 0 && v < double(m->C) && v == double(static_cast<std::size_t>(v)))) {
        why = "data: y[" + std::to_string(t) + "] is not a class in [0, " + std::to_string(m->C) + ")";
        return nullptr;
      }
      m->cls[t] = static_cast<std::size_t>(v);
    }
  }
  m->X = model_find(data, "X");
  m->Wemb = model_values(*model_find(model, "embedding.weight"));
  m->bemb = model_values(*model_find(model, "embedding.bias"));
  m->pe = model_values(*model_find(model, "pos_enc.pe"));
  m->pe.resize((m->n + 1) * m->dm);
  m->Wk = model_values(*model_find(model, "attention.Wk"));
  const std::vector<double> Wq = model_values(*model_find(model, "attention.Wq"));
  const std::vector<double> Wv = model_values(*model_find(model, "attention.Wv"));
  const std::vector<double> Wo = model_values(*model_find(model, "attention.Wo"));
  const std::size_t H = m->H, dm = m->dm, dh = m->dh, dv = m->dv, dO = m->dO;
  m->WqT.resize(H * dh * dm);
  m->WvT.resize(H * dv * dm);
  m->WoT.resize(dO * H * dv);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < dm; ++i) {
      for (std::size_t k = 0; k < dh; ++k) m->WqT[(h * dh + k) * dm + i] = Wq[(h * dm + i) * dh + k];
      for (std::size_t k = 0; k < dv; ++k) m->WvT[(h * dv + k) * dm + i] = Wv[(h * dm + i) * dv + k];
    }
  for (std::size_t r = 0; r < H * dv; ++r)
    for (std::size_t c = 0; c < dO; ++c) m->WoT[c * H * dv + r] = Wo[r * dO + c];
  m->Wdec = model_values(*model_find(model, "decoder.weight"));
  m->bdec = model_values(*model_find(model, "decoder.bias"));
  return m;
}

}  // namespace memcert_checker::model_kind
