#include "catch.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

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

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

#include "memcert/numeric/double_bits.hpp"
#include "support/next_double_check.hpp"

TEST_CASE("double_exponents agrees with frexp and the exact lowest set bit (normals and subnormals)", "[numeric]") {
  std::mt19937_64 rng(31);
  auto check = [](double x) {
    int low = 0, top = 0;
    memcert::double_exponents(x, low, top);
    int e = 0;
    std::frexp(x, &e);
    INFO(x);
    CHECK(top == e);
    // x 2^-low is an odd integer: exact through GMP (a double is a dyadic rational).
    mpq_class q(x);
    if (low >= 0) q /= mpq_class(mpz_class(1) << low);
    else q *= mpq_class(mpz_class(1) << -low);
    q.canonicalize();
    CHECK(q.get_den() == 1);
    CHECK(mpz_odd_p(q.get_num().get_mpz_t()));
  };
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t b = rng() & ~(std::uint64_t{0x7ff} << 52);  // a random mantissa and sign ...
    b |= (rng() % 2047) << 52;                                // ... and exponent: subnormals (0) to 2^1023
    double x;
    std::memcpy(&x, &b, sizeof x);
    if (x == 0) continue;
    check(x);
  }
  for (double x : {1.0, -1.0, 0.75, 3.0, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
                   std::numeric_limits<double>::max(), -std::ldexp(1.0, -1060), 1e-310, 65536.0 * 3})
    check(x);
}

TEST_CASE("next_up / next_down equal std::nextafter on every kind of double", "[numeric]") {
  memcert_test::check_next_double_pair([](double x) { return memcert::next_up(x); },
                                       [](double x) { return memcert::next_down(x); }, 37);
}

// GMP's mpq functions assume canonical operands, and gmpxx's mpq_class(num, den) does not reduce: a
// non-canonical 0/4096 or -20480/4096 compares unequal to 0 and -5 (mpq_equal compares numerators and
// denominators), so a repeated entry went unseen and "2/2" was written. Rational(num, den) reduces.
TEST_CASE("Rational(num, den) is in lowest terms with a positive denominator", "[numeric]") {
  static_assert(std::is_base_of_v<mpq_class, Rational>, "Rational is an mpq_class");
  const Rational a(-20480, 4096), z(0, 4096), h(3, -6);
  CHECK(a == Rational(-5));
  CHECK(a.get_num() == -5);
  CHECK(a.get_den() == 1);
  CHECK(z == 0);
  CHECK(z.get_den() == 1);
  CHECK(h.get_num() == -1);
  CHECK(h.get_den() == 2);
  CHECK(Rational(5) + Rational(0, 4096) == Rational(5));
  CHECK(Rational(Integer(6) * 2, Integer(8)) == Rational(3, 2));
  CHECK(rational_to_string(Rational(2, 2)) == "1");
  CHECK(rational_to_string(Rational(0, 2)) == "0");
  CHECK(rational_to_string(Rational(-8, 2)) == "-4");
  // Against an independent reduction: num/den by their gcd, sign on the numerator.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<long> u(-5000, 5000);
  for (int i = 0; i < 2000; ++i) {
    const long p = u(rng), q0 = u(rng), q = q0 == 0 ? 1 : q0;
    const Rational r(p, q);
    Integer g;
    mpz_gcd(g.get_mpz_t(), Integer(p).get_mpz_t(), Integer(q).get_mpz_t());
    Integer num = Integer(p) / g, den = Integer(q) / g;
    if (den < 0) num = -num, den = -den;
    CHECK(r.get_num() == num);
    CHECK(r.get_den() == den);
    CHECK(mpq_equal(r.get_mpq_t(), mpq_class(num, den).get_mpq_t()) != 0);
  }
  // Conversions keep working: from expressions, integers, doubles.
  Rational e = Rational(1, 3) + Rational(1, 6);
  CHECK(e == Rational(1, 2));
  e = 0.25;
  CHECK(e == Rational(1, 4));
  e = Integer(7);
  CHECK(e == 7);
}

TEST_CASE("Rational(text) reads decimals and fractions exactly, refuses 1/0 and junk", "[numeric]") {
  // Second method: the value built from integers (Rational(num, den)).
  CHECK(Rational("0.125") == Rational(Integer(1), Integer(8)));
  CHECK(Rational("-20480/4096") == Rational(-5));
  CHECK(Rational("-20480/4096").get_den() == 1);
  CHECK(Rational(std::string("1e-3")) == Rational(Integer(1), Integer(1000)));
  CHECK(Rational("7/12") == Rational(Integer(7), Integer(12)));
  for (const char* bad : {"1/0", "", "abc", "1/", "0x10", "1.2.3", "nan", "inf"})
    CHECK_THROWS_AS(Rational(bad), std::invalid_argument);
}
