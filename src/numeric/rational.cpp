// Exact text and double conversions for Rational (see include/memcert/numeric/rational.hpp).
#include "memcert/numeric/rational.hpp"

#include <mpfr.h>

#include <cctype>
#include <cmath>
#include <stdexcept>

namespace memcert {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Optional sign followed by digits.
bool parse_integer(std::string_view s, Integer& out) {
  std::string_view body = s;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) body.remove_prefix(1);
  if (!all_digits(body)) return false;
  std::string txt(s[0] == '+' ? s.substr(1) : s);
  return out.set_str(txt, 10) == 0;
}

// Rounds q to `prec` bits with MPFR in `rnd` and returns the double.
double to_double(const Rational& q, mpfr_rnd_t rnd) {
  mpfr_t f;
  mpfr_init2(f, 53);
  mpfr_set_q(f, q.get_mpq_t(), rnd);
  double d = mpfr_get_d(f, rnd);
  mpfr_clear(f);
  return d;
}

}  // namespace

Rational::Rational(const char* text) {
  const std::optional<Rational> q = text ? rational_parse(text) : std::nullopt;
  if (!q) throw std::invalid_argument(std::string("Rational: expected an exact number (\"-3\", \"7/12\", \"0.125\", \"1e-3\"), got \"") +
                                      (text ? std::string(text).substr(0, 40) : std::string("(null)")) + "\"");
  *this = *q;
}

std::optional<Rational> rational_parse(std::string_view s) {
  if (s.empty() || s.size() > 100000) return std::nullopt;
  // p/q form.
  if (auto slash = s.find('/'); slash != std::string_view::npos) {
    Integer p, q;
    if (!parse_integer(s.substr(0, slash), p)) return std::nullopt;
    std::string_view den = s.substr(slash + 1);
    if (!all_digits(den) || !parse_integer(den, q) || q == 0) return std::nullopt;
    Rational r(p, q);
    r.canonicalize();
    return r;
  }
  // Decimal: [sign] digits [. digits] [(e|E) [sign] digits], at least one mantissa digit.
  std::size_t i = 0;
  bool neg = false;
  if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';
  std::string digits;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { digits += s[i++]; ++int_digits; }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { digits += s[i++]; ++frac_digits; }
  }
  if (int_digits + frac_digits == 0) return std::nullopt;
  long exp10 = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    std::string_view e = s.substr(i);
    Integer ez;
    if (!parse_integer(e, ez) || !ez.fits_slong_p()) return std::nullopt;
    exp10 = ez.get_si();
    if (exp10 > 100000 || exp10 < -100000) return std::nullopt;  // refuse absurd sizes
    i = s.size();
  }
  if (i != s.size()) return std::nullopt;
  Integer mant(digits, 10);
  long e = exp10 - static_cast<long>(frac_digits);
  Integer pow10;
  mpz_ui_pow_ui(pow10.get_mpz_t(), 10, static_cast<unsigned long>(e < 0 ? -e : e));
  Rational r = e >= 0 ? Rational(mant * pow10) : Rational(mant, pow10);
  r.canonicalize();
  if (neg) r = -r;
  return r;
}

Rational rational_from_double(double x) {
  if (!std::isfinite(x)) throw std::domain_error("not a finite number");
  Rational r;
  mpq_set_d(r.get_mpq_t(), x);  // exact: every finite double is a dyadic rational
  return r;
}

std::string rational_to_string(const Rational& q) { return q.get_str(10); }

double rational_to_double(const Rational& q) { return to_double(q, MPFR_RNDN); }
double rational_to_double_down(const Rational& q) { return to_double(q, MPFR_RNDD); }
double rational_to_double_up(const Rational& q) { return to_double(q, MPFR_RNDU); }

Rational rational_round_to_bits(const Rational& q, unsigned bits_rel) {
  if (q == 0) return q;
  mpfr_t f;
  mpfr_init2(f, bits_rel < 2 ? 2 : bits_rel);
  mpfr_set_q(f, q.get_mpq_t(), MPFR_RNDN);
  Rational r;
  mpfr_get_q(r.get_mpq_t(), f);
  mpfr_clear(f);
  return r;
}

}  // namespace memcert
