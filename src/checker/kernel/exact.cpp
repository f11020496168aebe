// Exact rationals and integer linear algebra for the checker (see exact.hpp for what each proves).
#include "kernel/exact.hpp"

#include <cstdlib>

namespace memcert_checker {

namespace {
bool all_digits(const std::string& s, std::size_t b, std::size_t e) {
  if (b >= e) return false;
  for (std::size_t i = b; i < e; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}
}  // namespace

bool parse_u64(const std::string& s, unsigned long long& out) {
  if (s.empty() || s.size() > 20 || !all_digits(s, 0, s.size())) return false;
  mpz_class z(s, 10);
  if (z > mpz_class("18446744073709551615")) return false;
  out = 0;
  for (char c : s) out = out * 10 + static_cast<unsigned>(c - '0');
  return true;
}

namespace {
// s[b, e) as a number below 10^19 (so below 2^64), when it is 1 to 19 decimal digits.
bool small_digits(const std::string& s, std::size_t b, std::size_t e, unsigned long& out) {
  if (b >= e || e - b > 19) return false;
  out = 0;
  for (std::size_t i = b; i < e; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + static_cast<unsigned long>(s[i] - '0');
  }
  return true;
}
}  // namespace

bool parse_rational(const std::string& s, mpq_class& out, std::string& error) {
  error.clear();
  std::size_t slash = s.find('/');
  // The common forms with at most 19 digits on each side ("-7", "n/2^k" as memcert writes a double) read
  // without temporary strings; the same value as the general reading below, which handles the rest.
  if (sizeof(unsigned long) >= 8) {
    const std::size_t b = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    unsigned long num = 0, den = 1;
    if (small_digits(s, b, slash == std::string::npos ? s.size() : slash, num) &&
        (slash == std::string::npos || (small_digits(s, slash + 1, s.size(), den) && den != 0))) {
      mpz_set_ui(out.get_num_mpz_t(), num);
      mpz_set_ui(out.get_den_mpz_t(), den);
      out.canonicalize();
      if (s[0] == '-') out = -out;
      return true;
    }
  }
  if (slash != std::string::npos) {
    // "p/q": an optionally signed integer over a positive integer.
    std::size_t b = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (!all_digits(s, b, slash) || !all_digits(s, slash + 1, s.size())) {
      error = "not a rational \"" + s + "\" (expected p/q with decimal integers)";
      return false;
    }
    mpz_class num(s.substr(b, slash - b), 10), den(s.substr(slash + 1), 10);
    if (den == 0) { error = "zero denominator in \"" + s + "\""; return false; }
    if (s[0] == '-') num = -num;
    out = mpq_class(num, den);
    out.canonicalize();
    return true;
  }
  // Decimal: [sign] digits [. digits] [(e|E) [sign] digits], with at least one mantissa digit.
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = (s[i++] == '-');
  std::size_t int_b = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  std::string digits = s.substr(int_b, i - int_b);
  long frac_len = 0;
  if (i < s.size() && s[i] == '.') {
    std::size_t fb = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    frac_len = static_cast<long>(i - fb);
    digits += s.substr(fb, i - fb);
  }
  if (digits.empty()) { error = "not a number \"" + s + "\""; return false; }
  long exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = (s[i++] == '-');
    std::size_t eb = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (eb == i || i - eb > 9) { error = "bad exponent in \"" + s + "\""; return false; }
    exponent = std::strtol(s.substr(eb, i - eb).c_str(), nullptr, 10);
    if (eneg) exponent = -exponent;
  }
  if (i != s.size()) { error = "not a number \"" + s + "\""; return false; }
  long e10 = exponent - frac_len;  // value = digits * 10^e10
  if (e10 > kMaxExponent || e10 < -kMaxExponent) { error = "exponent out of range in \"" + s + "\""; return false; }
  mpz_class m(digits, 10), p10;
  mpz_ui_pow_ui(p10.get_mpz_t(), 10, static_cast<unsigned long>(e10 < 0 ? -e10 : e10));
  if (neg) m = -m;
  out = e10 >= 0 ? mpq_class(m * p10) : mpq_class(m, p10);
  out.canonicalize();
  return true;
}

QRow qmat_mul_vec(const QMat& a, const QRow& x) {
  QRow y(a.size(), 0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < x.size(); ++j) y[i] += a[i][j] * x[j];
  return y;
}

ZRow scale_row_to_integers(const QRow& row, mpz_class* factor) {
  mpz_class l = 1;
  for (const auto& q : row) mpz_lcm(l.get_mpz_t(), l.get_mpz_t(), q.get_den_mpz_t());
  ZRow z(row.size());
  for (std::size_t j = 0; j < row.size(); ++j) z[j] = row[j].get_num() * (l / row[j].get_den());
  if (factor) *factor = l;
  return z;
}

ZMat scale_rows_to_integers(const QMat& a) {
  ZMat z;
  z.reserve(a.size());
  for (const auto& r : a) z.push_back(scale_row_to_integers(r));
  return z;
}

mpz_class det_bareiss(ZMat a) {
  const std::size_t n = a.size();
  if (n == 0) return 1;
  int sign = 1;
  mpz_class prev = 1;
  for (std::size_t k = 0; k + 1 < n; ++k) {
    if (a[k][k] == 0) {  // swap in a row with a non-zero entry in column k (flips the sign)
      std::size_t r = k + 1;
      while (r < n && a[r][k] == 0) ++r;
      if (r == n) return 0;
      std::swap(a[k], a[r]);
      sign = -sign;
    }
    for (std::size_t i = k + 1; i < n; ++i) {
      for (std::size_t j = k + 1; j < n; ++j) {
        a[i][j] = a[i][j] * a[k][k] - a[i][k] * a[k][j];
        mpz_divexact(a[i][j].get_mpz_t(), a[i][j].get_mpz_t(), prev.get_mpz_t());  // exact by Sylvester's identity
      }
    }
    prev = a[k][k];
  }
  return sign * a[n - 1][n - 1];
}

bool positive_definite_ldlt(const QMat& a) {
  const std::size_t n = a.size();
  for (const auto& r : a)
    if (r.size() != n) return false;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (a[i][j] != a[j][i]) return false;
  // LDL^T in fraction-free form. Multiplying by the common denominator D > 0 keeps definiteness and
  // gives an integer matrix M. Bareiss elimination without pivoting turns M[t][t] into the top-left
  // principal minor Delta_{t+1} of M, and the LDL^T pivots are d_t = Delta_{t+1} / Delta_t; so "every
  // d_t > 0" is "every Delta_t > 0" (Sylvester). Integers avoid the gcd in every rational operation,
  // which makes this orders of magnitude faster than rational LDL^T for Gram matrices of real data.
  mpz_class den = 1;
  for (const auto& r : a)
    for (const auto& x : r) mpz_lcm(den.get_mpz_t(), den.get_mpz_t(), x.get_den_mpz_t());
  ZMat m(n, ZRow(n));  // only the lower triangle (j <= i) is used: the trailing block stays symmetric
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) m[i][j] = a[i][j].get_num() * (den / a[i][j].get_den());
  mpz_class prev = 1, t1, t2;
  for (std::size_t t = 0; t < n; ++t) {
    if (sgn(m[t][t]) <= 0) return false;
    for (std::size_t i = t + 1; i < n; ++i)
      for (std::size_t j = t + 1; j <= i; ++j) {
        // m[i][j] = (m[t][t] m[i][j] - m[i][t] m[j][t]) / prev, exact by Sylvester's identity.
        mpz_mul(t1.get_mpz_t(), m[t][t].get_mpz_t(), m[i][j].get_mpz_t());
        mpz_mul(t2.get_mpz_t(), m[i][t].get_mpz_t(), m[j][t].get_mpz_t());
        mpz_sub(t1.get_mpz_t(), t1.get_mpz_t(), t2.get_mpz_t());
        mpz_divexact(m[i][j].get_mpz_t(), t1.get_mpz_t(), prev.get_mpz_t());
      }
    prev = m[t][t];
  }
  return true;
}

}  // namespace memcert_checker
