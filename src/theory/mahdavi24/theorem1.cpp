// Theorem 1 of mahdavi24 (docs/THEORY.md sections 3-4): the hypotheses, Proposition 1 (proposition1.cpp), then
// Step 2 (the read-out), producing a certificate of kind "theorem1" (theorem1_certificate.cpp) for the
// independent checker.
#include "memcert/theory/mahdavi24/theorem1.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"
#include "memcert/theory/mahdavi24/assumptions_typed.hpp"
#include "memcert/theory/mahdavi24/proposition1.hpp"
#include "memcert/util/error.hpp"
#include "memcert/util/memory.hpp"
#include "format.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/threads.hpp"
#include "z_enclosure.hpp"

namespace memcert::mahdavi24 {

using nlohmann::json;
using Eigen::MatrixXd;

namespace {

using detail::fmt;
using detail::fmtq;


}  // namespace

// c_network (docs/THEORY.md section 4, "Which c to report"): grid {0} u {c_max 2^-j : j = 40..0} in increasing
// order; acceptance is not monotone in c, so no bisection.
std::optional<Rational> c_network_grid_search(const Rational& c_max, const std::function<bool(const Rational&)>& certifies) {
  std::vector<Rational> grid{Rational(0)};
  if (c_max > 0)
    for (int j = 40; j >= 0; --j) grid.push_back(c_max / Rational(Integer(1) << static_cast<unsigned long>(j)));
  for (const Rational& cc : grid)
    if (certifies(cc)) return cc;
  return std::nullopt;
}

std::vector<std::vector<std::size_t>> theorem1_groups(std::size_t T, std::size_t H, std::size_t r) {
  std::vector<std::vector<std::size_t>> g(H);
  std::size_t next = 0;
  for (std::size_t h = 0; h < H; ++h) {
    std::size_t want = h == 0 ? r : r - 1;
    for (std::size_t i = 0; i < want && next < T; ++i) g[h].push_back(next++);
  }
  return g;
}

// ---- Step 2 (docs/THEORY.md section 3-4): the read-out ---------------------------------------------------
Step2Readout step2_readout(const std::vector<double>& Zc_in, const std::vector<double>& Zr_in, std::size_t T,
                           std::size_t Hd, const QMatrix& Yt, const std::vector<long>* cls,
                           const std::vector<QVector>& shift, std::vector<double>* gram) {
  const std::size_t dout = Yt.cols();
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Zc(Zc_in.data(), T, Hd),
      Zr(Zr_in.data(), T, Hd);
  Step2Readout out;
  MatrixXd Yd(T, dout);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < dout; ++c) Yd(t, c) = rational_to_double(Yt(t, c));
  // G = fl(Zc Zc^T): the accumulated Gram matrix when given (factored in place: it is not needed after),
  // by the threads' blocked Cholesky; Eigen's LDL^T of a fresh product only if that breaks down. An
  // estimate of the read-out (the label check below is rigorous whatever M is).
  std::vector<double> own;
  std::vector<double>& g = gram && gram->size() == T * T ? *gram : own;
  if (&g == &own) {
    own.resize(T * T);
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(own.data(), T, T) = Zc * Zc.transpose();
  }
  using RowMap = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  const bool factored = fast_detail::cholesky_rn(g.data(), T, fast_threads());
  std::optional<Eigen::LDLT<MatrixXd>> ldlt;
  if (!factored) ldlt.emplace(MatrixXd(Zc * Zc.transpose()));
  auto gsolve = [&](const MatrixXd& y) -> MatrixXd {
    if (ldlt) return ldlt->solve(y);
    RowMap L(g.data(), T, T);
    MatrixXd x = L.triangularView<Eigen::Lower>().solve(y);
    return L.transpose().triangularView<Eigen::Upper>().solve(x);
  };

  MatrixXd M = Zc.transpose() * gsolve(Yd);
  for (int it = 0; it < 3; ++it) {  // iterative refinement with long-double residuals
    MatrixXd res_d(T, dout);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < dout; ++c) {
        long double s = 0;
        for (std::size_t i = 0; i < Hd; ++i) s += (long double)Zc(t, i) * (long double)M(i, c);
        res_d(t, c) = double((long double)Yd(t, c) - s);
      }
    M += Zc.transpose() * gsolve(res_d);
  }
  out.M = M;
  // Rigorous label check: y_hat_c = sum_i M_ic p_i (+ e_c), p_i in [centre +- radius]. One example per
  // task on the MPFR threads (each with its own MPFR variables).
  std::vector<double> worst_t(T, 0.0), margin_t(T, INFINITY);
  parallel_for(T, mpfr_threads(), [&](std::size_t t) {
    mpfr_t lo, hi, t1, rad;
    mpfr_inits2(256, lo, hi, t1, rad, (mpfr_ptr)0);
    std::vector<std::pair<double, double>> yh(dout);  // [lo, hi] as doubles (outward)
    for (std::size_t c = 0; c < dout; ++c) {
      mpfr_set_zero(lo, 1); mpfr_set_zero(hi, 1); mpfr_set_zero(rad, 1);
      for (std::size_t i = 0; i < Hd; ++i) {
        double mv = M(i, c);
        if (mv == 0) continue;
        mpfr_set_d(t1, Zc(t, i), MPFR_RNDN);
        mpfr_mul_d(t1, t1, mv, MPFR_RNDN);  // exact: 53 x 53 bits < 256
        mpfr_add(lo, lo, t1, MPFR_RNDD);
        mpfr_add(hi, hi, t1, MPFR_RNDU);
        mpfr_set_d(t1, Zr(t, i), MPFR_RNDU);
        mpfr_mul_d(t1, t1, std::fabs(mv), MPFR_RNDU);
        mpfr_add(rad, rad, t1, MPFR_RNDU);
      }
      mpfr_sub(lo, lo, rad, MPFR_RNDD);
      mpfr_add(hi, hi, rad, MPFR_RNDU);
      if ((cls != nullptr)) {
        if (!shift.empty()) { mpfr_add_q(lo, lo, shift[t][c].get_mpq_t(), MPFR_RNDD); mpfr_add_q(hi, hi, shift[t][c].get_mpq_t(), MPFR_RNDU); }
        yh[c] = {mpfr_get_d(lo, MPFR_RNDD), mpfr_get_d(hi, MPFR_RNDU)};
      } else {  // |y_hat - y| = |sum - Y'| <= max(hi - Y', Y' - lo)
        mpfr_sub_q(hi, hi, Yt(t, c).get_mpq_t(), MPFR_RNDU);
        mpfr_sub_q(lo, lo, Yt(t, c).get_mpq_t(), MPFR_RNDD);
        mpfr_neg(lo, lo, MPFR_RNDU);
        double e = std::max(mpfr_get_d(hi, MPFR_RNDU), mpfr_get_d(lo, MPFR_RNDU));
        worst_t[t] = std::max(worst_t[t], e);
      }
    }
    if ((cls != nullptr)) {
      long yl = (*cls)[t];
      double best_other = -INFINITY;
      for (std::size_t c = 0; c < dout; ++c) if ((long)c != yl) best_other = std::max(best_other, yh[c].second);
      margin_t[t] = dout == 1 ? INFINITY : dbound::sub_dn(yh[yl].first, best_other);
    }
    mpfr_clears(lo, hi, t1, rad, (mpfr_ptr)0);
  });
  out.max_error = 0;
  out.min_margin = INFINITY;
  for (std::size_t t = 0; t < T; ++t) {
    out.max_error = std::max(out.max_error, worst_t[t]);
    out.min_margin = std::min(out.min_margin, margin_t[t]);
  }
  return out;
}

// The labels of the first `count` examples (docs/THEORY.md section 1): real labels, or class labels as
// one-hot rows over the WHOLE data set's classes, or (no labels in the file) random labels m/64 drawn from
// rng. Throws InputError on a label shape the model cannot take.
void theorem1_labels(const AttentionDataset& ds_in, std::size_t count, std::mt19937_64& rng, Theorem1Result& res,
                     QMatrix& Y, std::vector<long>& cls) {
  const std::size_t T = ds_in.T();
  if (ds_in.labels) {
    const QMatrix& L = *ds_in.labels;
    if (L.rows() != T) throw InputError("dataset: labels: expected " + std::to_string(T) + " rows, got " + std::to_string(L.rows()));
    if (ds_in.class_labels) {
      if (L.cols() != 1) throw InputError("dataset: labels: expected a flat list of class labels");
      long C = 0;
      for (std::size_t t = 0; t < T; ++t) {
        Rational q = L(t, 0);
        q.canonicalize();
        if (q.get_den() != 1 || q < 0) throw InputError("dataset: labels[" + std::to_string(t) + "]: expected a class index >= 0");
        C = std::max(C, q.get_num().get_si() + 1);
      }
      res.class_labels = true;
      res.d_out = std::size_t(C);
      Y = QMatrix(count, res.d_out, Rational(0));
      for (std::size_t t = 0; t < count; ++t) {
        Rational q = L(t, 0);
        q.canonicalize();
        cls.push_back(q.get_num().get_si());
        Y(t, cls.back()) = 1;
      }
    } else {
      if (L.cols() == 0) throw InputError("dataset: labels: expected d_out >= 1 columns");
      res.d_out = L.cols();
      Y = QMatrix(count, res.d_out);
      for (std::size_t t = 0; t < count; ++t)
        for (std::size_t c = 0; c < res.d_out; ++c) { Y(t, c) = L(t, c); Y(t, c).canonicalize(); }
    }
  } else {
    res.labels_generated = true;
    res.d_out = 1;
    Y = QMatrix(count, 1);
    std::uniform_int_distribution<int> ul(-64, 64);
    for (std::size_t t = 0; t < count; ++t) { Y(t, 0) = Rational(ul(rng), 64); Y(t, 0).canonicalize(); }
  }
}

// Step 2's factorization (docs/THEORY.md section 3, "Step 2"): W_V^h = M_h padded to d_v columns, W_O stacks
// identities into the first d_out coordinates, W_D selects them.
void step2_factor_readout(MhaWeights& w, const QMatrix& Mq, std::size_t d, std::size_t dv, std::size_t dout) {
  const std::size_t H = w.heads.size();
  for (std::size_t h = 0; h < H; ++h) {
    w.heads[h].WV = QMatrix(d, dv, Rational(0));
    for (std::size_t k = 0; k < d; ++k)
      for (std::size_t c = 0; c < dout; ++c) w.heads[h].WV(k, c) = Mq(h * d + k, c);
  }
  w.WO = QMatrix(H * dv, d, Rational(0));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t c = 0; c < dout; ++c) w.WO(h * dv + c, c) = 1;
  w.WD = QMatrix(d, dout, Rational(0));
  for (std::size_t c = 0; c < dout; ++c) w.WD(c, c) = 1;
}

Theorem1Result theorem1_construct(const AttentionDataset& ds_in, const Theorem1Options& opt) {
  auto say = [&](const std::string& s) { if (opt.narrate) opt.narrate(s); };
  // ---- usage checks (exit 2) ----
  if (opt.H == 0) throw InputError("--heads: expected H >= 1, got 0");
  if (opt.dh == 0) throw InputError("--dh: expected d_h >= 1, got 0");
  const std::size_t T = ds_in.T(), n = ds_in.n(), d = ds_in.d();
  if (T == 0 || n == 0 || d == 0) throw InputError("dataset: expected T, n, d >= 1");
  for (std::size_t t = 0; t < T && !ds_in.typed; ++t)  // (a typed backing is one (T, n, d) array)
    if (ds_in.contexts[t].rows() != n || ds_in.contexts[t].cols() != d)
      throw InputError("dataset: contexts[" + std::to_string(t) + "]: expected shape " + std::to_string(n) + " x " +
                       std::to_string(d));
  if (n > d) throw InputError("dataset: expected context size n <= d, got n = " + std::to_string(n) + " > d = " + std::to_string(d));
  Theorem1Result res;
  res.H = opt.H; res.n = n; res.d = d; res.dh = opt.dh; res.skip = opt.skip; res.T_data = T;
  res.tolerance = opt.tolerance;
  const std::size_t r = theorem1_r(n, opt.dh);
  res.r = r;
  const std::size_t Tstar = t_star<std::size_t>(T, opt.H, n, opt.dh);
  res.T_star = Tstar;
  std::mt19937_64 rng(opt.seed);

  // Labels: real (T x d_out) or class indices (one-hot, d_out = C).
  AttentionDataset ds;  // the chosen examples
  for (std::size_t t = 0; t < Tstar; ++t) {
    if (!ds_in.typed) ds.contexts.push_back(ds_in.contexts[t]);
    res.examples.push_back(t);
  }
  if (ds_in.typed) {  // the typed contexts are shared, not copied: the first T* examples are used
    ds.typed = ds_in.typed;
    ds.typed_T = Tstar;
    ds.typed_n = n;
  }
  ds.queries = QMatrix(Tstar, d);
  for (std::size_t t = 0; t < Tstar; ++t)
    for (std::size_t c = 0; c < d; ++c) ds.queries(t, c) = ds_in.queries(t, c);
  // GMP's mpq functions assume canonical operands: canonicalise whatever the caller built.
  for (auto& E : ds.contexts) for (auto& x : E.data()) x.canonicalize();
  for (auto& x : ds.queries.data()) x.canonicalize();
  QMatrix Y;
  std::vector<long> cls;
  theorem1_labels(ds_in, Tstar, rng, res, Y, cls);
  ds.labels = res.class_labels ? std::optional<QMatrix>() : std::optional<QMatrix>(Y);
  if (res.d_out > d) throw InputError("labels: expected d_out <= d (the output is W_D^T o with o in R^d), got d_out = " +
                                      std::to_string(res.d_out) + " > d = " + std::to_string(d));
  res.dv = opt.dv ? *opt.dv : res.d_out;
  if (res.dv < res.d_out) throw InputError("--dv: expected d_v >= d_out = " + std::to_string(res.d_out) + ", got " + std::to_string(res.dv));

  const auto groups = theorem1_groups(Tstar, opt.H, r);
  say("Theorem 1 setting: H = " + std::to_string(opt.H) + " heads, n = " + std::to_string(n) + ", d = " + std::to_string(d) +
      ", d_h = " + std::to_string(opt.dh) + ", so r = min(n, d_h) = " + std::to_string(r) + " and the target is T* = H(r-1)+1 = " +
      std::to_string(opt.H * (r - 1) + 1) + (Tstar < opt.H * (r - 1) + 1 ? " (only " + std::to_string(Tstar) + " examples available)" : "") + ".");

  // ---- hypotheses ----
  {
    StageTimes::Scope clock(opt.timings, "hypotheses");
    std::vector<std::size_t> all(Tstar);
    for (std::size_t t = 0; t < Tstar; ++t) all[t] = t;
    Assumption2Result a2 = assumption2_check(ds, all);  // either storage
    if (!a2.holds)
      throw HypothesisFailure("Assumption 2 fails: context of example " + std::to_string(a2.failing[0]) + " has rank < n",
                              json{{"assumption", 2}, {"failing", a2.failing}, {"witness_row_combination", qvec_to_json(a2.witness)}});
    const std::size_t k1 = std::min(n, Tstar);
    if (binomial_saturating(Tstar, k1) <= 200000) {
      KruskalCheck a1 = kruskal_at_least(ds.queries, k1, 20'000'000);
      if (a1.holds && *a1.holds) {
        res.hypotheses = "assumptions-1-2";
      } else if (a1.holds && !*a1.holds) {
        json cf = json::array();
        for (auto& q : a1.coefficients) cf.push_back(rational_to_string(q));
        throw HypothesisFailure("Assumption 1 fails: the queries have Kruskal rank < " + std::to_string(k1),
                                json{{"assumption", 1}, {"kruskal_upper", a1.upper}, {"dependent_subset", a1.dependent_subset},
                                     {"coefficients", cf}});
      }
    }
    GroupingFacts gf = grouping_facts_check(ds, groups);
    if (!gf.holds) throw HypothesisFailure("hypothesis fails: " + gf.failure, gf.witness);
    if (res.hypotheses.empty()) res.hypotheses = "grouping-facts";
    say(res.hypotheses == "assumptions-1-2"
            ? "Hypotheses: Assumption 2 (every context has rank n) and Assumption 1 (queries have Kruskal rank >= " +
                  std::to_string(k1) + ") certified exactly; the grouping facts follow."
            : "Hypotheses: Assumption 2 (every context has rank n) certified; full Kruskal rank is too expensive here, so the "
              "weaker facts the construction uses are certified instead: each Q_{R_h} has full column rank and no earlier "
              "query lies in its span.");
  }

  // ---- Proposition 1: induction over heads, then rank(Z) >= T* (the fact "memorizes" rests on) ----
  Proposition1Result p1 = proposition1_induction(ds, groups, opt, rng);
  release_free_memory();  // the induction's kept logits (many small objects) are gone: hand their pages back
  res.weights.heads = std::move(p1.heads);
  res.trace = std::move(p1.trace);
  res.scale = opt.scale;
  res.c_network = p1.c_network;
  res.network_sigma_lower = p1.network_sigma_lower;
  res.weyl_chain = p1.weyl_chain;
  res.rank_Z_lower = Tstar;
  res.final_sigma_lower = p1.final.sigma_lower;
  res.final_mu = p1.final.mu;
  // ---- Step 2: the read-out. Solve Z M = Y' (Y' = Y - e_{1..d_out} with the skip connection). ----
  const std::size_t dout = res.d_out, Hd = opt.H * d;
  QMatrix Yt = Y;
  if (opt.skip)
    for (std::size_t t = 0; t < Tstar; ++t)
      for (std::size_t c = 0; c < dout; ++c) Yt(t, c) -= ds.queries(t, c);
  // Z (centres and radii, T* x H d, row-major) straight from the head blocks, each block freed once
  // copied: one copy of Z at a time (2 T* H d doubles: 2.1 GB at H = 128) instead of three.
  std::vector<double> Zcv(Tstar * Hd), Zrv(Tstar * Hd);
  for (std::size_t h = 0; h < opt.H; ++h) {
    const MatrixXd& BC = p1.blockC[h];
    const Eigen::MatrixXf& BR = p1.blockR[h];  // floats: widened exactly
    for (std::size_t t = 0; t < Tstar; ++t)
      for (std::size_t c = 0; c < d; ++c) {
        Zcv[t * Hd + h * d + c] = BC(t, c);
        Zrv[t * Hd + h * d + c] = BR(t, c);
      }
    p1.blockC[h] = MatrixXd();
    p1.blockR[h] = Eigen::MatrixXf();
    if (h % 16 == 15) release_free_memory();  // the blocks came from the heap: Z's copy reuses their pages
  }
  release_free_memory();
  std::vector<QVector> shift;
  if (opt.skip && res.class_labels)
    for (std::size_t t = 0; t < Tstar; ++t) shift.push_back(QVector(ds.queries.row(t), ds.queries.row(t) + dout));
  std::optional<StageTimes::Scope> readout_clock(std::in_place, opt.timings, "step2 read-out");
  Step2Readout s2 = step2_readout(Zcv, Zrv, Tstar, Hd, Yt, res.class_labels ? &cls : nullptr, shift, &p1.gram);
  const MatrixXd& M = s2.M;
  QMatrix Mq(Hd, dout);
  for (std::size_t i = 0; i < Hd; ++i)
    for (std::size_t c = 0; c < dout; ++c) Mq(i, c) = rational_from_double(M(i, c));
  res.max_label_error = s2.max_error;
  res.min_class_margin = res.class_labels ? s2.min_margin : 0;
  // The label rule the certificate must pass: the engine's tolerance and the checker's 2^-20 max(1, |y|)
  // (one bound for all outputs here; the escalation below applies it per output).
  const Rational rule = std::min(opt.tolerance, Rational(1, 1 << 20));
  res.labels_ok = res.class_labels ? s2.min_margin > 0 : rational_from_double(s2.max_error) <= rule;
  readout_clock.reset();
  if (!res.labels_ok) {
    // rank(Z) = T* is certified, so an exact read-out exists: a failed double bound is a precision
    // matter (an ill-conditioned Z), never evidence against the labels. Escalate before any verdict.
    StageTimes::Scope clock(opt.timings, "step2 read-out (MPFR)");
    std::vector<std::size_t> rows(Tstar);
    for (std::size_t t = 0; t < Tstar; ++t) rows[t] = t;
    ReadoutEscalation esc = step2_readout_escalate(ds, rows, res.weights.heads, Y, Yt, res.class_labels ? &cls : nullptr,
                                                   shift, opt.tolerance);
    if (esc.ok) {
      step2_adopt_escalation(res, esc, Mq);
      say("Step 2: the double read-out's bound (" + fmt(s2.max_error) + ") did not certify the labels; at " +
          std::to_string(esc.bits) + " bits (Z re-enclosed, M re-solved) it does.");
    } else {
      res.readout_undecided = "rank(Z) >= " + std::to_string(Tstar) + " is certified, so an exact read-out exists, but no " +
                              "rational read-out was certified within the label rule: " + esc.why;
    }
  }
  step2_factor_readout(res.weights, Mq, d, res.dv, dout);
  res.memorized = res.labels_ok && res.rank_Z_lower == Tstar;
  say(std::string("Step 2: read-out M solving Z M = Y") + (opt.skip ? " - e_{1..d_out} (skip connection, appendix C)" : "") +
      " written as W_V^h = M_h, W_O stacking identities, W_D selecting the first d_out coordinates; " +
      (res.class_labels ? "certified arg-max on every example (margin >= " + fmt(res.min_class_margin) + ")"
                        : "every label reproduced within " + fmt(res.max_label_error) + " <= tolerance " + fmtq(opt.tolerance)) +
      (res.labels_ok ? "." : " -- FAILED."));

  // ---- the certificate (theorem1_certificate.cpp) ----
  StageTimes::Scope cert_clock(opt.timings, "certificate assembly");
  res.certificate = theorem1_write_certificate(res, ds, Y, cls, opt.data_file, opt.data_digest);
  return res;
}

Theorem1Result theorem1_construct_accepted(const AttentionDataset& ds, Theorem1Options opt,
                                           const std::function<bool(Theorem1Result&)>& accepted) {
  for (;;) {
    Theorem1Result res = theorem1_construct(ds, opt);
    if (res.certificate.is_null() || accepted(res)) return res;
    if (opt.scale != "network" || !res.c_network) return res;
    opt.c_network_above = *res.c_network;  // escalate: the next grid value that certifies
  }
}

// ---- data generation (uniform random rationals m/64, like the paper's uniform data) -----------------
AttentionDataset generate_attention_dataset(Choice<AttentionDataKind> kind, std::size_t T, std::size_t n, std::size_t d,
                                            std::optional<std::size_t> classes, std::uint64_t seed,
                                            std::optional<std::size_t> kruskal) {
  if (T == 0 || n == 0 || d == 0) throw InputError("generate: expected --T, --n, --d >= 1");
  std::mt19937_64 rng(seed);
  const int den = kind == AttentionDataKind::general ? 4096 : 64;
  std::uniform_int_distribution<int> u(-den, den);
  auto draw = [&]() { Rational q(u(rng), den); q.canonicalize(); return q; };
  auto context = [&]() {
    for (int attempt = 0;; ++attempt) {
      QMatrix E(n, d);
      for (auto& x : E.data()) x = draw();
      if (n > d || qmat_rows_independent(E) || attempt > 100) return E;  // Assumption 2 when n <= d
    }
  };
  AttentionDataset ds;
  QMatrix shared;
  if (kind == AttentionDataKind::shared) shared = context();
  for (std::size_t t = 0; t < T; ++t) ds.contexts.push_back(kind == AttentionDataKind::shared ? shared : context());
  ds.queries = QMatrix(T, d);
  for (auto& x : ds.queries.data()) x = draw();
  if (kruskal) ds.queries = queries_with_kruskal_rank(T, d, *kruskal, rng, den);
  if (classes) {
    std::uniform_int_distribution<std::size_t> uc(0, *classes - 1);
    QMatrix L(T, 1);
    for (std::size_t t = 0; t < T; ++t) L(t, 0) = Rational(static_cast<long>(uc(rng)));
    ds.labels = L;
    ds.class_labels = true;
  } else {
    QMatrix L(T, 1);
    for (std::size_t t = 0; t < T; ++t) L(t, 0) = draw();
    ds.labels = L;
  }
  return ds;
}

}  // namespace memcert::mahdavi24
