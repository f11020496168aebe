// Step 2's read-out at growing MPFR precision (docs/THEORY.md section 4, item 7): used when the double
// read-out's rigorous bound does not certify the labels. With rank(Z) = T certified an exact read-out
// exists, so such a failure says only that the double enclosure of Z or the double solve was too coarse
// for an ill-conditioned Z (a saturating scale close to one that merges rows of Z).
#include <algorithm>
#include <cmath>

#include "memcert/data/dataset.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/numeric/mpfr_array.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/parallel.hpp"
#include "z_enclosure.hpp"

namespace memcert::mahdavi24 {

namespace {

// One level: Z enclosed at `prec` bits, M solved at `prec` bits, the labels checked rigorously.
ReadoutEscalation escalate_at(const AttentionDataset& ds, const std::vector<std::size_t>& rows,
                              const std::vector<MhaHead>& heads, const QMatrix& Y, const QMatrix& Yt,
                              const std::vector<long>* cls, const std::vector<QVector>& shift,
                              const Rational& tolerance, mpfr_prec_t prec) {
  const std::size_t T = rows.size(), H = heads.size(), d = ds.d(), Hd = H * d, dout = Yt.cols();
  ReadoutEscalation out;
  out.bits = prec;
  // (a) Z = centre +- radius at prec bits, from the exact logits (softmax and mix as MPFR intervals).
  MpfrArray Zc(T * Hd, prec), Zr(T * Hd, prec);
  parallel_for(T, mpfr_threads(), [&](std::size_t i) {
    Interval::PrecisionScope scope(prec + 16);
    const std::size_t t = rows[i];
    const QMatrix E = attention_context(ds, t);
    const QVector e(ds.queries.row(t), ds.queries.row(t) + d);
    const std::size_t n = E.rows();
    mpfr_t lo, hi;
    mpfr_inits2(prec, lo, hi, (mpfr_ptr)0);
    for (std::size_t h = 0; h < H; ++h) {
      const std::vector<Interval> alpha = softmax_enclosure(mha_logits_exact(E, heads[h].WK, heads[h].WQ, e));
      for (std::size_t k = 0; k < d; ++k) {
        Interval p;
        for (std::size_t j = 0; j < n; ++j)
          if (E(j, k) != 0) p += Interval(E(j, k)) * alpha[j];
        mpfr_set(lo, p.lo(), MPFR_RNDD);
        mpfr_set(hi, p.hi(), MPFR_RNDU);
        mpfr_ptr c = Zc[i * Hd + h * d + k], r = Zr[i * Hd + h * d + k];
        mpfr_add(c, lo, hi, MPFR_RNDN);
        mpfr_div_2ui(c, c, 1, MPFR_RNDN);
        mpfr_sub(r, hi, c, MPFR_RNDU);  // the radius covers both sides of the rounded centre
        mpfr_sub(lo, c, lo, MPFR_RNDU);
        mpfr_max(r, r, lo, MPFR_RNDU);
      }
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
  });
  // (b) G = Zc Zc^T and its Cholesky factor L (lower, in place), at prec bits (an estimate: (d) is the proof).
  MpfrArray G(T * T, prec);
  parallel_for(T, mpfr_threads(), [&](std::size_t i) {
    for (std::size_t j = 0; j <= i; ++j) {
      mpfr_ptr g = G[i * T + j];
      for (std::size_t k = 0; k < Hd; ++k) mpfr_fma(g, Zc[i * Hd + k], Zc[j * Hd + k], g, MPFR_RNDN);
    }
  });
  mpfr_t s;
  mpfr_init2(s, prec);
  for (std::size_t j = 0; j < T; ++j) {
    mpfr_set(s, G[j * T + j], MPFR_RNDN);
    for (std::size_t k = 0; k < j; ++k) mpfr_fms(s, G[j * T + k], G[j * T + k], s, MPFR_RNDN), mpfr_neg(s, s, MPFR_RNDN);
    if (!(mpfr_sgn(s) > 0)) {
      mpfr_clear(s);
      out.why = "the Gram matrix of Z is not positive definite at " + std::to_string(prec) + " bits";
      return out;
    }
    mpfr_sqrt(G[j * T + j], s, MPFR_RNDN);
    parallel_for(T - j - 1, mpfr_threads(), [&](std::size_t ii) {
      const std::size_t i = j + 1 + ii;
      mpfr_ptr g = G[i * T + j];
      for (std::size_t k = 0; k < j; ++k) {
        mpfr_neg(g, g, MPFR_RNDN);
        mpfr_fma(g, G[i * T + k], G[j * T + k], g, MPFR_RNDN);
        mpfr_neg(g, g, MPFR_RNDN);
      }
      mpfr_div(g, g, G[j * T + j], MPFR_RNDN);
    });
  }
  // (c) M = Zc^T G^{-1} Yt, column by column (prec-bit numbers: M is exactly what they hold).
  MpfrArray M(Hd * dout, prec), x(T, prec);
  for (std::size_t c = 0; c < dout; ++c) {
    for (std::size_t i = 0; i < T; ++i) {  // L z = y
      mpfr_set_q(s, Yt(i, c).get_mpq_t(), MPFR_RNDN);
      for (std::size_t k = 0; k < i; ++k) mpfr_fms(s, G[i * T + k], x[k], s, MPFR_RNDN), mpfr_neg(s, s, MPFR_RNDN);
      mpfr_div(x[i], s, G[i * T + i], MPFR_RNDN);
    }
    for (std::size_t ii = T; ii-- > 0;) {  // L^T x = z
      mpfr_set(s, x[ii], MPFR_RNDN);
      for (std::size_t k = ii + 1; k < T; ++k) mpfr_fms(s, G[k * T + ii], x[k], s, MPFR_RNDN), mpfr_neg(s, s, MPFR_RNDN);
      mpfr_div(x[ii], s, G[ii * T + ii], MPFR_RNDN);
    }
    parallel_for(Hd, mpfr_threads(), [&](std::size_t k) {
      mpfr_ptr m = M[k * dout + c];
      for (std::size_t i = 0; i < T; ++i) mpfr_fma(m, Zc[i * Hd + k], x[i], m, MPFR_RNDN);
    });
  }
  mpfr_clear(s);
  out.M = QMatrix(Hd, dout);
  for (std::size_t k = 0; k < Hd; ++k)
    for (std::size_t c = 0; c < dout; ++c) mpfr_get_q(out.M(k, c).get_mpq_t(), M[k * dout + c]);
  // (d) The rigorous check: y_hat = sum_k M_k [c_k +- r_k] (+ shift) with every product exact (2 prec bits)
  // and every sum rounded outward; real labels within min(tolerance, 2^-20 max(1, |y|)), class labels
  // with a positive arg-max margin.
  std::vector<double> worst(T, 0.0), margin(T, INFINITY);
  std::vector<char> ok(T, 1);
  const Rational rule(1, 1 << 20);
  parallel_for(T, mpfr_threads(), [&](std::size_t i) {
    mpfr_t lo, hi, rad, p, a, b;
    mpfr_inits2(2 * prec + 8, lo, hi, rad, p, a, b, (mpfr_ptr)0);
    std::vector<std::pair<double, double>> yh(dout);
    for (std::size_t c = 0; c < dout; ++c) {
      mpfr_set_zero(lo, 1);
      mpfr_set_zero(hi, 1);
      mpfr_set_zero(rad, 1);
      for (std::size_t k = 0; k < Hd; ++k) {
        mpfr_srcptr m = M[k * dout + c];
        if (mpfr_zero_p(m)) continue;
        mpfr_mul(p, m, Zc[i * Hd + k], MPFR_RNDN);  // exact: prec + prec bits
        mpfr_add(lo, lo, p, MPFR_RNDD);
        mpfr_add(hi, hi, p, MPFR_RNDU);
        mpfr_abs(a, m, MPFR_RNDN);
        mpfr_mul(p, a, Zr[i * Hd + k], MPFR_RNDU);
        mpfr_add(rad, rad, p, MPFR_RNDU);
      }
      mpfr_sub(lo, lo, rad, MPFR_RNDD);
      mpfr_add(hi, hi, rad, MPFR_RNDU);
      if (cls) {
        if (!shift.empty()) {
          mpfr_add_q(lo, lo, shift[i][c].get_mpq_t(), MPFR_RNDD);
          mpfr_add_q(hi, hi, shift[i][c].get_mpq_t(), MPFR_RNDU);
        }
        yh[c] = {mpfr_get_d(lo, MPFR_RNDD), mpfr_get_d(hi, MPFR_RNDU)};
      } else {
        const Rational& yl = Y(i, c);
        Rational tol = abs(yl) > 1 ? Rational(rule * abs(yl)) : rule;
        if (tolerance < tol) tol = tolerance;
        mpfr_sub_q(a, hi, Yt(i, c).get_mpq_t(), MPFR_RNDU);  // y_hat - y <= a
        mpfr_sub_q(b, lo, Yt(i, c).get_mpq_t(), MPFR_RNDD);  // y_hat - y >= b
        mpfr_neg(b, b, MPFR_RNDU);
        mpfr_max(a, a, b, MPFR_RNDU);
        if (!(mpfr_number_p(a) && mpfr_cmp_q(a, tol.get_mpq_t()) <= 0)) ok[i] = 0;
        worst[i] = std::max(worst[i], mpfr_get_d(a, MPFR_RNDU));
      }
    }
    if (cls) {
      const long yl = (*cls)[i];
      double best_other = -INFINITY;
      for (std::size_t c = 0; c < dout; ++c)
        if (long(c) != yl) best_other = std::max(best_other, yh[c].second);
      margin[i] = dout == 1 ? INFINITY : dbound::sub_dn(yh[yl].first, best_other);
      if (!(margin[i] > 0)) ok[i] = 0;
    }
    mpfr_clears(lo, hi, rad, p, a, b, (mpfr_ptr)0);
  });
  out.max_error = 0;
  out.min_margin = INFINITY;
  out.ok = true;
  for (std::size_t i = 0; i < T; ++i) {
    out.max_error = std::max(out.max_error, worst[i]);
    out.min_margin = std::min(out.min_margin, margin[i]);
    if (!ok[i]) {
      if (out.ok) out.why = "example " + std::to_string(rows[i]) + " not certified at " + std::to_string(prec) + " bits";
      out.ok = false;
    }
  }
  return out;
}

}  // namespace

double step2_escalation_cost(std::size_t T, std::size_t Hd, std::size_t n) {
  const double t = double(T), m = double(Hd);
  return t * t * m / 2 + t * t * t / 6 + t * m * (double(n) + 1);
}

void step2_adopt_escalation(Theorem1Result& res, ReadoutEscalation& esc, QMatrix& M) {
  M = std::move(esc.M);
  res.labels_ok = true;
  res.readout_bits = esc.bits;
  res.max_label_error = esc.max_error;
  res.min_class_margin = res.class_labels ? esc.min_margin : 0;
}

ReadoutEscalation step2_readout_escalate(const AttentionDataset& ds, const std::vector<std::size_t>& rows,
                                         const std::vector<MhaHead>& heads, const QMatrix& Y, const QMatrix& Yt,
                                         const std::vector<long>* cls, const std::vector<QVector>& shift,
                                         const Rational& tolerance) {
  const std::size_t Hd = heads.size() * ds.d();
  const double cost = step2_escalation_cost(rows.size(), Hd, ds.n());
  ReadoutEscalation last;
  if (cost > kStep2EscalationOps || double(rows.size()) * double(Hd) > kStep2EscalationEntries) {
    last.why = "the read-out at higher precision is over its budget (T = " + std::to_string(rows.size()) +
               ", H d = " + std::to_string(Hd) + ")";
    return last;
  }
  for (mpfr_prec_t prec : {128, 256, 512}) {
    last = escalate_at(ds, rows, heads, Y, Yt, cls, shift, tolerance, prec);
    if (last.ok) return last;
  }
  last.why = "not certified at 128, 256 or 512 bits (" + last.why + ")";
  return last;
}

}  // namespace memcert::mahdavi24
