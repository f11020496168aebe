#pragma once
// Test-side exact linear algebra over Q, written independently of both the checker and the engine
// (plain Gauss-Jordan on mpq_class), used to build certificates the checker must accept.
#include <gmpxx.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace brute_q {

using QMat = std::vector<std::vector<mpq_class>>;

// Reduced row echelon form; `pivots` receives the pivot column of each non-zero row.
inline QMat rref(QMat a, std::vector<std::size_t>& pivots) {
  pivots.clear();
  const std::size_t m = a.size(), n = m ? a[0].size() : 0;
  std::size_t r = 0;
  for (std::size_t c = 0; c < n && r < m; ++c) {
    std::size_t p = r;
    while (p < m && a[p][c] == 0) ++p;
    if (p == m) continue;
    std::swap(a[p], a[r]);
    mpq_class inv = 1 / a[r][c];
    for (auto& x : a[r]) x *= inv;
    for (std::size_t i = 0; i < m; ++i) {
      if (i == r || a[i][c] == 0) continue;
      mpq_class f = a[i][c];
      for (std::size_t j = 0; j < n; ++j) a[i][j] -= f * a[r][j];
    }
    pivots.push_back(c);
    ++r;
  }
  return a;
}

inline std::size_t rank(const QMat& a) {
  std::vector<std::size_t> p;
  rref(a, p);
  return p.size();
}

inline QMat select_rows(const QMat& a, const std::vector<std::size_t>& rows) {
  QMat s;
  for (auto i : rows) s.push_back(a[i]);
  return s;
}

// Determinant by Gaussian elimination over Q.
inline mpq_class det(QMat a) {
  const std::size_t n = a.size();
  mpq_class d = 1;
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    while (p < n && a[p][c] == 0) ++p;
    if (p == n) return 0;
    if (p != c) { std::swap(a[p], a[c]); d = -d; }
    d *= a[c][c];
    for (std::size_t r = c + 1; r < n; ++r) {
      mpq_class f = a[r][c] / a[c][c];
      for (std::size_t j = c; j < n; ++j) a[r][j] -= f * a[c][j];
    }
  }
  return d;
}

// Sylvester's criterion: every leading principal minor > 0.
inline bool positive_definite(const QMat& a) {
  for (std::size_t k = 1; k <= a.size(); ++k) {
    QMat lead(k, std::vector<mpq_class>(k));
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) lead[i][j] = a[i][j];
    if (det(lead) <= 0) return false;
  }
  return true;
}

// Greedy maximal independent set of rows (in index order).
inline std::vector<std::size_t> independent_rows(const QMat& a) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < a.size(); ++i) {
    rows.push_back(i);
    if (rank(select_rows(a, rows)) < rows.size()) rows.pop_back();
  }
  return rows;
}

// Basis of {x : A x = 0}: one vector per free column f, equal to 1 at f and 0 at the other free columns.
inline QMat kernel(const QMat& a, std::size_t n, std::vector<std::size_t>& free_cols) {
  std::vector<std::size_t> piv;
  QMat r = rref(a, piv);
  free_cols.clear();
  QMat basis;
  for (std::size_t f = 0; f < n; ++f) {
    bool is_pivot = false;
    for (auto p : piv) is_pivot |= (p == f);
    if (is_pivot) continue;
    free_cols.push_back(f);
    std::vector<mpq_class> v(n, 0);
    v[f] = 1;
    for (std::size_t i = 0; i < piv.size(); ++i) v[piv[i]] = -r[i][f];
    basis.push_back(v);
  }
  return basis;
}

// Row i times the lcm of its denominators.
inline std::vector<mpz_class> scaled_row(const std::vector<mpq_class>& row) {
  mpz_class l = 1;
  for (const auto& x : row) l = lcm(l, mpz_class(x.get_den()));
  std::vector<mpz_class> z;
  for (const auto& x : row) z.push_back(mpz_class(x * l));
  return z;
}

inline bool prime_by_trial_division(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

// A random m x n matrix of rank <= r: (m x r)(r x n) with small integer factors, then row i divided
// by a random 1..4 so that row scaling is exercised.
inline QMat random_low_rank(std::mt19937_64& rng, std::size_t m, std::size_t n, std::size_t r) {
  auto small = [&rng] { return static_cast<long>(rng() % 7) - 3; };
  QMat u(m, std::vector<mpq_class>(r)), v(r, std::vector<mpq_class>(n));
  for (auto& row : u)
    for (auto& x : row) x = small();
  for (auto& row : v)
    for (auto& x : row) x = small();
  QMat a(m, std::vector<mpq_class>(n, 0));
  for (std::size_t i = 0; i < m; ++i) {
    mpq_class d(1, 1 + rng() % 4);
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t k = 0; k < r; ++k) a[i][j] += u[i][k] * v[k][j];
      a[i][j] *= d;
    }
  }
  return a;
}

}  // namespace brute_q
