// kind "enclosure-rank-rump": rank(A) >= k for EVERY A with |A - C| <= R entrywise, re-derived in IEEE
// double with rigorous error bounds (the fast path's "double-rump" tier). Same mathematics as
// kind "enclosure-rank" (Lemma 5 / Weyl) except that positive definiteness of C_S C_S^T - mu I is
// proved by Rump's floating-point test (BIT 2006; INTLAB isspd) with docs/THEORY.md section 7's constants:
//   alpha_j = (j+2) u (j = 1..k, u = 2^-53), c >= sum_j alpha_j a_jj + ||rad||_2 + 6 k (k + max a_jj) eta
//   (eta = 2^-1074), A - cI formed rounding downward, Cholesky in round-to-nearest must complete.
// Here A = fl(G) - mu I (diagonal rounded downward) with G = C_S C_S^T, and rad bounds the Gram's
// rounding error: |fl(G)_ab - G_ab| <= gamma_n sum_j |c_aj||c_bj| + n eta <= gamma_n ||c_a|| ||c_b|| + n eta
// (any summation order), so ||rad||_2 <= gamma_n sum_a ||c_a||^2 + k n eta. Every bound is rounded
// upward by taking the next double after a round-to-nearest result (never changing the FPU mode).
// The checker recomputes everything itself with plain loops; it trusts only IEEE 754 round-to-nearest
// double arithmetic (+, -, *, /, sqrt), which this file assumes the platform provides (x86-64 SSE2;
// the project compiles with -ffp-contract=off so nothing is fused behind our back).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kinds/enclosure/enclosure_claim.hpp"
#include "kernel/float_kernels.hpp"  // up, dn: the next double above / below

namespace memcert_checker {

namespace {

const double kInf = std::numeric_limits<double>::infinity();
constexpr double kU = 0x1p-53;
constexpr double kEta = 0x1p-1074;

// The double with exactly the value q, if there is one.
bool exact_double(const mpq_class& q, double& out) {
  out = q.get_d();  // truncates; then compare exactly
  if (!std::isfinite(out)) return false;
  mpq_class back(out);
  return back == q;
}

}  // namespace

bool check_enclosure_rank_rump(const Value& cert, std::string& why) {
  EnclosureClaim e;
  if (!read_enclosure_claim(cert, "enclosure-rank-rump", e, why)) return false;
  const QMat& c = e.c;
  const std::size_t k = e.k, n = e.n;
  const std::vector<std::size_t>& s = e.s;
  double mud = 0;
  if (!exact_double(e.mu, mud)) { why = "mu: not exactly a double"; return false; }
  if (k == 0) return true;

  // The rows S of the centre, which must be doubles exactly.
  std::vector<double> cs(k * n);
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t j = 0; j < n; ++j)
      if (!exact_double(c[s[a]][j], cs[a * n + j])) {
        why = "centre.data[" + std::to_string(s[a]) + "][" + std::to_string(j) + "]: not exactly a double";
        return false;
      }
  const double nn = static_cast<double>(n), kk = static_cast<double>(k);

  // Gram in round-to-nearest (plain loops) and its error radius.
  std::vector<double> g(k * k, 0.0);
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t b = 0; b <= a; ++b) {
      double acc = 0;
      const double* x = &cs[a * n];
      const double* y = &cs[b * n];
      for (std::size_t j = 0; j < n; ++j) acc += x[j] * y[j];
      g[a * k + b] = acc;
    }
  const double nu = up(nn * kU);
  if (!(nu < 0.5)) { why = "rump: dimension too large for gamma_n"; return false; }
  const double gam = up(nu / dn(1.0 - nu));
  const double denom = dn(1.0 - gam);
  double total = 0;
  for (std::size_t a = 0; a < k; ++a) {
    double sq = 0;
    for (std::size_t j = 0; j < n; ++j) sq += cs[a * n + j] * cs[a * n + j];
    total = up(total + up(up(sq + up(nn * kEta)) / denom));
  }
  const double rad = up(up(gam * total) + up(up(kk * nn) * kEta));
  if (!std::isfinite(rad)) { why = "rump: Gram error bound not finite"; return false; }

  // A = fl(G) - mu I, diagonal rounded downward; Rump's shift c; A - cI rounded downward.
  double sum = 0, dmax = 0;
  for (std::size_t j = 0; j < k; ++j) {
    double& d = g[j * k + j];
    d = dn(d - mud);
    if (!(d > 0)) { why = "rump: diagonal of G - mu I not positive"; return false; }
    const double alpha = up((static_cast<double>(j + 1) + 2.0) * kU);
    sum = up(sum + up(alpha * d));
    dmax = std::max(dmax, d);
  }
  const double tail = up(up(6.0 * kk * up(kk + dmax)) * kEta);
  const double shift = up(up(sum + rad) + tail);
  if (!std::isfinite(shift)) { why = "rump: shift not finite"; return false; }
  for (std::size_t j = 0; j < k; ++j) g[j * k + j] = dn(g[j * k + j] - shift);

  // Cholesky (lower, round-to-nearest); it must complete with positive pivots.
  for (std::size_t j = 0; j < k; ++j) {
    double d = g[j * k + j];
    for (std::size_t l = 0; l < j; ++l) d -= g[j * k + l] * g[j * k + l];
    if (!(d > 0) || !std::isfinite(d)) {
      why = "rump: Cholesky of G - mu I - cI broke down at pivot " + std::to_string(j);
      return false;
    }
    d = std::sqrt(d);
    g[j * k + j] = d;
    for (std::size_t i = j + 1; i < k; ++i) {
      double t = g[i * k + j];
      for (std::size_t l = 0; l < j; ++l) t -= g[i * k + l] * g[j * k + l];
      g[i * k + j] = t / d;
    }
  }
  return true;
}

}  // namespace memcert_checker
