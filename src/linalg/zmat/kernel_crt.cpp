// Exact kernel (and solve) by CRT over double-modular solves + rational reconstruction.
// Candidate only until the EXACT check A * K = 0 (integer arithmetic) passes; that check is what
// certifies the result. Output-sensitive: primes are added until the reconstruction stabilises and checks,
// up to the Cramer/Hadamard bound (beyond it the rank profile itself was unlucky).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/zmat/zmat.hpp"
#include "memcert/numeric/modp.hpp"

namespace memcert {

namespace {

double log2_mpz(const Integer& z) {
  if (z <= 0) return 0;
  long e;
  const double d = mpz_get_d_2exp(&e, z.get_mpz_t());
  return std::log2(d) + static_cast<double>(e);
}

// Rational reconstruction of u mod m with |num| <= bound, 0 < den <= bound; false if none.
bool ratrecon(const Integer& u, const Integer& m, const Integer& bound, Integer& num, Integer& den) {
  Integer r0 = m, r1 = u, t0 = 0, t1 = 1, q, tmp;
  while (r1 > bound) {
    mpz_fdiv_q(q.get_mpz_t(), r0.get_mpz_t(), r1.get_mpz_t());
    tmp = r0 - q * r1;
    r0 = r1;
    r1 = tmp;
    tmp = t0 - q * t1;
    t0 = t1;
    t1 = tmp;
  }
  if (t1 == 0 || abs(t1) > bound) return false;
  num = t1 < 0 ? Integer(-r1) : r1;
  den = abs(t1);
  Integer g;
  mpz_gcd(g.get_mpz_t(), num.get_mpz_t(), den.get_mpz_t());
  return g == 1;
}

// Symmetric residue of x mod m in (-m/2, m/2].
Integer symmetric(const Integer& x, const Integer& m) {
  Integer r;
  mpz_fdiv_r(r.get_mpz_t(), x.get_mpz_t(), m.get_mpz_t());
  if (2 * r > m) r -= m;
  return r;
}

// X = A_SP^{-1} B exactly (rational, common denominator), from residues mod many primes; nullopt when
// the reconstruction does not verify before `max_bits` of modulus (caller: unlucky profile).
// `verify(num, den)` is the exact acceptance test.
template <class Verify>
std::optional<std::pair<ZMatrix, Integer>> crt_solve(const ZMatrix& asp, const ZMatrix& b, double max_bits,
                                                     Verify verify) {
  const std::size_t r = asp.rows(), f = b.cols();
  ZMatrix acc(r, f, Integer(0));
  Integer M = 1;
  double bits = 0, next_try = 64;
  for (std::size_t pi = 0;; ++pi) {
    const std::uint64_t q = prime_fast(pi + 1000);  // disjoint from the primes used for profiles
    auto x = dmod_solve(dmod_from_zmat(asp, q), dmod_from_zmat(b, q));
    if (!x) continue;  // q divides det(A_SP)
    // Incremental CRT: acc += M * ((x - acc) * M^{-1} mod q).
    const std::uint64_t minv = modp::nmod_inv(mpz_fdiv_ui(M.get_mpz_t(), q), q);
    for (std::size_t i = 0; i < r * f; ++i) {
      Integer& a = acc.data()[i];
      const std::uint64_t am = mpz_fdiv_ui(a.get_mpz_t(), q);
      const std::uint64_t xi = x->data()[i];
      const std::uint64_t t = modp::nmod_mul(modp::nmod_sub(xi, am, q), minv, q);
      if (t) mpz_addmul_ui(a.get_mpz_t(), M.get_mpz_t(), t);
    }
    M *= static_cast<unsigned long>(q);
    bits += std::log2(static_cast<double>(q));
    if (bits < next_try && bits < max_bits) continue;
    next_try = bits * 1.5;
    // Reconstruct with a common denominator.
    Integer bound;
    mpz_fdiv_q_2exp(bound.get_mpz_t(), M.get_mpz_t(), 1);
    mpz_sqrt(bound.get_mpz_t(), bound.get_mpz_t());
    Integer den = 1, n, d;
    bool ok = true;
    ZMatrix num(r, f);
    for (std::size_t i = 0; i < r * f && ok; ++i) {
      Integer v = symmetric(acc.data()[i] * den, M);
      if (abs(v) <= bound) continue;
      Integer u;
      mpz_fdiv_r(u.get_mpz_t(), Integer(acc.data()[i] * den).get_mpz_t(), M.get_mpz_t());
      if (!ratrecon(u, M, bound, n, d)) ok = false;
      else den *= d;
      if (den > bound) ok = false;
    }
    if (ok) {
      for (std::size_t i = 0; i < r * f && ok; ++i) {
        num.data()[i] = symmetric(acc.data()[i] * den, M);
        if (abs(num.data()[i]) > bound) ok = false;
      }
      if (ok && verify(num, den)) return std::make_pair(std::move(num), den);
    }
    if (bits >= max_bits) return std::nullopt;
  }
}

// Exact check Z [rows all] * K = 0 with K = [num / den on pivot cols; identity on free cols]:
// Z_P num + den Z_F = 0 in integers.
bool kernel_check(const ZMatrix& z, const std::vector<std::size_t>& pcols, const std::vector<std::size_t>& fcols,
                  const ZMatrix& num, const Integer& den) {
  Integer s;
  for (std::size_t i = 0; i < z.rows(); ++i)
    for (std::size_t j = 0; j < fcols.size(); ++j) {
      s = den * z(i, fcols[j]);
      for (std::size_t k = 0; k < pcols.size(); ++k) {
        const Integer& zi = z(i, pcols[k]);
        if (zi != 0) mpz_addmul(s.get_mpz_t(), zi.get_mpz_t(), num(k, j).get_mpz_t());
      }
      if (s != 0) return false;
    }
  return true;
}

}  // namespace

QMatrix zmat_kernel_from_profile_crt(const ZMatrix& z, const ModpRankProfile& prof, std::vector<std::size_t>& free_cols,
                                     bool* verified) {
  if (verified) *verified = false;
  const std::size_t n = z.cols(), r = prof.rank;
  std::vector<bool> piv(n, false);
  for (auto c : prof.pivot_cols) piv[c] = true;
  free_cols.clear();
  for (std::size_t c = 0; c < n; ++c)
    if (!piv[c]) free_cols.push_back(c);
  const std::size_t f = free_cols.size();
  QMatrix kernel(n, f, Rational(0));
  for (std::size_t j = 0; j < f; ++j) kernel(free_cols[j], j) = 1;
  if (f == 0) {  // nothing to check: no kernel vectors
    if (verified) *verified = true;
    return kernel;
  }
  if (r == 0) {  // the identity is a kernel basis iff Z = 0
    if (verified) *verified = std::all_of(z.data().begin(), z.data().end(), [](const Integer& x) { return x == 0; });
    return kernel;
  }
  ZMatrix asp = mat_submatrix(z, prof.pivot_rows, prof.pivot_cols);
  ZMatrix b(r, f);
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t j = 0; j < f; ++j) b(i, j) = -z(prof.pivot_rows[i], free_cols[j]);
  // Cramer: numerators and the denominator are r x r minors of [A_SP | b]: Hadamard bound H; reconstruction
  // needs M > 2 H^2.
  double logh = 0;
  for (std::size_t i = 0; i < r; ++i) {
    Integer s = 0;
    for (std::size_t j = 0; j < r; ++j) mpz_addmul(s.get_mpz_t(), asp(i, j).get_mpz_t(), asp(i, j).get_mpz_t());
    Integer mx = 0;
    for (std::size_t j = 0; j < f; ++j) mx = std::max<Integer>(mx, b(i, j) * b(i, j));
    logh += 0.5 * log2_mpz(Integer(s + mx) + 1);
  }
  const double max_bits = 2 * logh + 4;
  auto res = crt_solve(asp, b, max_bits, [&](const ZMatrix& num, const Integer& den) {
    return kernel_check(z, prof.pivot_cols, free_cols, num, den);
  });
  if (!res) return kernel;  // unlucky profile: not verified (the identity-only candidate is wrong)
  if (verified) *verified = true;  // kernel_check passed inside crt_solve
  for (std::size_t k = 0; k < r; ++k)
    for (std::size_t j = 0; j < f; ++j) {
      Rational v(res->first(k, j), res->second);
      v.canonicalize();
      kernel(prof.pivot_cols[k], j) = v;
    }
  return kernel;
}

std::optional<QMatrix> zmat_solve_crt(const ZMatrix& a, const ZMatrix& b) {
  const std::size_t n = a.rows(), nb = b.cols();
  if (a.cols() != n || b.rows() != n) throw std::invalid_argument("zmat_solve_crt: shape mismatch");
  if (n == 0) return QMatrix(0, nb);
  // Singular over Q <=> certified rank < n (the multi-prime certificate decides it exactly).
  if (!dmod_solve(dmod_from_zmat(a, prime_fast(0)), dmod_from_zmat(ZMatrix(n, 0), prime_fast(0))) &&
      zmat_rank_certified_fast(a).rank < n)
    return std::nullopt;
  double logh = 0;  // Cramer: numerators and det are n x n minors of [A | b_j]
  for (std::size_t i = 0; i < n; ++i) {
    Integer s = 0, mx = 0;
    for (std::size_t j = 0; j < n; ++j) mpz_addmul(s.get_mpz_t(), a(i, j).get_mpz_t(), a(i, j).get_mpz_t());
    for (std::size_t j = 0; j < nb; ++j) mx = std::max<Integer>(mx, b(i, j) * b(i, j));
    logh += 0.5 * log2_mpz(Integer(s + mx) + 1);
  }
  auto res = crt_solve(a, b, 2 * logh + 4, [&](const ZMatrix& num, const Integer& den) {
    Integer s;  // exact check A num == den B
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < nb; ++j) {
        s = -den * b(i, j);
        for (std::size_t k = 0; k < n; ++k)
          if (a(i, k) != 0) mpz_addmul(s.get_mpz_t(), a(i, k).get_mpz_t(), num(k, j).get_mpz_t());
        if (s != 0) return false;
      }
    return true;
  });
  if (!res) throw std::logic_error("zmat_solve_crt: reconstruction failed below the Hadamard bound");
  QMatrix x(n, nb);
  for (std::size_t i = 0; i < n * nb; ++i) {
    x.data()[i] = Rational(res->first.data()[i], res->second);
    x.data()[i].canonicalize();
  }
  return x;
}

}  // namespace memcert
