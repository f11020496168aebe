// kind "ks": delta2 = the smallest squared distance between two tokens, exactly. The V^2 d / 2 differences
// are the largest part of the ks check; in GMP rationals each one pays a gcd, so the rows are first brought
// to one common denominator D (integers X = D x, |x - x'|^2 = |X - X'|^2 / D^2) and compared in machine
// integers, every step checked; any overflow falls back to the plain rational loop.
#include <atomic>

#include "kernel/float_kernels.hpp"
#include "kinds/ks25/ks_network.hpp"

namespace memcert_checker {

namespace {

__extension__ typedef unsigned __int128 u128;

// The rows times their common denominator D as 64-bit integers with |X| <= 2^62 (so every difference fits
// an int64 and its square a u128); false when D or an X does not fit (D past 4096 bits is not formed).
bool common_integer_rows(const std::vector<QRow>& rows, std::size_t d, mpz_class& D, std::vector<std::int64_t>& X) {
  D = 1;
  for (const QRow& r : rows)
    for (std::size_t j = 0; j < d; ++j) {
      mpz_lcm(D.get_mpz_t(), D.get_mpz_t(), r[j].get_den_mpz_t());
      if (mpz_sizeinbase(D.get_mpz_t(), 2) > 4096) return false;
    }
  X.resize(rows.size() * d);
  mpz_class v;
  for (std::size_t a = 0; a < rows.size(); ++a)
    for (std::size_t j = 0; j < d; ++j) {
      mpz_divexact(v.get_mpz_t(), D.get_mpz_t(), rows[a][j].get_den_mpz_t());
      v *= rows[a][j].get_num();
      if (mpz_sizeinbase(v.get_mpz_t(), 2) > 62) return false;  // |v| < 2^62
      X[a * d + j] = v.get_si();
    }
  return true;
}

// min over b > a of |X_a - X_b|^2 for every a, in u128; false on an overflow of any sum.
bool min_sq_integer(const std::vector<std::int64_t>& X, std::size_t V, std::size_t d, unsigned threads,
                    std::vector<u128>& near) {
  near.assign(V - 1, 0);
  std::atomic<bool> overflow{false};
  parallel_for(V - 1, threads, [&](std::size_t a, unsigned) {
    const std::int64_t* xa = &X[a * d];
    for (std::size_t b = a + 1; b < V && !overflow.load(std::memory_order_relaxed); ++b) {
      const std::int64_t* xb = &X[b * d];
      u128 s = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const std::int64_t t = xa[j] - xb[j];  // |t| < 2^63: no overflow
        const u128 mag = static_cast<u128>(t < 0 ? -static_cast<u128>(t) : static_cast<u128>(t));
        if (__builtin_add_overflow(s, mag * mag, &s)) {  // mag^2 < 2^126 fits; the sum may not
          overflow = true;
          return;
        }
      }
      if (b == a + 1 || s < near[a]) near[a] = s;
    }
  });
  return !overflow;
}

mpq_class from_u128(u128 v) {
  mpz_class z(static_cast<unsigned long>(v >> 64));
  z <<= 64;
  z += mpz_class(static_cast<unsigned long>(v & ~static_cast<std::uint64_t>(0)));
  return mpq_class(z);
}

}  // namespace

mpq_class ks_min_sq_distance_rational(const std::vector<QRow>& rows, std::size_t d, unsigned threads) {
  const std::size_t V = rows.size();
  std::vector<mpq_class> near(V - 1);
  parallel_for(V - 1, threads, [&](std::size_t a, unsigned) {
    mpq_class s, t;
    for (std::size_t b = a + 1; b < V; ++b) {
      s = 0;
      for (std::size_t j = 0; j < d; ++j) {
        t = rows[a][j] - rows[b][j];
        s += t * t;
      }
      if (b == a + 1 || s < near[a]) near[a] = s;
    }
  });
  mpq_class m = near[0];
  for (const mpq_class& x : near)
    if (x < m) m = x;
  return m;
}

mpq_class ks_min_sq_distance(const std::vector<QRow>& rows, std::size_t d, unsigned threads, bool* machine_integers) {
  mpz_class D;
  std::vector<std::int64_t> X;
  std::vector<u128> near;
  const bool fits = common_integer_rows(rows, d, D, X) && min_sq_integer(X, rows.size(), d, threads, near);
  if (machine_integers) *machine_integers = fits;
  if (!fits) return ks_min_sq_distance_rational(rows, d, threads);
  u128 m = near[0];
  for (const u128 x : near)
    if (x < m) m = x;
  return from_u128(m) / mpq_class(D * D);  // mpq division: canonical
}

}  // namespace memcert_checker
