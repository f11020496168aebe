// F_p arithmetic for the checker: primality, rank and determinant modulo a verified prime.
#include "kernel/modp.hpp"

#include <algorithm>
#include <utility>

namespace memcert_checker {

std::uint64_t ModP::pow(std::uint64_t a, std::uint64_t e) const {
  std::uint64_t r = 1 % p;
  a %= p;
  while (e) {
    if (e & 1) r = mul(r, a);
    a = mul(a, a);
    e >>= 1;
  }
  return r;
}

std::uint64_t ModP::reduce(const mpz_class& z) const {
  // mpz_fdiv_ui rounds toward -infinity, so the remainder is already in [0, p).
  static_assert(sizeof(unsigned long) == 8, "the checker assumes a 64-bit unsigned long");
  return mpz_fdiv_ui(z.get_mpz_t(), p);
}

bool is_prime_u64(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t q : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    if (n % q == 0) return n == q;
  }
  // n - 1 = d * 2^s with d odd. Arithmetic in 128 bits, so any 64-bit n works.
  std::uint64_t d = n - 1;
  int s = 0;
  while ((d & 1) == 0) { d >>= 1; ++s; }
  auto mulmod = [n](std::uint64_t a, std::uint64_t b) {
    return static_cast<std::uint64_t>(static_cast<u128>(a) * b % n);
  };
  // The first 12 primes as bases are deterministic for n < 3.3e24 (Sorenson & Webster 2015).
  for (std::uint64_t a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    std::uint64_t x = 1, b = a, e = d;
    while (e) {
      if (e & 1) x = mulmod(x, b);
      b = mulmod(b, b);
      e >>= 1;
    }
    if (x == 1 || x == n - 1) continue;
    bool witness = true;
    for (int r = 1; r < s && witness; ++r) {
      x = mulmod(x, x);
      if (x == n - 1) witness = false;
    }
    if (witness) return false;  // a proves n composite
  }
  return true;
}

ModMat reduce_mod(const std::vector<std::vector<mpz_class>>& a, const ModP& f) {
  ModMat r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    r[i].resize(a[i].size());
    for (std::size_t j = 0; j < a[i].size(); ++j) r[i][j] = f.reduce(a[i][j]);
  }
  return r;
}

namespace {
// Row-echelon elimination over F_p, any p <= kMaxPrime (the reference route). Returns the rank; `det` (if
// given, square input) receives the determinant: the product of the pivots, negated for each row swap.
std::size_t eliminate_u64(ModMat& a, const ModP& f, std::uint64_t* det) {
  const std::size_t m = a.size(), n = m ? a[0].size() : 0;
  std::size_t rank = 0;
  std::uint64_t dv = 1 % f.p;
  for (std::size_t c = 0; c < n && rank < m; ++c) {
    std::size_t piv = rank;
    while (piv < m && a[piv][c] == 0) ++piv;
    if (piv == m) { dv = 0; continue; }
    if (piv != rank) { std::swap(a[piv], a[rank]); dv = f.sub(0, dv); }
    dv = f.mul(dv, a[rank][c]);
    const std::uint64_t inv = f.inv(a[rank][c]);
    const auto& prow = a[rank];
    for (std::size_t r = rank + 1; r < m; ++r) {
      if (a[r][c] == 0) continue;
      const std::uint64_t factor = f.sub(0, f.mul(a[r][c], inv));  // row_r += factor * pivot row
      auto& row = a[r];
      for (std::size_t j = c; j < n; ++j) row[j] = f.add(row[j], f.mul(factor, prow[j]));
    }
    ++rank;
  }
  if (det) *det = (rank == m && m == n) ? dv : 0;
  return rank;
}

std::size_t eliminate(ModMat& a, const ModP& f, std::uint64_t* det) {
  if (f.p < kDensePrimeLimit) {
    const std::size_t m = a.size(), n = m ? a[0].size() : 0, ld = dense_stride(n);
    std::vector<double> w(m * ld, 0.0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) w[i * ld + j] = static_cast<double>(a[i][j] % f.p);
    return rank_mod_p_dense(w.data(), m, n, ld, f.p, det, 1);
  }
  return eliminate_u64(a, f, det);
}
}  // namespace

std::size_t rank_mod_p_reference(ModMat a, const ModP& f) { return eliminate_u64(a, f, nullptr); }

std::uint64_t det_mod_p_reference(ModMat a, const ModP& f) {
  if (a.empty()) return 1 % f.p;
  std::uint64_t d = 0;
  eliminate_u64(a, f, &d);
  return d;
}

std::size_t rank_mod_p(ModMat a, const ModP& f) { return eliminate(a, f, nullptr); }

std::uint64_t det_mod_p(ModMat a, const ModP& f) {
  if (a.empty()) return 1 % f.p;
  std::uint64_t d = 0;
  eliminate(a, f, &d);
  return d;
}

}  // namespace memcert_checker
