#pragma once
// Arithmetic modulo word-size primes p < 2^31 (products fit in 64 bits).
#include <cstdint>
#include <optional>
#include <vector>

#include "memcert/numeric/rational.hpp"

namespace memcert::modp {

using u64 = std::uint64_t;

inline u64 nmod_mul(u64 a, u64 b, u64 p) { return (a * b) % p; }
inline u64 nmod_add(u64 a, u64 b, u64 p) { u64 s = a + b; return s >= p ? s - p : s; }
inline u64 nmod_sub(u64 a, u64 b, u64 p) { return a >= b ? a - b : a + p - b; }
inline u64 nmod_neg(u64 a, u64 p) { return a == 0 ? 0 : p - a; }
u64 nmod_pow(u64 a, u64 e, u64 p);
u64 nmod_inv(u64 a, u64 p);  // a != 0 mod p, p prime

// Deterministic Miller-Rabin, exact for every n < 2^64.
bool is_prime_u64(u64 n);

// The i-th prime below 2^31 counting down from 2^31 - 1 (deterministic, cached): a fixed, reproducible
// supply of distinct primes for rank-mod-p and multi-prime arguments.
u64 prime_31(std::size_t i);

// z mod p in [0, p).
u64 reduce(const Integer& z, u64 p);
// q mod p; nullopt when p divides the denominator.
std::optional<u64> reduce(const Rational& q, u64 p);

}  // namespace memcert::modp
