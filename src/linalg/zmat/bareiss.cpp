#include "memcert/linalg/zmat/zmat.hpp"

#include <utility>

namespace memcert::detail {

Integer zmat_det_bareiss(ZMatrix a) {
  const std::size_t n = a.rows();
  if (n == 0) return 1;
  Integer prev = 1;
  int sign = 1;
  for (std::size_t k = 0; k + 1 < n + 1 && k < n; ++k) {
    if (a(k, k) == 0) {
      std::size_t piv = k + 1;
      while (piv < n && a(piv, k) == 0) ++piv;
      if (piv == n) return 0;
      for (std::size_t c = 0; c < n; ++c) std::swap(a(k, c), a(piv, c));
      sign = -sign;
    }
    for (std::size_t i = k + 1; i < n; ++i) {
      for (std::size_t j = k + 1; j < n; ++j) {
        a(i, j) = a(i, j) * a(k, k) - a(i, k) * a(k, j);
        mpz_divexact(a(i, j).get_mpz_t(), a(i, j).get_mpz_t(), prev.get_mpz_t());
      }
      a(i, k) = 0;
    }
    prev = a(k, k);
  }
  return sign * a(n - 1, n - 1);
}

std::optional<QMatrix> zmat_solve_bareiss(ZMatrix a, ZMatrix b) {
  const std::size_t n = a.rows(), nb = b.cols();
  Integer prev = 1;
  for (std::size_t k = 0; k < n; ++k) {
    if (a(k, k) == 0) {
      std::size_t piv = k + 1;
      while (piv < n && a(piv, k) == 0) ++piv;
      if (piv == n) return std::nullopt;
      for (std::size_t c = 0; c < n; ++c) std::swap(a(k, c), a(piv, c));
      for (std::size_t c = 0; c < nb; ++c) std::swap(b(k, c), b(piv, c));
    }
    const Integer& akk = a(k, k);
    for (std::size_t i = k + 1; i < n; ++i) {
      const Integer aik = a(i, k);
      for (std::size_t j = k + 1; j < n; ++j) {
        a(i, j) = a(i, j) * akk - aik * a(k, j);
        mpz_divexact(a(i, j).get_mpz_t(), a(i, j).get_mpz_t(), prev.get_mpz_t());
      }
      for (std::size_t j = 0; j < nb; ++j) {
        b(i, j) = b(i, j) * akk - aik * b(k, j);
        mpz_divexact(b(i, j).get_mpz_t(), b(i, j).get_mpz_t(), prev.get_mpz_t());
      }
      a(i, k) = 0;
    }
    prev = akk;
  }
  // Back substitution over Q on the (now upper-triangular) system.
  QMatrix x(n, nb);
  for (std::size_t j = 0; j < nb; ++j)
    for (std::size_t ii = n; ii-- > 0;) {
      Rational s = b(ii, j);
      for (std::size_t c = ii + 1; c < n; ++c) s -= a(ii, c) * x(c, j);
      x(ii, j) = s / a(ii, ii);
    }
  return x;
}

bool zmat_leading_minors_positive(ZMatrix a, std::vector<Integer>* minors) {
  const std::size_t n = a.rows();
  Integer prev = 1;
  for (std::size_t k = 0; k < n; ++k) {
    if (minors) minors->push_back(a(k, k));
    if (sgn(a(k, k)) <= 0) return false;
    for (std::size_t i = k + 1; i < n; ++i) {
      for (std::size_t j = k + 1; j < n; ++j) {
        a(i, j) = a(i, j) * a(k, k) - a(i, k) * a(k, j);
        mpz_divexact(a(i, j).get_mpz_t(), a(i, j).get_mpz_t(), prev.get_mpz_t());
      }
    }
    prev = a(k, k);
  }
  return true;
}

}  // namespace memcert::detail
