// The joint-scales family: per-head saturation scales that break rank(Z) (joint_scales.hpp).
#include "memcert/theory/mahdavi24/joint_scales.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"
#include "memcert/util/error.hpp"

namespace memcert::mahdavi24 {
namespace {

// W = W_K W_Q^T of one head, exactly.
QMatrix head_product(const MhaHead& h) { return mat_mul(h.WK, mat_transpose(h.WQ)); }

// a_0 - a_1 for the logits a = E W e of a context with n = 2 tokens: the only quantity softmax depends on.
Rational logit_difference(const QMatrix& E, const QMatrix& W, const QVector& e) {
  QVector a = mat_vec(E, mat_vec(W, e));
  return a[0] - a[1];
}

// W (d x d, rank <= dh) as W_K W_Q^T with dh columns each (zero-padded), exactly.
void factor_into_head(const QMatrix& W, std::size_t dh, MhaHead& head) {
  QMatrix b, c;
  qmat_rank_factor(W, b, c);
  if (b.cols() > dh) throw std::logic_error("joint scales: W^h has rank above d_h (impossible for the construction)");
  head.WK = QMatrix(W.rows(), dh, Rational(0));
  head.WQ = QMatrix(W.cols(), dh, Rational(0));
  for (std::size_t k = 0; k < b.cols(); ++k)
    for (std::size_t i = 0; i < W.rows(); ++i) {
      head.WK(i, k) = b(i, k);
      head.WQ(i, k) = c(k, i);
    }
}

bool kruskal_certified(const QMatrix& v, std::size_t k) { return kruskal_at_least(v, k, 1u << 20).holds.value_or(false); }

}  // namespace

AttentionDataset generate_joint_scales_dataset(std::size_t d, std::uint64_t seed, std::size_t H) {
  if (d < 3) throw InputError("generate: the joint-scales family needs --d >= 3 (a query difference orthogonal to two queries)");
  if (H != 2 && H != 3) throw InputError("generate: the joint-scales family has H = 2 or 3 heads");
  const std::size_t T = H + 1, a = H == 3 ? 2 : 0, b = T - 1;  // the pair: e^(b) = e^(a) + kappa nu
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> u(-64, 64);
  auto draw = [&]() { Rational q(u(rng), 64); q.canonicalize(); return q; };
  for (;;) {
    QMatrix E(2, d);
    for (auto& x : E.data()) x = draw();
    if (qmat_rank(E) != 2) continue;  // Assumption 2
    QMatrix Q(T, d);
    for (std::size_t t = 0; t < T - 1; ++t)
      for (std::size_t k = 0; k < d; ++k) Q(t, k) = draw();
    // nu spans part of the kernel of [e^(1); e^(2)]: then R_1 = {1, 2}'s W_fit = U Q_R^+ maps the pair's
    // queries to the same vector, so head 1 cannot tell the two examples apart.
    QMatrix K = qmat_kernel(mat_select_rows(Q, {0, 1}));
    if (K.cols() == 0) continue;
    Rational kappa = draw();
    if (kappa == 0) continue;
    for (std::size_t k = 0; k < d; ++k) Q(b, k) = Q(a, k) + kappa * K(k, 0);
    if (!kruskal_certified(Q, std::min(T, d))) continue;  // general position (=> Assumption 1)
    QMatrix shifted = Q;  // Assumption 3: {e^(t) + xbar}
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t k = 0; k < d; ++k) shifted(t, k) += (E(0, k) + E(1, k)) / Rational(2);
    if (!kruskal_certified(shifted, 2)) continue;
    QMatrix L(T, 1);
    for (std::size_t t = 0; t < T; ++t) L(t, 0) = draw();
    if (L(a, 0) == L(b, 0)) continue;
    AttentionDataset ds;
    ds.contexts.assign(T, E);
    ds.queries = Q;
    ds.labels = L;
    return ds;
  }
}

std::optional<JointScales> joint_scales_identical_rows(const AttentionDataset& ds, const Theorem1Result& res) {
  const std::size_t H = res.H;
  if ((H != 2 && H != 3) || res.n != 2 || res.T_star != H + 1 || ds.T() != H + 1 || res.trace.size() != H) return std::nullopt;
  for (const auto& E : ds.contexts)
    if (!(E == ds.contexts[0])) return std::nullopt;  // the identity below needs one shared context
  const QMatrix& E = ds.contexts[0];
  JointScales js;
  js.row_i = res.trace[H == 3 ? 1 : 0].group.at(0);  // H = 3: R_2's example; H = 2: R_1's first
  js.row_j = res.trace[H - 1].group.at(0);            // the last head's example
  QVector ei(ds.queries.cols()), ej(ds.queries.cols());
  for (std::size_t k = 0; k < ei.size(); ++k) { ei[k] = ds.queries(js.row_i, k); ej[k] = ds.queries(js.row_j, k); }
  js.weights = res.weights;
  js.scales.assign(H, Rational(0));
  for (std::size_t h = 0; h < H; ++h) {
    const QMatrix W = head_product(res.weights.heads[h]);
    if (h == 0) {
      if (logit_difference(E, W, ei) != logit_difference(E, W, ej)) return std::nullopt;
      continue;
    }
    // Lemma 3's term g w^T vanishes on the head's own example; the other example's logit difference is
    // affine in c: D(c) = D(c_h) + (c - c_h) (w.e) ((E g)_0 - (E g)_1). Solve D(c) = own difference.
    const HeadTrace& tr = res.trace[h];
    const auto& grp = res.trace[h].group;
    const bool own_i = std::find(grp.begin(), grp.end(), js.row_i) != grp.end();
    const bool own_j = std::find(grp.begin(), grp.end(), js.row_j) != grp.end();
    if (own_i == own_j) return std::nullopt;  // the family puts exactly one of the pair in each saturating head's group
    const QVector& eo = own_i ? ei : ej;  // the head's own example
    const QVector& ex = own_i ? ej : ei;  // the other one
    Rational we = 0;
    for (std::size_t k = 0; k < ex.size(); ++k) we += tr.w[k] * ex[k];
    QVector Eg = mat_vec(E, tr.g);
    Rational slope = we * (Eg[0] - Eg[1]);
    if (slope == 0) return std::nullopt;
    Rational c = tr.c + (logit_difference(E, W, eo) - logit_difference(E, W, ex)) / slope;
    if (c <= 0) return std::nullopt;
    QMatrix Wn = W;
    for (std::size_t a = 0; a < Wn.rows(); ++a)
      for (std::size_t b = 0; b < Wn.cols(); ++b) Wn(a, b) += (c - tr.c) * tr.g[a] * tr.w[b];
    if (logit_difference(E, Wn, eo) != logit_difference(E, Wn, ex)) throw std::logic_error("joint scales: the solved scale does not equalize the logits");
    factor_into_head(Wn, res.dh, js.weights.heads[h]);
    js.scales[h] = c;
  }
  return js;
}

}  // namespace memcert::mahdavi24
