#include "catch.hpp"

#include <random>

#include "memcert/numeric/interval.hpp"
#include "memcert/numeric/modp.hpp"

using namespace memcert;

TEST_CASE("is_prime_u64 agrees with trial division", "[numeric]") {
  auto trial = [](std::uint64_t n) {
    if (n < 2) return false;
    for (std::uint64_t q = 2; q * q <= n; ++q)
      if (n % q == 0) return false;
    return true;
  };
  for (std::uint64_t n = 0; n < 20000; ++n) REQUIRE(modp::is_prime_u64(n) == trial(n));
  std::mt19937_64 rng(4);
  for (int i = 0; i < 200; ++i) {
    std::uint64_t n = (rng() >> 34) | 1;  // < 2^30
    REQUIRE(modp::is_prime_u64(n) == trial(n));
  }
  CHECK_FALSE(modp::is_prime_u64(3215031751ull));  // strong pseudoprime to bases 2,3,5,7
  CHECK(modp::is_prime_u64(18446744073709551557ull));  // largest 64-bit prime
}

TEST_CASE("prime_31 gives distinct primes below 2^31 and inverses work", "[numeric]") {
  std::uint64_t prev = 1ull << 31;
  for (std::size_t i = 0; i < 50; ++i) {
    std::uint64_t p = modp::prime_31(i);
    REQUIRE(p < prev);
    REQUIRE(modp::is_prime_u64(p));
    prev = p;
    for (std::uint64_t a : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{12345}, p - 1}) REQUIRE(modp::nmod_mul(a, modp::nmod_inv(a, p), p) == 1);
  }
  const std::uint64_t p = modp::prime_31(0);
  CHECK(*modp::reduce(Rational(-1, 2), p) == modp::nmod_neg(modp::nmod_inv(2, p), p));
  CHECK_FALSE(modp::reduce(Rational(1, static_cast<long>(p)), p).has_value());
  CHECK(modp::reduce(Integer(-1), p) == p - 1);
}

TEST_CASE("Interval operations enclose the exact rational results", "[numeric]") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<long> u(-100000, 100000);
  for (int prec : {24, 53, 128}) {
    Interval::set_default_precision(prec);
    for (int i = 0; i < 300; ++i) {
      Rational a(u(rng), std::abs(u(rng)) + 1), b(u(rng), std::abs(u(rng)) + 1);
      a.canonicalize();
      b.canonicalize();
      Interval ia(a), ib(b);
      REQUIRE(ia.contains(a));
      REQUIRE((ia + ib).contains(a + b));
      REQUIRE((ia - ib).contains(a - b));
      REQUIRE((ia * ib).contains(a * b));
      if (b != 0) REQUIRE((ia / ib).contains(a / b));
    }
  }
  Interval::set_default_precision(128);
  // exp/log: compare with an independent enclosure from the series bound for small arguments, and with
  // monotonicity / inverse relations.
  Interval one(Rational(1));
  Interval e = interval_exp(one);
  CHECK(e.lower() > Rational(271828182, 100000000));
  CHECK(e.upper() < Rational(271828183, 100000000));
  Interval l = interval_log(e);
  CHECK(l.contains(Rational(1)));
  Interval s = interval_sqrt(Interval(Rational(2)));
  CHECK((s * s).contains(Rational(2)));
  CHECK(s.lower() * s.lower() <= 2);
  CHECK(s.upper() * s.upper() >= 2);
  CHECK_THROWS(Interval(Rational(1)) / Interval(Rational(-1), Rational(1)));
  CHECK_THROWS(interval_log(Interval(Rational(0))));
}
