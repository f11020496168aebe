// Beyond Theorem 1 (docs/THEORY.md, "Beyond T*"): generic weights memorizing more than T* = H(r-1)+1
// examples. Theorem 1 needs rank(Z) = T; the proof reaches T* by saturation, but Z is T x H d, and for
// contexts that are not shared a generic choice of the key-query products makes rank(Z) = min(T, H d) in
// practice (Proposition 2's ceiling H(n-1)+1 only binds when all contexts are equal). Nothing here is
// believed: the rank is certified on the enclosure of Z, the labels by Step 2's rigorous read-out check,
// and the certificate goes to the independent checker like the theorem's.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>

#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/util/error.hpp"
#include "memcert/util/parallel.hpp"
#include "z_enclosure.hpp"

namespace memcert::mahdavi24 {

using Eigen::MatrixXd;

namespace {

// One random draw: per head integer matrices K, Q (d x d_h, entries in [-4, 4]); the weights are
// W_K = 2^scale_exp K, W_Q = Q.
struct GenericDraw {
  std::vector<Eigen::MatrixXd> K, Q;
  int scale_exp = 0;
};

// The double estimate of Z (T x H d) at W_K = 2^e K, W_Q = Q: screening only, never a proof.
MatrixXd generic_z_estimate(const std::vector<MatrixXd>& E, const MatrixXd& Qd, const GenericDraw& g, std::size_t H) {
  const std::size_t T = E.size(), d = static_cast<std::size_t>(Qd.cols());
  MatrixXd Z(T, H * d);
  const double s = std::ldexp(1.0, g.scale_exp);
  parallel_for(T, fast_threads(), [&](std::size_t t) {
    for (std::size_t h = 0; h < H; ++h) {
      Eigen::VectorXd a = s * (E[t] * (g.K[h] * (g.Q[h].transpose() * Qd.row(t).transpose())));
      a.array() -= a.maxCoeff();
      Eigen::VectorXd w = a.array().exp();
      w /= w.sum();
      Z.block(t, h * d, 1, d) = (E[t].transpose() * w).transpose();
    }
  });
  return Z;
}

// The rows of Z a column-pivoted QR of Z^T calls independent, in pivot order: the first `rank` of them
// are the best-conditioned rows it finds (rank = the numerical rank at relative threshold `rel`);
// `conditioning` = |R_kk| / |R_11| at k = rank (the screening score of a draw, 0 when rank = 0).
std::vector<std::size_t> pivot_rows(const MatrixXd& Z, double rel, std::size_t& rank, double* conditioning = nullptr) {
  Eigen::ColPivHouseholderQR<MatrixXd> qr(Z.transpose());
  qr.setThreshold(rel);
  rank = static_cast<std::size_t>(qr.rank());
  if (conditioning) {
    const double top = rank ? std::fabs(qr.matrixQR()(0, 0)) : 0;
    *conditioning = top > 0 ? std::fabs(qr.matrixQR()(Eigen::Index(rank - 1), Eigen::Index(rank - 1))) / top : 0;
  }
  std::vector<std::size_t> order(static_cast<std::size_t>(Z.rows()));
  const auto& p = qr.colsPermutation().indices();
  for (Eigen::Index i = 0; i < p.size(); ++i) order[static_cast<std::size_t>(i)] = static_cast<std::size_t>(p(i));
  return order;
}

QMatrix qmat_from_integer_doubles(const MatrixXd& a, const Rational& factor) {
  QMatrix q(static_cast<std::size_t>(a.rows()), static_cast<std::size_t>(a.cols()));
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      q(i, j) = Rational(static_cast<long>(a(i, j))) * factor;
      q(i, j).canonicalize();
    }
  return q;
}

}  // namespace

Theorem1Result generic_weights_construct(const AttentionDataset& ds_in, const Theorem1Options& opt) {
  auto say = [&](const std::string& s) { if (opt.narrate) opt.narrate(s); };
  if (opt.H == 0) throw InputError("--heads: expected H >= 1, got 0");
  if (opt.dh == 0) throw InputError("--dh: expected d_h >= 1, got 0");
  const std::size_t T = ds_in.T(), n = ds_in.n(), d = ds_in.d(), H = opt.H, Hd = opt.H * ds_in.d();
  if (T == 0 || n == 0 || d == 0) throw InputError("dataset: expected T, n, d >= 1");
  if (n > d) throw InputError("dataset: expected context size n <= d, got n = " + std::to_string(n) + " > d = " + std::to_string(d));
  Theorem1Result res;
  res.method = "generic";
  res.hypotheses = "none";
  res.H = H; res.n = n; res.d = d; res.dh = opt.dh; res.skip = opt.skip; res.T_data = T;
  res.tolerance = opt.tolerance;
  res.r = theorem1_r(n, opt.dh);
  res.T_star = t_star<std::size_t>(T, H, n, opt.dh);
  res.rank_Z_bound = std::min(T, Hd);
  // A stream of its own: the theorem's construction with the same seed is not disturbed.
  std::mt19937_64 rng(opt.seed ^ 0x6a09e667f3bcc909ull);

  AttentionDataset ds;
  if (ds_in.typed) {  // this route computes on exact rationals throughout: materialise a typed backing
    for (std::size_t t = 0; t < ds_in.T(); ++t) ds.contexts.push_back(attention_context(ds_in, t));
  } else {
    ds.contexts = ds_in.contexts;
  }
  ds.queries = ds_in.queries;
  for (auto& E : ds.contexts) for (auto& x : E.data()) x.canonicalize();
  for (auto& x : ds.queries.data()) x.canonicalize();
  QMatrix Y;
  std::vector<long> cls;
  theorem1_labels(ds_in, T, rng, res, Y, cls);
  if (res.d_out > d) throw InputError("labels: expected d_out <= d (the output is W_D^T o with o in R^d), got d_out = " +
                                      std::to_string(res.d_out) + " > d = " + std::to_string(d));
  res.dv = opt.dv ? *opt.dv : res.d_out;
  if (res.dv < res.d_out) throw InputError("--dv: expected d_v >= d_out = " + std::to_string(res.d_out) + ", got " + std::to_string(res.dv));

  // ---- screening in double: a few random draws, the one whose Z looks best conditioned ----
  std::vector<MatrixXd> Ed(T);
  MatrixXd Qd(T, d);
  for (std::size_t t = 0; t < T; ++t) {
    Ed[t].resize(n, d);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t c = 0; c < d; ++c) Ed[t](j, c) = rational_to_double(ds.contexts[t](j, c));
    for (std::size_t c = 0; c < d; ++c) Qd(t, c) = rational_to_double(ds.queries(t, c));
  }
  std::uniform_int_distribution<int> u(-4, 4);
  GenericDraw best;
  std::size_t best_rank = 0;
  double best_cond = -1;
  const std::size_t kDraws = 3;
  // Target logit spreads (root mean square over examples, heads and tokens): order one keeps the softmax
  // away from both uniform attention (Z ~ [xbar .. xbar], rank <= d) and hard saturation (Z ~ tokens).
  const double kTargets[] = {2.0, 1.0, 4.0};
  for (std::size_t draw = 0; draw < kDraws; ++draw) {
    GenericDraw g;
    for (std::size_t h = 0; h < H; ++h) {
      MatrixXd K(d, opt.dh), Q(d, opt.dh);
      for (Eigen::Index i = 0; i < K.size(); ++i) { K.data()[i] = u(rng); Q.data()[i] = u(rng); }
      g.K.push_back(K);
      g.Q.push_back(Q);
    }
    double ss = 0;
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t h = 0; h < H; ++h)
        ss += (Ed[t] * (g.K[h] * (g.Q[h].transpose() * Qd.row(t).transpose()))).squaredNorm();
    const double rms = std::sqrt(ss / double(T * H * n));
    for (double target : kTargets) {
      g.scale_exp = rms > 0 ? static_cast<int>(std::lround(std::log2(target / rms))) : 0;
      MatrixXd Z = generic_z_estimate(Ed, Qd, g, H);
      std::size_t k = 0;
      double cond = 0;
      pivot_rows(Z, 1e-9, k, &cond);
      ++res.generic_attempts;
      if (k > best_rank || (k == best_rank && cond > best_cond)) { best = g; best_rank = k; best_cond = cond; }
      if (best_rank == res.rank_Z_bound && best_cond > 1e-4) break;  // as good as any weights can be
    }
    if (best_rank == res.rank_Z_bound && best_cond > 1e-4) break;
  }
  res.logit_scale = best.scale_exp >= 0 ? Rational(Integer(1) << best.scale_exp)
                                        : Rational(Integer(1), Integer(1) << -best.scale_exp);
  res.logit_scale.canonicalize();
  res.weights.heads.resize(H);
  for (std::size_t h = 0; h < H; ++h) {
    res.weights.heads[h].WK = qmat_from_integer_doubles(best.K[h], res.logit_scale);
    res.weights.heads[h].WQ = qmat_from_integer_doubles(best.Q[h], Rational(1));
  }
  say("Beyond T*: random exact weights W_K = 2^" + std::to_string(best.scale_exp) + " K, W_Q = Q (K, Q integer in [-4, 4]), best of " +
      std::to_string(res.generic_attempts) + " draws screened in double.");

  // ---- the enclosure of Z for all T examples (exact logits, certified softmax-mix) ----
  ZExamples z = z_examples(ds, opt.precision);
  std::vector<ScaledMatrix> WKs(H), WQs(H);
  for (std::size_t h = 0; h < H; ++h) {
    WKs[h] = scaled_from_qmat(res.weights.heads[h].WK);
    WQs[h] = scaled_from_qmat(res.weights.heads[h].WQ);
  }
  MatrixXd Zc(T, Hd), Zr(T, Hd);
  {
    std::vector<MatrixXd> Cb(H, MatrixXd(T, d)), Rb(H, MatrixXd(T, d));
    parallel_for(T, mpfr_threads(), [&](std::size_t t) {
      const ScaledVector e = z.sd.queries[t];
      for (std::size_t h = 0; h < H; ++h) {
        const QVector a = mha_logits_scaled(z.sd.contexts[t], WKs[h], WQs[h], e);
        z_fill_rows(z, Cb[h], Rb[h], t, a, t);
      }
    });
    for (std::size_t h = 0; h < H; ++h) { Zc.middleCols(h * d, d) = Cb[h]; Zr.middleCols(h * d, d) = Rb[h]; }
  }
  GramAccumulator gram(T);
  for (std::size_t h = 0; h < H; ++h) gram.add(Zc.middleCols(h * d, d), Zr.middleCols(h * d, d));

  // ---- certified rank on the rows a pivoted QR calls independent; fewer rows when it does not go through ----
  std::size_t k = 0;
  const std::vector<std::size_t> order = pivot_rows(Zc, 1e-9, k);
  res.rank_Z_numerical = k;
  GramRankResult cert;
  std::vector<std::size_t> rows;
  for (std::size_t tries = 0; k > 0 && tries < 12; ++tries) {
    rows.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
    std::sort(rows.begin(), rows.end());
    cert = gram.certify(rows, nullptr, nullptr, true);
    if (cert.ok) break;
    k -= std::max<std::size_t>(1, k / 16);
  }
  if (!cert.ok) { rows.clear(); k = 0; }
  res.examples = rows;
  res.rank_Z_lower = k;
  res.final_sigma_lower = cert.sigma_lower;
  res.final_mu = cert.mu;
  say("Generic weights: rank(Z) >= " + std::to_string(k) + " certified on " + std::to_string(k) + " of the " +
      std::to_string(T) + " examples (numerical rank " + std::to_string(res.rank_Z_numerical) + "; rank(Z) <= min(T, H d) = " +
      std::to_string(res.rank_Z_bound) + " for any weights).");
  if (k == 0) return res;

  // ---- Step 2 on the certified examples ----
  std::vector<double> Zcv(k * Hd), Zrv(k * Hd);
  QMatrix Yt(k, res.d_out);
  std::vector<long> clsS;
  std::vector<QVector> shift;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t t = rows[i];
    for (std::size_t c = 0; c < Hd; ++c) { Zcv[i * Hd + c] = Zc(t, c); Zrv[i * Hd + c] = Zr(t, c); }
    for (std::size_t c = 0; c < res.d_out; ++c) Yt(i, c) = Y(t, c) - (opt.skip ? ds.queries(t, c) : Rational(0));  // appendix C
    if (res.class_labels) {
      clsS.push_back(cls[t]);
      if (opt.skip) shift.push_back(QVector(ds.queries.row(t), ds.queries.row(t) + res.d_out));
    }
  }
  Step2Readout s2 = step2_readout(Zcv, Zrv, k, Hd, Yt, res.class_labels ? &clsS : nullptr, shift);
  QMatrix Mq(Hd, res.d_out);
  for (std::size_t i = 0; i < Hd; ++i)
    for (std::size_t c = 0; c < res.d_out; ++c) Mq(i, c) = rational_from_double(s2.M(i, c));
  res.max_label_error = s2.max_error;
  res.min_class_margin = res.class_labels ? s2.min_margin : 0;
  const Rational rule = std::min(opt.tolerance, Rational(1, 1 << 20));  // and the checker's 2^-20 max(1, |y|)
  res.labels_ok = res.class_labels ? s2.min_margin > 0 : rational_from_double(s2.max_error) <= rule;
  if (!res.labels_ok) {  // rank >= k is certified on these rows: a precision matter, escalated as the theorem's
    QMatrix Yk(k, res.d_out);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t c = 0; c < res.d_out; ++c) Yk(i, c) = Y(rows[i], c);
    ReadoutEscalation esc = step2_readout_escalate(ds, rows, res.weights.heads, Yk, Yt, res.class_labels ? &clsS : nullptr,
                                                   shift, opt.tolerance);
    if (esc.ok) step2_adopt_escalation(res, esc, Mq);
  }
  step2_factor_readout(res.weights, Mq, d, res.dv, res.d_out);
  res.memorized = res.labels_ok;

  // ---- the certificate: the k examples with their labels ----
  AttentionDataset sub;
  sub.queries = QMatrix(k, d);
  QMatrix Ysub(k, res.d_out);
  std::vector<long> clsub;
  for (std::size_t i = 0; i < k; ++i) {
    sub.contexts.push_back(ds.contexts[rows[i]]);
    for (std::size_t c = 0; c < d; ++c) sub.queries(i, c) = ds.queries(rows[i], c);
    for (std::size_t c = 0; c < res.d_out; ++c) Ysub(i, c) = Y(rows[i], c);
    if (res.class_labels) clsub.push_back(cls[rows[i]]);
  }
  res.certificate = theorem1_write_certificate(res, sub, Ysub, clsub);
  return res;
}

}  // namespace memcert::mahdavi24
