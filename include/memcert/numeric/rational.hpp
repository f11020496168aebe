#pragma once
// Exact integers and rationals (GMP through gmpxx) and their exact text/double conversions.
#include <gmpxx.h>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace memcert {

using Integer = mpz_class;

// An exact rational: gmpxx's mpq_class, always in canonical form (lowest terms, positive denominator).
// GMP's mpq functions assume canonical operands, and mpq_class(num, den) does not reduce: 0/4096 or
// -20480/4096 would then compare unequal to 0 and -5. Rational(num, den) reduces, so every Rational the
// engine builds is canonical (arithmetic on canonical operands stays canonical).
class Rational : public mpq_class {
 public:
  Rational() = default;
  Rational(const mpq_class& q) : mpq_class(q) {}
  Rational(mpq_class&& q) noexcept : mpq_class(std::move(q)) {}
  // Integer and rational expressions (a + b, a * b, ...).
  template <class T, class U, std::enable_if_t<std::is_same_v<T, mpq_t> || std::is_same_v<T, mpz_t>, int> = 0>
  Rational(const __gmp_expr<T, U>& e) : mpq_class(e) {}
  // Integers and doubles (a double exactly, as mpq_class does).
  template <class A, std::enable_if_t<std::is_arithmetic_v<A>, int> = 0>
  Rational(A x) : mpq_class(x) {}
  // num / den in lowest terms (den != 0).
  Rational(const Integer& num, const Integer& den) : mpq_class(num, den) { canonicalize(); }
  // An exact decimal number as rational_parse reads it ("-3", "7/12", "0.125", "1e-3"), in lowest terms;
  // std::invalid_argument for anything else, including a zero denominator ("1/0").
  explicit Rational(const char* text);
  explicit Rational(const std::string& text) : Rational(text.c_str()) {}
  using mpq_class::operator=;
};

// Parses an exact decimal number: "-3", "7/12", "0.125", "1e-3", "-2.5E+4", "+4".
// Returns nullopt when `s` is not such a number (or has a zero denominator).
std::optional<Rational> rational_parse(std::string_view s);

// The exact dyadic rational a finite double stores. Throws std::domain_error on NaN/inf.
Rational rational_from_double(double x);

// Canonical text: "p" or "p/q" (lowest terms), which rational_parse reads back exactly.
std::string rational_to_string(const Rational& q);

// Nearest double (round-to-nearest); for estimates only, never for proofs.
double rational_to_double(const Rational& q);

// Directed conversions: rational_to_double_down(q) <= q <= rational_to_double_up(q).
double rational_to_double_down(const Rational& q);
double rational_to_double_up(const Rational& q);

// Least common multiple of the denominators of [first, last).
template <class It>
Integer rational_denominator_lcm(It first, It last) {
  Integer l = 1;
  for (; first != last; ++first) mpz_lcm(l.get_mpz_t(), l.get_mpz_t(), first->get_den_mpz_t());
  return l;
}

// A rational q' with |q - q'| <= |q| * 2^-bits_rel (or exact if q == 0) and a small denominator,
// used to keep written weights short. Not a proof step: callers certify what they write.
Rational rational_round_to_bits(const Rational& q, unsigned bits_rel);

}  // namespace memcert
