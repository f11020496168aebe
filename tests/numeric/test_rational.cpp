#include "catch.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "memcert/numeric/rational.hpp"

using namespace memcert;

TEST_CASE("rational_parse reads every exact form of docs/CLI.md", "[numeric]") {
  CHECK(*rational_parse("-3") == Rational(-3));
  CHECK(*rational_parse("7/12") == Rational(7, 12));
  CHECK(*rational_parse("-14/24") == Rational(-7, 12));
  CHECK(*rational_parse("0.125") == Rational(1, 8));
  CHECK(*rational_parse("1e-3") == Rational(1, 1000));
  CHECK(*rational_parse("-2.5E+4") == Rational(-25000));
  CHECK(*rational_parse("+4") == Rational(4));
  CHECK(*rational_parse(".5") == Rational(1, 2));
  CHECK(*rational_parse("5.") == Rational(5));
  for (const char* bad : {"", "abc", "1/0", "1/-2", "1.2.3", "e5", "1e", "--1", "1 ", " 1", "0x10", "nan", "inf", "1/2/3"})
    CHECK_FALSE(rational_parse(bad).has_value());
}

TEST_CASE("rational_to_string round-trips through rational_parse", "[numeric]") {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<long> u(-1000000, 1000000);
  for (int i = 0; i < 500; ++i) {
    Rational q(u(rng), std::abs(u(rng)) + 1);
    q.canonicalize();
    CHECK(*rational_parse(rational_to_string(q)) == q);
  }
}

TEST_CASE("rational_from_double is exact and rejects NaN/inf", "[numeric]") {
  CHECK(rational_from_double(0.1) != Rational(1, 10));
  // 0.1 = 3602879701896397 / 2^55 exactly.
  Integer two55;
  mpz_ui_pow_ui(two55.get_mpz_t(), 2, 55);
  CHECK(rational_from_double(0.1) == Rational(Integer(3602879701896397L), two55));
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-1e300, 1e300);
  for (int i = 0; i < 1000; ++i) {
    double x = u(rng) * std::pow(2.0, -static_cast<int>(rng() % 2000));
    Rational q = rational_from_double(x);
    CHECK(rational_to_double(q) == x);  // exact: nearest double of an exact double is itself
    CHECK(rational_to_double_down(q) == x);
    CHECK(rational_to_double_up(q) == x);
  }
  CHECK(rational_from_double(std::numeric_limits<double>::denorm_min()) > 0);
  CHECK_THROWS(rational_from_double(std::nan("")));
  CHECK_THROWS(rational_from_double(std::numeric_limits<double>::infinity()));
}

TEST_CASE("directed double conversions bracket the rational", "[numeric]") {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<long> u(-1000000007, 1000000007);
  for (int i = 0; i < 1000; ++i) {
    Rational q(u(rng), std::abs(u(rng)) + 1);
    q.canonicalize();
    double lo = rational_to_double_down(q), hi = rational_to_double_up(q);
    CHECK(rational_from_double(lo) <= q);
    CHECK(q <= rational_from_double(hi));
    CHECK(std::nextafter(lo, INFINITY) >= hi);  // adjacent (or equal) doubles
  }
}
