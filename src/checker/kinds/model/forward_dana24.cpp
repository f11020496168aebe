// Kind "model", arch "dana24-aot": Transformer / AoT of leodana2000/Transformer_Attentional_Memory
// (models.py, Transformer.forward). res = word_emb.weight[x]; per layer: c = linear_compress(res) + pos
// (res + pos when d == d_head; pos = pos_emb.weight[:S]); para = sum over the layer's parallel
// MultiheadAttentions of attn(c, c, c) under the causal mask; res = (linear_decompress(para) or para) + res;
// with MLPs, res = W2 GELU(W1 res + b1) + res; logits = unemb(res); the prediction is read at the last
// position. The last layer is evaluated at the last position only (nothing else reaches it).
#include "kinds/model/forward_attention.hpp"
#include "kinds/model/model_arch.hpp"

namespace memcert_checker::model_kind {

namespace {

class Dana24Aot final : public ModelArch {
 public:
  std::size_t T = 0, S = 0, N = 0, d = 0, dh = 0, L = 0, P = 0, width = 0;
  std::vector<double> emb, pos, Wc, Wdc, unemb;
  std::vector<std::vector<MhaW>> attn;                 // [layer][parallel]
  std::vector<std::vector<double>> W1, b1, W2;         // per layer (MLP)
  std::vector<std::size_t> seq, next;

  std::size_t examples() const override { return T; }
  double ops_double() const override {
    const double per_row = (d != dh ? 2.0 * double(d) * double(dh) : 0.0) +
                           double(P) * (mha_project_ops(dh) + mha_query_ops(dh, S)) + 2.0 * double(width) * double(d) * 2;
    return double(L) * double(S) * per_row + 3.0 * double(N) * double(d);
  }
  double ops_mpfr() const override { return ops_double(); }
  double bytes() const override { return 0; }
  bool prepare() override { return true; }

  template <class B>
  bool forward(const B& b, std::size_t t, Bounds& out) const {
    typename B::Mat res, comp;
    b.resize(res, S, d);
    typename B::Vec x, c, a, sum, h;
    for (std::size_t i = 0; i < S; ++i) {
      b.set_exact(x, &emb[seq[t * S + i] * d], d);
      b.set_row(res, i, x);
    }
    std::vector<double> zero(std::max(d, dh), 0.0);
    for (std::size_t l = 0; l < L; ++l) {
      const bool last = l + 1 == L;
      b.resize(comp, S, dh);
      for (std::size_t i = 0; i < S; ++i) {
        b.row(res, i, x);
        if (d != dh) {
          if (!b.mv_exact(Wc.data(), dh, d, x, c)) return false;
        } else {
          b.slice(x, 0, d, c);
        }
        if (!b.add_exact(c, &pos[i * dh])) return false;
        b.set_row(comp, i, c);
      }
      std::vector<MhaKV<B>> kv;
      kv.reserve(P);
      for (std::size_t p = 0; p < P; ++p) {
        kv.emplace_back(attn[l][p].K);
        if (!mha_project(b, attn[l][p], comp, S, kv.back())) return false;
      }
      for (std::size_t i = last ? S - 1 : 0; i < S; ++i) {
        b.row(comp, i, c);
        b.set_exact(sum, zero.data(), dh);
        for (std::size_t p = 0; p < P; ++p) {
          if (!mha_query(b, attn[l][p], c, kv[p], i + 1, a) || !b.add(sum, a)) return false;
        }
        b.row(res, i, x);
        if (d != dh) {
          if (!b.mv_exact(Wdc.data(), d, dh, sum, a)) return false;
        } else {
          b.slice(sum, 0, d, a);
        }
        if (!b.add(x, a)) return false;
        if (width > 0) {
          if (!b.mv_exact(W1[l].data(), width, d, x, h) || !b.add_exact(h, b1[l].data()) || !b.gelu(h) ||
              !b.mv_exact(W2[l].data(), d, width, h, a) || !b.add(x, a))
            return false;
        }
        b.set_row(res, i, x);
      }
    }
    b.row(res, S - 1, x);
    return b.class_margin(unemb.data(), nullptr, N, next[t], x, out);
  }

  bool evaluate(std::size_t t, long bits, Bounds& out) const override {
    if (bits <= 53) return forward(DoubleEnc(), t, out);
    return forward(MpfrEnc(bits), t, out);
  }
};

bool token_ids(const NamedArray& a, std::size_t N, const std::string& what, std::vector<std::size_t>& out, std::string& why) {
  out.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double v = a.value(i);
    if (!(v >= 0 && v < double(N) && v == double(static_cast<std::size_t>(v)))) {
      why = "data: " + what + " entry " + std::to_string(i) + " is not a token id in [0, " + std::to_string(N) + ")";
      return false;
    }
    out[i] = static_cast<std::size_t>(v);
  }
  return true;
}

}  // namespace

std::unique_ptr<ModelArch> make_dana24_aot(const std::vector<NamedArray>& model, const std::vector<NamedArray>& data,
                                           std::size_t heads, std::string& why) {
  auto m = std::make_unique<Dana24Aot>();
  const std::string M = "model";
  std::vector<std::size_t> s;
  if (!model_no_extra(data, "data", {"sequences", "next"}, why)) return nullptr;
  if (!model_need(model, M, "word_emb.weight", {0, 0}, s, why)) return nullptr;
  m->N = s[0];
  m->d = s[1];
  if (!model_need(model, M, "unemb.weight", {m->N, m->d}, s, why) || !model_need(model, M, "pos_emb.weight", {0, 0}, s, why))
    return nullptr;
  const std::size_t Smax = s[0];
  m->dh = s[1];
  if (m->N < 2) {
    why = "model: tensor \"word_emb.weight\" has 1 row, expected a vocabulary of at least 2 tokens";
    return nullptr;
  }
  if (m->dh % heads != 0) {
    why = "heads: " + std::to_string(heads) + " does not divide d_head = " + std::to_string(m->dh);
    return nullptr;
  }
  std::vector<std::string> known = {"word_emb.weight", "unemb.weight", "pos_emb.weight", "attn_mask",
                                    "linear_compress.weight", "linear_decompress.weight"};
  // layers and parallel blocks from the keys attn_seq.<l>.<p>.in_proj_weight
  while (model_find(model, "attn_seq." + std::to_string(m->L) + ".0.in_proj_weight")) ++m->L;
  if (m->L == 0) {
    why = "model: tensor \"attn_seq.0.0.in_proj_weight\" is missing (expected shape " + shape_text({3 * m->dh, m->dh}) + ")";
    return nullptr;
  }
  while (model_find(model, "attn_seq.0." + std::to_string(m->P) + ".in_proj_weight")) ++m->P;
  const std::size_t E = m->dh;
  m->attn.assign(m->L, std::vector<MhaW>(m->P));
  for (std::size_t l = 0; l < m->L; ++l)
    for (std::size_t p = 0; p < m->P; ++p) {
      const std::string k = "attn_seq." + std::to_string(l) + "." + std::to_string(p) + ".";
      for (const char* x : {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}) known.push_back(k + x);
      if (!model_need(model, M, k + "in_proj_weight", {3 * E, E}, s, why) ||
          !model_need(model, M, k + "out_proj.weight", {E, E}, s, why))
        return nullptr;
      MhaW& w = m->attn[l][p];
      w.E = E;
      w.K = heads;
      const std::vector<double> in = model_values(*model_find(model, k + "in_proj_weight"));
      w.Wq.assign(in.begin(), in.begin() + static_cast<long>(E * E));
      w.Wk.assign(in.begin() + static_cast<long>(E * E), in.begin() + static_cast<long>(2 * E * E));
      w.Wv.assign(in.begin() + static_cast<long>(2 * E * E), in.end());
      w.Wout = model_values(*model_find(model, k + "out_proj.weight"));
      if (model_find(model, k + "in_proj_bias")) {
        if (!model_need(model, M, k + "in_proj_bias", {3 * E}, s, why)) return nullptr;
        const std::vector<double> bi = model_values(*model_find(model, k + "in_proj_bias"));
        w.bq.assign(bi.begin(), bi.begin() + static_cast<long>(E));
        w.bk.assign(bi.begin() + static_cast<long>(E), bi.begin() + static_cast<long>(2 * E));
        w.bv.assign(bi.begin() + static_cast<long>(2 * E), bi.end());
      }
      if (model_find(model, k + "out_proj.bias")) {
        if (!model_need(model, M, k + "out_proj.bias", {E}, s, why)) return nullptr;
        w.bout = model_values(*model_find(model, k + "out_proj.bias"));
      }
    }
  if (m->d != m->dh || model_find(model, "linear_compress.weight") || model_find(model, "linear_decompress.weight")) {
    if (!model_need(model, M, "linear_compress.weight", {m->dh, m->d}, s, why) ||
        !model_need(model, M, "linear_decompress.weight", {m->d, m->dh}, s, why))
      return nullptr;
    m->Wc = model_values(*model_find(model, "linear_compress.weight"));
    m->Wdc = model_values(*model_find(model, "linear_decompress.weight"));
  }
  if (model_find(model, "mlp_seq.0.0.weight")) {
    if (!model_need(model, M, "mlp_seq.0.0.weight", {0, m->d}, s, why)) return nullptr;
    m->width = s[0];
    for (std::size_t l = 0; l < m->L; ++l) {
      const std::string k = "mlp_seq." + std::to_string(l) + ".";
      for (const char* x : {"0.weight", "0.bias", "2.weight"}) known.push_back(k + x);
      if (!model_need(model, M, k + "0.weight", {m->width, m->d}, s, why) || !model_need(model, M, k + "0.bias", {m->width}, s, why) ||
          !model_need(model, M, k + "2.weight", {m->d, m->width}, s, why))
        return nullptr;
      m->W1.push_back(model_values(*model_find(model, k + "0.weight")));
      m->b1.push_back(model_values(*model_find(model, k + "0.bias")));
      m->W2.push_back(model_values(*model_find(model, k + "2.weight")));
    }
  }
  if (!model_no_extra(model, M, known, why)) return nullptr;
  if (!model_need(data, "data", "sequences", {0, 0}, s, why)) return nullptr;
  m->T = s[0];
  m->S = s[1];
  if (m->S > Smax) {
    why = "data: sequences of " + std::to_string(m->S) + " tokens, expected at most " + std::to_string(Smax) +
          " (pos_emb.weight's rows)";
    return nullptr;
  }
  if (const NamedArray* mask = model_find(model, "attn_mask")) {  // the causal mask, as the model registers it
    if (!model_need(model, M, "attn_mask", {0, 0}, s, why)) return nullptr;
    // The model's forward gives its mask to MultiheadAttention, which refuses any other sequence length.
    if (s[0] == s[1] && s[0] != m->S) {
      why = "data: sequences of " + std::to_string(m->S) + " tokens, expected exactly " + std::to_string(s[0]) +
            " (the model's attn_mask is " + std::to_string(s[0]) + " x " + std::to_string(s[0]) +
            "; its forward refuses any other length)";
      return nullptr;
    }
    bool causal = s[0] == s[1] && s[0] >= m->S;
    for (std::size_t i = 0; causal && i < s[0]; ++i)
      for (std::size_t j = 0; causal && j < s[1]; ++j) causal = (mask->value(i * s[1] + j) != 0) == (j > i);
    if (!causal) {
      why = "model: tensor \"attn_mask\" is not the causal mask of at least " + std::to_string(m->S) + " x " +
            std::to_string(m->S) + " (true exactly above the diagonal)";
      return nullptr;
    }
  }
  if (!model_need(data, "data", "next", {m->T}, s, why)) return nullptr;
  m->emb = model_values(*model_find(model, "word_emb.weight"));
  m->pos = model_values(*model_find(model, "pos_emb.weight"));
  m->unemb = model_values(*model_find(model, "unemb.weight"));
  if (!token_ids(*model_find(data, "sequences"), m->N, "sequences", m->seq, why) ||
      !token_ids(*model_find(data, "next"), m->N, "next", m->next, why))
    return nullptr;
  return m;
}

}  // namespace memcert_checker::model_kind
