// Positive definiteness: interval LDL^T first, exact LDL^T when the intervals cannot decide.
#include "kernel/definite.hpp"

#include <utility>

#include "kernel/interval.hpp"

namespace memcert_checker {

int positive_definite_interval(const QMat& a, long precision_bits) {
  const std::size_t n = a.size();
  for (const auto& r : a)
    if (r.size() != n) return -1;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (a[i][j] != a[j][i]) return -1;
  std::vector<std::vector<Interval>> lower(n);
  for (std::size_t i = 0; i < n; ++i) {
    lower[i].reserve(i + 1);
    for (std::size_t j = 0; j <= i; ++j) lower[i].emplace_back(a[i][j], precision_bits);
  }
  return positive_definite_enclosed(lower);
}

int positive_definite_enclosed(const std::vector<std::vector<Interval>>& a) {
  const std::size_t n = a.size();
  // Column by column: w_ij = a_ij - sum_{k<j} w_ik l_jk for i >= j; d_j = w_jj; l_ij = w_ij / d_j.
  // (The exact recurrence of A = L D L^T with unit lower-triangular L.)
  // w and l as packed lower triangles: entry (i, k), k <= i, at i (i + 1) / 2 + k.
  const auto at = [](std::size_t i, std::size_t k) { return i * (i + 1) / 2 + k; };
  std::vector<Interval> w(n * (n + 1) / 2), l(n * (n + 1) / 2);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = j; i < n; ++i) {
      Interval s = a[i][j];
      for (std::size_t k = 0; k < j; ++k) s = s - w[at(i, k)] * l[at(j, k)];
      w[at(i, j)] = std::move(s);
    }
    const Interval& d = w[at(j, j)];
    if (!d.is_positive()) return d.is_valid() && mpfr_sgn(d.hi()) <= 0 ? -1 : 0;
    for (std::size_t i = j; i < n; ++i) l[at(i, j)] = w[at(i, j)] / d;
  }
  return 1;
}

bool positive_definite(const QMat& a) {
  int v = positive_definite_interval(a, 256);
  if (v != 0) return v > 0;
  return positive_definite_ldlt(a);
}

// The sum enclosed in 256-bit intervals decides unless it contains mu; then the exact sum (whose
// denominators grow with every term).
bool sum_of_squares_below(const QMat& R, const mpq_class& mu) {
  Interval sum(256);
  for (const QRow& row : R)
    for (const mpq_class& r : row) {
      const Interval e(r, 256);
      sum = sum + e * e;
    }
  if (sum.upper_below(mu)) return true;
  if (sum.is_valid() && mpfr_cmp_q(sum.lo(), mu.get_mpq_t()) >= 0) return false;
  mpq_class rf = 0;
  for (const QRow& row : R)
    for (const mpq_class& r : row) rf += r * r;
  return rf < mu;
}

// The entries enclosed in 256-bit intervals (m^2 n / 2 interval products) and the interval LDL^T decide;
// when they cannot, the exact Gram matrix and positive_definite.
bool gram_minus_shift_definite(const QMat& C, const mpq_class& mu) {
  const std::size_t m = C.size(), n = m ? C[0].size() : 0;
  std::vector<std::vector<Interval>> Ci(m), G(m);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t l = 0; l < n; ++l) Ci[i].emplace_back(C[i][l], 256);
  const Interval mu_i(mu, 256);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      Interval s(256);
      for (std::size_t l = 0; l < n; ++l) s = s + Ci[i][l] * Ci[j][l];
      G[i].push_back(i == j ? s - mu_i : s);
    }
  if (const int v = positive_definite_enclosed(G); v != 0) return v > 0;
  QMat E(m, QRow(m));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      mpq_class s = 0;
      for (std::size_t l = 0; l < n; ++l) s += C[i][l] * C[j][l];
      E[i][j] = E[j][i] = s;
    }
  for (std::size_t i = 0; i < m; ++i) E[i][i] -= mu;
  return positive_definite(E);
}

}  // namespace memcert_checker
