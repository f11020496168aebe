#pragma once
// Independent reference methods for tests: textbook Gauss-Jordan over Q (no modular arithmetic, no
// fraction-free tricks), cofactor determinants, random matrix generators. Deliberately naive.
#include <random>

#include "memcert/linalg/matrix.hpp"

namespace memcert::testref {

// Reduced row echelon form over Q; returns the rank.
inline std::size_t rref_rank(QMatrix a) {
  std::size_t r = 0;
  for (std::size_t j = 0; j < a.cols() && r < a.rows(); ++j) {
    std::size_t piv = r;
    while (piv < a.rows() && a(piv, j) == 0) ++piv;
    if (piv == a.rows()) continue;
    for (std::size_t c = 0; c < a.cols(); ++c) std::swap(a(r, c), a(piv, c));
    for (std::size_t i = 0; i < a.rows(); ++i) {
      if (i == r || a(i, j) == 0) continue;
      Rational f = a(i, j) / a(r, j);
      for (std::size_t c = j; c < a.cols(); ++c) a(i, c) -= f * a(r, c);
    }
    ++r;
  }
  return r;
}

// Laplace expansion along the first row (tiny matrices only).
inline Rational cofactor_det(const QMatrix& a) {
  const std::size_t n = a.rows();
  if (n == 0) return 1;
  if (n == 1) return a(0, 0);
  Rational s = 0;
  for (std::size_t j = 0; j < n; ++j) {
    QMatrix m(n - 1, n - 1);
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t c = 0, cc = 0; c < n; ++c)
        if (c != j) m(i - 1, cc++) = a(i, c);
    Rational term = a(0, j) * cofactor_det(m);
    s += (j % 2 == 0) ? term : Rational(-term);
  }
  return s;
}

inline Rational random_rational(std::mt19937_64& rng, int num_bits, int den_bits) {
  std::uniform_int_distribution<long> u(-(1L << num_bits), (1L << num_bits));
  std::uniform_int_distribution<long> v(1, 1L << den_bits);
  Rational q(u(rng), v(rng));
  q.canonicalize();
  return q;
}

inline QMatrix random_qmatrix(std::mt19937_64& rng, std::size_t m, std::size_t n, int num_bits = 6,
                              int den_bits = 0) {
  QMatrix a(m, n);
  for (auto& x : a.data()) x = random_rational(rng, num_bits, den_bits);
  return a;
}

// A random m x n matrix of rank <= k: product of random m x k and k x n factors.
inline QMatrix random_low_rank(std::mt19937_64& rng, std::size_t m, std::size_t n, std::size_t k,
                               int num_bits = 4, int den_bits = 0) {
  return mat_mul(random_qmatrix(rng, m, k, num_bits, den_bits), random_qmatrix(rng, k, n, num_bits, den_bits));
}

}  // namespace memcert::testref
