#pragma once
// Kind "model": one torch.nn.MultiheadAttention over enclosed inputs, as PyTorch computes it:
// q, k, v = x W_q^T + b_q, ... (the three blocks of in_proj_weight / in_proj_bias), K sub-heads of
// E / K entries each, scores q_h . k_h / sqrt(E / K), softmax over the keys allowed, concat of the heads'
// mixtures, then out_proj (+ its bias). Written once over the arithmetic (model_enclosure.hpp).
#include <cstddef>
#include <vector>

#include "kinds/model/model_enclosure.hpp"

namespace memcert_checker::model_kind {

struct MhaW {
  std::size_t E = 0, K = 1;
  std::vector<double> Wq, Wk, Wv, bq, bk, bv, Wout, bout;  // E x E each; biases empty when absent
};

// Keys and values of rows 0 .. rows-1 of X, per sub-head: KH[k], VH[k] (rows x E / K).
template <class B>
struct MhaKV {
  std::vector<typename B::Mat> KH, VH;
  explicit MhaKV(std::size_t K) : KH(K), VH(K) {}
};

template <class B>
bool mha_project(const B& b, const MhaW& w, const typename B::Mat& X, std::size_t rows, MhaKV<B>& kv) {
  const std::size_t hd = w.E / w.K;
  for (std::size_t k = 0; k < w.K; ++k) {
    b.resize(kv.KH[k], rows, hd);
    b.resize(kv.VH[k], rows, hd);
  }
  typename B::Vec x, y, blk;
  for (std::size_t j = 0; j < rows; ++j) {
    b.row(X, j, x);
    for (int which = 0; which < 2; ++which) {
      if (!b.mv_exact(which == 0 ? w.Wk.data() : w.Wv.data(), w.E, w.E, x, y)) return false;
      const std::vector<double>& bias = which == 0 ? w.bk : w.bv;
      if (!bias.empty() && !b.add_exact(y, bias.data())) return false;
      for (std::size_t k = 0; k < w.K; ++k) {
        b.slice(y, k * hd, hd, blk);
        b.set_row(which == 0 ? kv.KH[k] : kv.VH[k], j, blk);
      }
    }
  }
  return true;
}

// The attention output for the query input x over keys 0 .. nkeys-1.
template <class B>
bool mha_query(const B& b, const MhaW& w, const typename B::Vec& x, const MhaKV<B>& kv, std::size_t nkeys,
               typename B::Vec& out) {
  const std::size_t hd = w.E / w.K;
  typename B::Vec q, qk, s, p, z;
  if (!b.mv_exact(w.Wq.data(), w.E, w.E, x, q)) return false;
  if (!w.bq.empty() && !b.add_exact(q, w.bq.data())) return false;
  std::vector<double> zero(w.E, 0.0);
  b.set_exact(z, zero.data(), w.E);
  for (std::size_t k = 0; k < w.K; ++k) {
    b.slice(q, k * hd, hd, qk);
    if (!b.scale_inv_sqrt(qk, hd) || !b.mv(kv.KH[k], 0, nkeys, qk, s) || !b.softmax(s) || !b.mix(kv.VH[k], 0, nkeys, s, p))
      return false;
    b.place(z, k * hd, p);
  }
  if (!b.mv_exact(w.Wout.data(), w.E, w.E, z, out)) return false;
  return w.bout.empty() || b.add_exact(out, w.bout.data());
}

// Multiply-adds of one query over n keys, and of projecting one row.
inline double mha_query_ops(std::size_t E, std::size_t n) { return 2.0 * double(E) * double(E) + 4.0 * double(n) * double(E) + 40.0 * double(n); }
inline double mha_project_ops(std::size_t E) { return 2.0 * double(E) * double(E); }

}  // namespace memcert_checker::model_kind
