// The fast enclosure kernel of Theorem 1's Z rows (ContextEnclosure: MPFR softmax, double mixing with a
// rigorous error bound; AffineLogits for the family a + c s) against a second method: the same softmax
// and mixing done in 256-bit MPFR interval arithmetic from the exact rationals. Every returned
// [centre - radius, centre + radius] must contain the reference interval, on benign and adversarial
// inputs (non-dyadic and huge/tiny context entries, logit spreads that underflow double, c non-dyadic).
#include "catch.hpp"

#include <cmath>
#include <random>

#include "memcert/model/mha.hpp"

using namespace memcert;

namespace {

Rational rq(std::mt19937_64& rng, int kind) {
  std::uniform_int_distribution<int> u(-64, 64);
  switch (kind) {
    case 0: return Rational(u(rng), 64);                                 // dyadic (the generators' data)
    case 1: { Rational q(u(rng), 3 + 4 * (rng() % 3)); q.canonicalize(); return q; }  // not a double
    case 2: { Rational q(u(rng) * 1000 + 1, 7); q.canonicalize(); return q; }         // large, not a double
    default: {                                                           // tiny: below double's range
      Rational q(u(rng) + 65, 1);
      q /= Rational(Integer(1) << 1100);
      return q;
    }
  }
}

// Reference: p = E^T softmax(logits) in 256-bit intervals.
std::vector<Interval> reference_mix(const QMatrix& E, const QVector& logits) {
  const mpfr_prec_t saved = Interval::default_precision();
  Interval::set_default_precision(256);
  std::vector<Interval> al = softmax_enclosure(logits);
  std::vector<Interval> p;
  for (std::size_t c = 0; c < E.cols(); ++c) {
    Interval acc(Rational(0));
    for (std::size_t j = 0; j < E.rows(); ++j) acc += Interval(E(j, c)) * al[j];
    p.push_back(acc);
  }
  Interval::set_default_precision(saved);
  return p;
}

void check_contains(const std::vector<Interval>& ref, const std::vector<double>& c, const std::vector<double>& r) {
  for (std::size_t k = 0; k < ref.size(); ++k) {
    INFO("coordinate " << k << ": centre " << c[k] << " radius " << r[k] << " reference " << ref[k].to_string());
    REQUIRE(r[k] >= 0);
    const Rational lo = rational_from_double(c[k]) - rational_from_double(r[k]);
    const Rational hi = rational_from_double(c[k]) + rational_from_double(r[k]);
    CHECK(lo <= ref[k].lower());
    CHECK(ref[k].upper() <= hi);
  }
}

}  // namespace

TEST_CASE("ContextEnclosure: double mixing and AffineLogits enclose the 256-bit reference", "[model][enclosure]") {
  std::mt19937_64 rng(77);
  std::uniform_int_distribution<int> ul(-64, 64);
  for (int it = 0; it < 120; ++it) {
    const std::size_t n = 1 + rng() % 6, d = n + rng() % 5;
    const int kind = it % 4;
    QMatrix E(n, d);
    for (auto& x : E.data()) x = rq(rng, rng() % 3 == 0 ? kind : 0);
    // Logits a, s and a scale c; every fourth case has spreads of thousands (exp underflows double).
    const long spread = it % 4 == 3 ? 4000 : 1;
    QVector a(n), s(n);
    for (auto& x : a) { x = Rational(ul(rng) * spread, 16); x.canonicalize(); }
    for (auto& x : s) { x = Rational(ul(rng), 8); x.canonicalize(); }
    const Rational cs[] = {Rational(0), Rational(1, 3), Rational(12345, 64), Rational(1, 1099511627776)};
    ContextEnclosure ce(E, 64);
    std::vector<double> c(d), r(d);
    ce.mix(a, c.data(), r.data());
    check_contains(reference_mix(E, a), c, r);
    const ScaledVector as = scaled_from_qvec(a), ss = scaled_from_qvec(s);
    for (const Rational& cc : cs) {
      QVector l(n);
      for (std::size_t j = 0; j < n; ++j) l[j] = a[j] + cc * s[j];
      const auto ref = reference_mix(E, l);
      ce.mix_scaled(as, &ss, cc, c.data(), r.data());
      check_contains(ref, c, r);
      AffineLogits L(as, &ss, 64);
      ce.mix_affine(L, cc, c.data(), r.data());
      check_contains(ref, c, r);
    }
    // No s: the logits are a for every c.
    AffineLogits L0(as, nullptr, 64);
    ce.mix_affine(L0, Rational(5), c.data(), r.data());
    check_contains(reference_mix(E, a), c, r);
  }
  // The radius stays small for dyadic data (a rigorous bound that is also useful).
  QMatrix E(2, 3);
  for (auto& x : E.data()) x = Rational(ul(rng), 64);
  ContextEnclosure ce(E, 64);
  std::vector<double> c(3), r(3);
  ce.mix(QVector{Rational(1), Rational(-2)}, c.data(), r.data());
  for (double x : r) CHECK(x < 1e-12);  // exp bound 2^-44 relative, mixing a few ulps
  CHECK_THROWS(ce.mix_affine(AffineLogits(scaled_from_qvec(QVector{Rational(1), Rational(2)}), nullptr, 64), Rational(-1),
                             c.data(), r.data()));
}

TEST_CASE("ContextEnclosure sharing scaled numerators gives the copying form's enclosures bit for bit", "[model][enclosure]") {
  std::mt19937_64 rng(77);
  for (int round = 0; round < 30; ++round) {
    const std::size_t n = 1 + rng() % 7, d = 1 + rng() % 9;
    // Values m 2^(e - k) with k up to 1074 - 60 (so some are subnormal): numerators m 2^e below 2^52.
    const int k = round % 3 == 0 ? 1000 + static_cast<int>(rng() % 60) : static_cast<int>(rng() % 80);
    std::vector<double> num(n * d), val(n * d);
    for (std::size_t i = 0; i < n * d; ++i) {
      const double m = double(static_cast<std::int64_t>(rng() % (std::uint64_t{1} << 40)) - (std::int64_t{1} << 39));
      num[i] = std::ldexp(m, static_cast<int>(rng() % 12));
      val[i] = std::ldexp(num[i], -k);  // exact: each value is num 2^-k (subnormal ones keep every bit, k <= 1074 - 52)
    }
    INFO("round " << round << " k " << k);
    const ContextEnclosure shared(num.data(), k, n, d, 64), copied(val.data(), n, d, 64);
    for (int trial = 0; trial < 4; ++trial) {
      ScaledVector a, s;
      a.den = 8;
      s.den = 3;
      for (std::size_t j = 0; j < n; ++j) {
        a.num.push_back(Integer(static_cast<long>(rng() % 200) - 100));
        s.num.push_back(Integer(static_cast<long>(rng() % 2000) - 1000));
      }
      const AffineLogits L(a, &s, 64);
      for (const Rational& c : {Rational(0), Rational(5, 2), Rational(4000)}) {
        std::vector<double> c1(d), r1(d), c2(d), r2(d);
        shared.mix_affine(L, c, c1.data(), r1.data());
        copied.mix_affine(L, c, c2.data(), r2.data());
        CHECK(c1 == c2);
        CHECK(r1 == r2);
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<double> c1(d), r1(d), c2(d), r2(d);
      shared.token(j, c1.data(), r1.data());
      copied.token(j, c2.data(), r2.data());
      CHECK(c1 == c2);
      CHECK(r1 == r2);
    }
  }
}
