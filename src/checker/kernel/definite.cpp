// Positive definiteness: interval LDL^T first, exact LDL^T when the intervals cannot decide.
#include "kernel/definite.hpp"

#include "kernel/interval.hpp"

namespace memcert_checker {

int positive_definite_interval(const QMat& a, long precision_bits) {
  const std::size_t n = a.size();
  for (const auto& r : a)
    if (r.size() != n) return -1;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (a[i][j] != a[j][i]) return -1;
  // Column by column: w_ij = a_ij - sum_{k<j} w_ik l_jk for i >= j; d_j = w_jj; l_ij = w_ij / d_j.
  // (The exact recurrence of A = L D L^T with unit lower-triangular L.)
  const mpfr_prec_t prec = precision_bits;
  std::vector<std::vector<Interval>> w(n), l(n);
  for (std::size_t i = 0; i < n; ++i) {
    w[i].reserve(i + 1);
    l[i].reserve(i + 1);
  }
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = j; i < n; ++i) {
      Interval s(a[i][j], prec);
      for (std::size_t k = 0; k < j; ++k) s = s - w[i][k] * l[j][k];
      w[i].push_back(s);
    }
    const Interval& d = w[j][j];
    if (!d.is_positive()) return d.is_valid() && mpfr_sgn(d.hi()) <= 0 ? -1 : 0;
    for (std::size_t i = j; i < n; ++i) l[i].push_back(w[i][j] / d);
  }
  return 1;
}

bool positive_definite(const QMat& a) {
  int v = positive_definite_interval(a, 256);
  if (v != 0) return v > 0;
  return positive_definite_ldlt(a);
}

}  // namespace memcert_checker
