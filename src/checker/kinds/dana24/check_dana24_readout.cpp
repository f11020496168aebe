// kind "dana24", optional object "readout" (docs/papers/dana24.md section 3, step 6c): the exact statement of the
// read-out solve. The construction solved [M, W_O] F~ = E* for the dyadic feature centre F~; with the
// dyadic solution, the targets it reaches on F~ are E* := [M, W_O] F~ exactly. This file recomputes E*
// with integers from M, F~ and the certificate's own W_O, and the margin of W_U E*(t) exactly; nothing is
// taken from the certificate but the data. The link to the model (max_t ||E(t) - E*(t)||_inf) is checked
// by check_dana24.cpp with the forward pass.
#include <algorithm>
#include <cmath>

#include "kinds/dana24/dana24_forward.hpp"
#include "kernel/float_kernels.hpp"
#include "kernel/exact.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {
namespace {

std::string readout_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// A rows x cols array of arrays of exact numbers into `out`.
bool read_readout_rows(const Value* v, const std::string& where, std::size_t rows, std::size_t cols, QMat& out,
                       std::string& why) {
  if (!v || v->type != json::Type::Array || v->size() != rows) {
    why = where + ": expected " + std::to_string(rows) + " rows of " + std::to_string(cols) + " exact numbers";
    return false;
  }
  out.assign(rows, QRow());
  for (std::size_t i = 0; i < rows; ++i)
    if (!read_rational_vector(*v->at(i), readout_at(where, i), cols, out[i], why)) return false;
  return true;
}

// q in [c - r, c + r] for x = q.get_d() (truncated toward 0, so within one ulp of q): radius 0 when x is q
// exactly (no subnormal radius around a zero, which would slow every product with it).
void enclose_double(double x, const mpq_class& q, double& c, double& r) {
  if (std::isfinite(x) && cmp(q, x) == 0) c = x, r = 0;
  else midrad(dn(x), up(x), c, r);
}

}  // namespace

bool dana24_readout_exact_check(const Value& readout, const Value& weights, const Dana24Shape& sh,
                                const std::vector<std::size_t>& next, std::vector<QRow>& estar,
                                mpq_class& deviation, std::string& why) {
  const std::size_t d = sh.d, m = sh.d + sh.H * sh.dh, T = next.size(), N = sh.N;
  if (readout.type != json::Type::Object) {
    why = "readout: expected an object";
    return false;
  }
  QMat M, F, WU;
  if (!read_readout_rows(readout.find("M"), "readout.M", d, d, M, why)) return false;
  if (!read_readout_rows(readout.find("features_centre"), "readout.features_centre", T, m, F, why)) return false;
  if (!read_readout_rows(weights.find("WU"), "weights.WU", N, d, WU, why)) return false;
  // X = [M, W_O]: row i is M's row i followed by row i of every W_O^h (weights.WO[h][i][0..dh)).
  const Value* wo = weights.find("WO");
  if (!wo || wo->type != json::Type::Array || wo->size() != sh.H) {
    why = "weights.WO: expected H = " + std::to_string(sh.H) + " matrices";
    return false;
  }
  QMat X(d, QRow());
  for (std::size_t h = 0; h < sh.H; ++h) {
    QMat block;
    const json::Item block_rows = wo->at(h);
    if (!read_readout_rows(&*block_rows, readout_at("weights.WO", h), d, sh.dh, block, why)) return false;
    for (std::size_t i = 0; i < d; ++i) X[i].insert(X[i].end(), block[i].begin(), block[i].end());
  }
  for (std::size_t i = 0; i < d; ++i) X[i].insert(X[i].begin(), M[i].begin(), M[i].end());
  mpq_class claimed;
  const Value* v;
  if (!(v = member(readout, "readout", "targets_min_margin", json::Type::String, why)) ||
      !read_rational(*v, "readout.targets_min_margin", claimed, why))
    return false;
  if (sgn(claimed) <= 0) {
    why = "readout.targets_min_margin: expected a positive margin (a strict arg-max of the exact targets)";
    return false;
  }
  if (!(v = member(readout, "readout", "encoder_deviation", json::Type::String, why)) ||
      !read_rational(*v, "readout.encoder_deviation", deviation, why))
    return false;
  if (sgn(deviation) < 0) {
    why = "readout.encoder_deviation: expected a non-negative bound";
    return false;
  }
  // det M != 0, exactly (the change of basis of step 7 needs M invertible).
  if (sgn(det_bareiss(scale_rows_to_integers(M))) == 0) {
    why = "readout.M: singular (det M = 0, exactly)";
    return false;
  }
  // Integers: X row i = Xz[i] / fx[i]; the common denominator of the rows is LX. W_U = Wz / fw.
  std::vector<ZRow> Xz(d);
  std::vector<mpz_class> fx(d);
  mpz_class LX = 1;
  for (std::size_t i = 0; i < d; ++i) {
    Xz[i] = scale_row_to_integers(X[i], &fx[i]);
    mpz_lcm(LX.get_mpz_t(), LX.get_mpz_t(), fx[i].get_mpz_t());
  }
  QRow wflat;
  wflat.reserve(N * d);
  for (const QRow& r : WU) wflat.insert(wflat.end(), r.begin(), r.end());
  mpz_class fw;
  const ZRow Wz = scale_row_to_integers(wflat, &fw);
  // W_U^T (d x N) as double enclosures [w rounded down, w rounded up] in midpoint-radius form: the logits'
  // filter below, which only chooses which rivals' logits are computed exactly.
  std::vector<double> wut_c(d * N), wut_r(d * N);
  bool wut_finite = true;
  for (std::size_t j = 0; j < N; ++j)
    for (std::size_t i = 0; i < d; ++i) {
      const double x = WU[j][i].get_d();
      wut_finite = wut_finite && std::isfinite(x);
      enclose_double(x, WU[j][i], wut_c[i * N + j], wut_r[i * N + j]);
    }
  estar.assign(T, QRow(d));
  // One sequence per task on the checker's threads; the first failing sequence in order is reported.
  std::vector<std::string> failure(T);
  parallel_for(T, checker_threads(), [&](std::size_t t, unsigned) {
    ZRow Ez(d);
    mpz_class L, Lg, best, ff;
    const ZRow Fz = scale_row_to_integers(F[t], &ff);
    // E*(t)_i = (Xz[i] . Fz) / (fx[i] ff), put over LX ff.
    for (std::size_t i = 0; i < d; ++i) {
      Ez[i] = 0;
      for (std::size_t k = 0; k < m; ++k)
        if (sgn(Fz[k]) != 0 && sgn(Xz[i][k]) != 0) mpz_addmul(Ez[i].get_mpz_t(), Xz[i][k].get_mpz_t(), Fz[k].get_mpz_t());
      estar[t][i] = mpq_class(Ez[i], fx[i] * ff);
      estar[t][i].canonicalize();
      Ez[i] *= LX / fx[i];
    }
    // Logits times fw LX ff: L_j = Wz[j] . Ez.
    auto logit = [&](std::size_t j, mpz_class& out) {
      out = 0;
      for (std::size_t i = 0; i < d; ++i)
        if (sgn(Wz[j * d + i]) != 0) mpz_addmul(out.get_mpz_t(), Wz[j * d + i].get_mpz_t(), Ez[i].get_mpz_t());
    };
    logit(next[t], Lg);
    // The largest rival logit, exactly. A rival whose logit is enclosed (doubles, rigorous) below another
    // rival's lower bound cannot be the largest, so only the others are computed exactly; without finite
    // enclosures, every rival is.
    std::vector<double> ec(d), er(d), lc(N), lr(N);
    bool filtered = wut_finite;
    for (std::size_t i = 0; i < d && filtered; ++i) {
      const double x = estar[t][i].get_d();
      filtered = std::isfinite(x);
      if (filtered) enclose_double(x, estar[t][i], ec[i], er[i]);
    }
    filtered = filtered && mix_enclosure(wut_c.data(), wut_r.data(), ec.data(), er.data(), d, N, lc.data(), lr.data());
    double floor_lo = -INFINITY;
    if (filtered)
      for (std::size_t j = 0; j < N; ++j)
        if (j != next[t]) floor_lo = std::max(floor_lo, dn(lc[j] - lr[j]));
    bool any = false;
    for (std::size_t j = 0; j < N; ++j) {
      if (j == next[t]) continue;
      if (filtered && up(lc[j] + lr[j]) < floor_lo) continue;
      logit(j, L);
      if (!any || L > best) best = L, any = true;
    }
    if (!any) return;  // N = 1: nothing to beat
    mpq_class margin(Lg - best, fw * LX * ff);
    margin.canonicalize();
    if (margin < claimed)
      failure[t] = readout_at("sequences", t) + ": the exact targets E* = [M, W_O] F~ give next token " +
                   std::to_string(next[t]) + " a margin " + (sgn(margin) > 0 ? "below" : "that is not positive, below") +
                   " readout.targets_min_margin";
  });
  for (std::size_t t = 0; t < T; ++t)
    if (!failure[t].empty()) {
      why = failure[t];
      return false;
    }
  return true;
}

}  // namespace memcert_checker
