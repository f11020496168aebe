// Word-size modular arithmetic and a reproducible supply of primes below 2^31.
#include "memcert/numeric/modp.hpp"

#include <mutex>

namespace memcert::modp {

u64 nmod_pow(u64 a, u64 e, u64 p) {
  u64 r = 1 % p;
  a %= p;
  while (e) {
    if (e & 1) r = nmod_mul(r, a, p);
    a = nmod_mul(a, a, p);
    e >>= 1;
  }
  return r;
}

u64 nmod_inv(u64 a, u64 p) {
  // Extended Euclid on signed 64-bit (p < 2^31).
  long long t = 0, nt = 1, r = static_cast<long long>(p), nr = static_cast<long long>(a % p);
  while (nr) {
    long long q = r / nr;
    long long tmp = t - q * nt; t = nt; nt = tmp;
    tmp = r - q * nr; r = nr; nr = tmp;
  }
  if (t < 0) t += static_cast<long long>(p);
  return static_cast<u64>(t);
}

namespace {
__extension__ typedef unsigned __int128 u128;  // GCC/clang extension (no -Wpedantic noise)
u64 mulmod64(u64 a, u64 b, u64 n) { return static_cast<u64>(static_cast<u128>(a) * b % n); }
u64 powmod64(u64 a, u64 e, u64 n) {
  u64 r = 1;
  a %= n;
  while (e) {
    if (e & 1) r = mulmod64(r, a, n);
    a = mulmod64(a, a, n);
    e >>= 1;
  }
  return r;
}
}  // namespace

bool is_prime_u64(u64 n) {
  if (n < 2) return false;
  for (u64 q : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    if (n % q == 0) return n == q;
  }
  u64 d = n - 1;
  int s = 0;
  while ((d & 1) == 0) { d >>= 1; ++s; }
  // These 12 bases make Miller-Rabin deterministic for all n < 3.3e24 > 2^64.
  for (u64 a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    u64 x = powmod64(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s; ++r) {
      x = mulmod64(x, x, n);
      if (x == n - 1) { composite = false; break; }
    }
    if (composite) return false;
  }
  return true;
}

u64 prime_31(std::size_t i) {
  static std::mutex mu;
  static std::vector<u64> cache;
  std::lock_guard<std::mutex> lock(mu);
  u64 next = cache.empty() ? (1ull << 31) - 1 : cache.back() - 2;
  while (cache.size() <= i) {
    while (!is_prime_u64(next)) next -= 2;
    cache.push_back(next);
    next -= 2;
  }
  return cache[i];
}

u64 reduce(const Integer& z, u64 p) { return mpz_fdiv_ui(z.get_mpz_t(), p); }

std::optional<u64> reduce(const Rational& q, u64 p) {
  u64 den = mpz_fdiv_ui(q.get_den_mpz_t(), p);
  if (den == 0) return std::nullopt;
  return nmod_mul(mpz_fdiv_ui(q.get_num_mpz_t(), p), nmod_inv(den, p), p);
}

}  // namespace memcert::modp
