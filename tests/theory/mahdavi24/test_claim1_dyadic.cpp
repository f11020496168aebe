// Claim 1 with a dyadic W_Q (docs/THEORY.md section 4) against the exact rational route: the integer
// logits kernel against exact rational products, and whole Theorem 1 constructions by both routes on random
// and near-singular data, each re-verified by the independent checker.
#include "catch.hpp"

#include <cmath>
#include <optional>
#include <random>

#include "memcert/checker/checker.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "../../../src/theory/mahdavi24/z_enclosure.hpp"

using namespace memcert;
using namespace memcert::mahdavi24;

namespace {

QVector dy_row_of(const QMatrix& a, std::size_t i) { return QVector(a.row(i), a.row(i) + a.cols()); }

// Query t+1 := query t + 2^-k (query t+1): Q_R nearly singular (condition number about 2^k), still of full
// column rank exactly.
void dy_near_singular(AttentionDataset& ds, std::size_t t, int k) {
  for (std::size_t c = 0; c < ds.d(); ++c) {
    Rational x = ds.queries(t, c) + ds.queries(t + 1, c) / Rational(Integer(1) << k);
    x.canonicalize();
    ds.queries(t + 1, c) = x;
  }
}

Theorem1Result dy_build(const AttentionDataset& ds, std::size_t H, std::size_t dh, bool exact) {
  Theorem1Options o;
  o.H = H;
  o.dh = dh;
  o.seed = 11;
  o.exact_fit = exact;
  return theorem1_construct(ds, o);
}

bool dy_is_dyadic(const Rational& q, int max_num_bits) {
  const Integer& den = q.get_den();
  return mpz_popcount(den.get_mpz_t()) == 1 && mpz_sizeinbase(q.get_num().get_mpz_t(), 2) <= static_cast<std::size_t>(max_num_bits);
}

}  // namespace

TEST_CASE("Claim 1 dyadic: integer logits E U P e equal the exact rational product", "[claim1][dyadic]") {
  std::mt19937_64 rng(5);
  for (const char* kind : {"theorem1", "general"}) {
    auto ds = generate_attention_dataset(kind, 9, 4, 7, std::nullopt, 3);
    dy_near_singular(ds, 0, 20);
    const ZExamples z = z_examples(ds, 64);
    const std::vector<std::size_t> group{0, 1, 2, 3};
    auto P = claim1_dyadic_left_inverse(z, group);
    REQUIRE(P);
    // Second method: P's rationals, exact P Q_R; near the identity up to the solve's accuracy and the
    // 40-bit rounding times the condition number (about 2^20 here).
    QMatrix Pq(4, 7), QR(7, 4);
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t c = 0; c < 7; ++c) {
        Pq(i, c) = Rational(P->num(i, c), P->den);
        Pq(i, c).canonicalize();
        CHECK(dy_is_dyadic(Pq(i, c), 64));
        QR(c, i) = ds.queries(group[i], c);
      }
    const QMatrix PQ = mat_mul(Pq, QR);
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j) CHECK(std::fabs(rational_to_double(PQ(i, j)) - (i == j ? 1.0 : 0.0)) < 1e-2);
    std::uniform_int_distribution<int> uu(-2, 2);
    QMatrix U(7, 4);
    for (auto& x : U.data()) { x = Rational(uu(rng), 8); x.canonicalize(); }
    std::vector<std::size_t> all{0, 1, 2, 3, 4, 5, 6, 7, 8};
    auto a = claim1_logits_dyadic(z, scaled_from_qmat(U), *P, all);
    for (std::size_t t : all) {
      const QVector want = mat_vec(ds.contexts[t], mat_vec(mat_mul(U, Pq), dy_row_of(ds.queries, t)));
      CHECK(scaled_to_qvec(a[t]) == want);
    }
  }
}

TEST_CASE("Theorem 1: dyadic and exact Claim 1 both certify; checker re-verifies both", "[theorem1][dyadic]") {
  struct Case { std::size_t H, n, d, dh; const char* kind; int near; };
  for (Case c : {Case{4, 5, 8, 5, "theorem1", 0}, Case{3, 4, 6, 4, "general", 0}, Case{3, 4, 6, 2, "theorem1", 0},
                 Case{3, 4, 7, 4, "general", 24},      // R_1 nearly singular (condition about 2^24)
                 Case{3, 4, 7, 4, "theorem1", 40}}) {  // worse than double's solve can resolve well
    const std::size_t r = std::min(c.n, c.dh), T = c.H * (r - 1) + 1;
    auto ds = generate_attention_dataset(c.kind, T, c.n, c.d, std::nullopt, 41 + c.H + c.n);
    if (c.near) dy_near_singular(ds, 0, c.near);
    INFO(c.H << " " << c.n << " " << c.d << " " << c.dh << " " << c.kind << " near 2^-" << c.near);
    for (bool exact : {true, false}) {
      INFO("exact fit " << exact);
      auto res = dy_build(ds, c.H, c.dh, exact);
      CHECK(res.memorized);
      CHECK(res.rank_Z_lower == T);
      CHECK(memcert_checker::verify_certificate_text(res.certificate.dump()).valid);
      for (const auto& tr : res.trace) {
        const auto& hd = res.weights.heads[tr.head - 1];
        // Targets are the logits the weights give (both routes), recomputed through the model's own
        // exact forward pass.
        for (std::size_t i = 0; i < tr.group.size(); ++i) {
          const std::size_t t = tr.group[i];
          CHECK(mha_logits_exact(ds.contexts[t], hd.WK, hd.WQ, dy_row_of(ds.queries, t)) == tr.targets[i]);
        }
        if (tr.group.empty()) continue;
        const std::size_t k = tr.group.size();
        QMatrix QR(c.d, k);
        for (std::size_t i = 0; i < k; ++i)
          for (std::size_t cc = 0; cc < c.d; ++cc) QR(cc, i) = ds.queries(tr.group[i], cc);
        QMatrix WQk(c.d, k);
        for (std::size_t cc = 0; cc < c.d; ++cc)
          for (std::size_t i = 0; i < k; ++i) WQk(cc, i) = hd.WQ(cc, i);
        const QMatrix PQ = mat_mul(mat_transpose(WQk), QR);
        if (exact) {
          CHECK(PQ == QMatrix::identity(k));  // the exact left inverse
        } else {
          for (std::size_t cc = 0; cc < c.d; ++cc)
            for (std::size_t i = 0; i < k; ++i) CHECK(dy_is_dyadic(hd.WQ(cc, i), 64));
          if (!c.near)  // well conditioned: P Q_R is the identity up to the 40-bit rounding
            for (std::size_t i = 0; i < k; ++i)
              for (std::size_t j = 0; j < k; ++j)
                CHECK(std::fabs(rational_to_double(PQ(i, j)) - (i == j ? 1.0 : 0.0)) < 1e-4);
        }
      }
    }
  }
}

TEST_CASE("int128 helpers: bit lengths and conversions against GMP", "[claim1][int128]") {
  // Second method: GMP's own bit length and value of the same number built from two 64-bit halves.
  std::mt19937_64 rng(41);
  using memcert::mahdavi24::int128::i128;
  using memcert::mahdavi24::int128::u128;
  std::vector<i128> xs = {0, 1, -1, 2, (i128(1) << 63), (i128(1) << 64), -(i128(1) << 64) + 1,
                          static_cast<i128>((~u128(0)) >> 1), -static_cast<i128>((~u128(0)) >> 1)};
  for (int k = 0; k < 500; ++k) {
    const u128 u = (u128(rng()) << 64 | rng()) >> (rng() % 128);
    xs.push_back(rng() % 2 ? static_cast<i128>(u >> 1) : -static_cast<i128>(u >> 1));
  }
  for (i128 x : xs) {
    const memcert::Integer z = memcert::mahdavi24::int128::to_integer(x);
    const u128 mag = x < 0 ? static_cast<u128>(-x) : static_cast<u128>(x);
    memcert::Integer hi(static_cast<unsigned long>(mag >> 64)), lo(static_cast<unsigned long>(mag & ~0UL));
    memcert::Integer ref = (hi << 64) + lo;
    if (x < 0) ref = -ref;
    CHECK(z == ref);
    const int want = sgn(ref) == 0 ? 0 : static_cast<int>(mpz_sizeinbase(ref.get_mpz_t(), 2));
    CHECK(memcert::mahdavi24::int128::bits(x) == want);
  }
}

namespace {
// (E x)_j exactly in GMP: E integer-valued doubles, x integers.
Integer dy_exact_row(const std::vector<double>& E, std::size_t j, std::size_t d, const std::vector<Integer>& x) {
  Integer acc = 0, e;
  for (std::size_t c = 0; c < d; ++c) {
    mpz_set_d(e.get_mpz_t(), E[j * d + c]);
    acc += e * x[c];
  }
  return acc;
}
bool dy_in(const Integer& v, double lo, double hi) { return cmp(v, lo) >= 0 && cmp(v, hi) <= 0; }
// Claim 1 on the group {0, 1, 2, 3} with U drawn as the construction draws it (entries in {-2..2} / 8):
// the exact logits and the bounds route's output for the listed examples.
struct DyBounds {
  ZExamples z;
  std::optional<ScaledMatrix> P;
  ScaledMatrix U;
  std::vector<ScaledVector> exact, fallback;
  std::vector<ScaledBounds> bounds;
};
DyBounds dy_bounds(const AttentionDataset& ds, std::mt19937_64& rng, const std::vector<std::size_t>& examples) {
  DyBounds r;
  r.z = z_examples(ds, 64);
  r.P = claim1_dyadic_left_inverse(r.z, {0, 1, 2, 3});
  REQUIRE(r.P);
  std::uniform_int_distribution<int> uu(-2, 2);
  QMatrix U(ds.d(), 4);
  for (auto& x : U.data()) { x = Rational(uu(rng), 8); x.canonicalize(); }
  r.U = scaled_from_qmat(U);
  r.exact = claim1_logits_dyadic(r.z, r.U, *r.P, examples);
  claim1_logit_bounds(r.z, r.U, *r.P, examples, r.bounds, r.fallback);
  REQUIRE(r.bounds.size() == examples.size());
  return r;
}
}  // namespace

TEST_CASE("context_times_bounds encloses E x (exact GMP products), also under cancellation", "[claim1][bounds]") {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 60; ++round) {
    const std::size_t n = 1 + rng() % 9, d = 1 + rng() % 70;
    const int ebits = 1 + static_cast<int>(rng() % 52), xbits = 1 + static_cast<int>(rng() % 100);
    INFO("round " << round << " n " << n << " d " << d << " ebits " << ebits << " xbits " << xbits);
    std::vector<double> E(n * d);
    for (auto& v : E) v = std::ldexp(double(rng() >> 11), ebits - 53) - std::ldexp(double(rng() >> 11), ebits - 53);
    for (auto& v : E) v = std::trunc(v);
    std::vector<Integer> x(d);
    std::vector<double> xd(d);
    for (std::size_t c = 0; c < d; ++c) {
      Integer v = 0;
      for (int b = 0; b < xbits; b += 32) v = (v << 32) + Integer(static_cast<unsigned long>(rng() & 0xffffffffu));
      v >>= static_cast<unsigned long>((xbits + 31) / 32 * 32 - xbits);
      if (rng() & 1) v = -v;
      x[c] = v;
      xd[c] = v.get_d();  // truncation: within 2u, as the contract allows
    }
    if (round % 3 == 0 && d >= 2) {  // cancellation: the last column undoes the rest in row 0 (near zero)
      double s = 0;
      for (std::size_t c = 0; c + 1 < d; ++c) s += E[c] * xd[c];
      if (xd[d - 1] != 0) E[d - 1] = std::trunc(-s / xd[d - 1]);
    }
    std::vector<double> lo(n), hi(n);
    context_times_bounds(E.data(), n, d, xd.data(), lo.data(), hi.data());
    for (std::size_t j = 0; j < n; ++j) {
      const Integer want = dy_exact_row(E, j, d, x);
      CHECK(dy_in(want, lo[j], hi[j]));
      // Not vacuous: the width is about gamma_d times sum |E| |x| (at most 4 d u of it, plus an ulp or two).
      double S = 0;
      for (std::size_t c = 0; c < d; ++c) S += std::fabs(E[j * d + c] * xd[c]);
      CHECK(hi[j] - lo[j] <= 4.0 * double(d + 4) * std::ldexp(S, -52) + std::ldexp(std::fabs(lo[j]) + std::fabs(hi[j]), -50) + 1e-300);
    }
  }
}

TEST_CASE("claim1_logit_bounds enclose the exact logits; wide enclosures take the exact route", "[claim1][bounds]") {
  std::mt19937_64 rng(23);
  for (int near : {0, 40}) {
    auto ds = generate_attention_dataset("theorem1", 12, 4, 7, std::nullopt, 9);
    if (near) dy_near_singular(ds, 0, near);
    INFO("near 2^-" << near);
    const std::vector<std::size_t> later{4, 5, 6, 7, 8, 9, 10, 11};
    const DyBounds r = dy_bounds(ds, rng, later);
    const std::vector<ScaledVector>& want = r.exact;
    const std::vector<ScaledBounds>& bd = r.bounds;
    const std::vector<ScaledVector>& ex = r.fallback;
    std::size_t bounded = 0;
    for (std::size_t i = 0; i < later.size(); ++i) {
      if (bd[i].lo.empty()) {  // the exact route: the same logits
        CHECK(scaled_to_qvec(ex[i]) == scaled_to_qvec(want[i]));
        continue;
      }
      ++bounded;
      const QVector a = scaled_to_qvec(want[i]);
      for (std::size_t j = 0; j < a.size(); ++j) {
        const Rational lo = Rational(bd[i].lo[j]) * bd[i].factor, hi = Rational(bd[i].hi[j]) * bd[i].factor;
        CHECK(lo <= a[j]);
        CHECK(a[j] <= hi);
        CHECK(rational_to_double(hi - lo) <= std::ldexp(1.0, -36));
      }
      // The MPFR enclosure built from the bounds contains the logits too, for the factor and its negation
      // (the ends swap), at 64 bits and at 20 (where rounding the factor and the products shows).
      for (const int sign : {1, -1})
        for (const mpfr_prec_t prec : {64, 20}) {
          ScaledBounds sb = bd[i];
          if (sign < 0) sb.factor = -sb.factor;
          AffineLogits L(sb, nullptr, prec);
          mpfr_t l, h, cl, ch, tmp;
          mpfr_inits2(prec, l, h, cl, ch, tmp, (mpfr_ptr)0);
          for (std::size_t j = 0; j < a.size(); ++j) {
            L.bounds(Rational(0), l, h, j, cl, ch, tmp);
            const Rational sa = sign < 0 ? Rational(-a[j]) : a[j];
            CHECK(mpfr_cmp_q(l, sa.get_mpq_t()) <= 0);
            CHECK(mpfr_cmp_q(h, sa.get_mpq_t()) >= 0);
          }
          mpfr_clears(l, h, cl, ch, tmp, (mpfr_ptr)0);
        }
    }
    if (near == 0) CHECK(bounded == later.size());  // well-conditioned: every later example bounded
    if (near == 40) CHECK(bounded < later.size());  // huge logits: some take the exact route
  }
}

TEST_CASE("AffineLogits from bounds: point bounds times a rational factor enclosed at every precision", "[claim1][bounds]") {
  // lo = hi = x: the enclosure of x q is as tight as its two roundings allow, so any end rounded the wrong
  // way (or the factor's wrong end taken) excludes x q for some x and q.
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(-1000, 1000);
  for (int trial = 0; trial < 400; ++trial) {
    ScaledBounds sb;
    for (int k = 0; k < 8; ++k) {
      const double x = k == 0 ? 0.0 : u(rng);
      sb.lo.push_back(x);
      sb.hi.push_back(x);
    }
    sb.factor = Rational(Integer(static_cast<long>(rng() % 2000001) - 1000000), Integer(static_cast<long>(1 + rng() % 999983)));
    for (const mpfr_prec_t prec : {64, 24, 12}) {
      AffineLogits L(sb, nullptr, prec);
      mpfr_t l, h, cl, ch, tmp;
      mpfr_inits2(prec, l, h, cl, ch, tmp, (mpfr_ptr)0);
      for (std::size_t j = 0; j < sb.lo.size(); ++j) {
        L.bounds(Rational(0), l, h, j, cl, ch, tmp);
        const Rational exact = Rational(sb.lo[j]) * sb.factor;
        INFO("trial " << trial << " prec " << prec << " x " << sb.lo[j] << " q " << sb.factor.get_str());
        CHECK(mpfr_cmp_q(l, exact.get_mpq_t()) <= 0);
        CHECK(mpfr_cmp_q(h, exact.get_mpq_t()) >= 0);
      }
      mpfr_clears(l, h, cl, ch, tmp, (mpfr_ptr)0);
    }
  }
}

TEST_CASE("claim1_spreads from bounds equal the exact spread (scaled_saturation) for every j*", "[claim1][bounds]") {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 3; ++round) {
    auto ds = generate_attention_dataset(round == 2 ? "general" : "theorem1", 14, 5, 8, std::nullopt, 100 + round);
    const std::vector<std::size_t> others{4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
    const DyBounds r = dy_bounds(ds, rng, others);
    const std::vector<ScaledVector>& exact = r.exact;
    const std::vector<ScaledBounds>& bd = r.bounds;
    for (std::size_t js = 0; js < 5; ++js) {
      std::vector<const ScaledBounds*> ptr(others.size());
      for (std::size_t i = 0; i < others.size(); ++i) ptr[i] = &bd[i];
      const std::vector<std::size_t> jstar(others.size(), js);
      const auto sp = claim1_spreads(r.z, r.U, *r.P, others, ptr, jstar);
      for (std::size_t i = 0; i < others.size(); ++i) {
        if (bd[i].lo.empty()) { CHECK(!sp[i]); continue; }
        REQUIRE(sp[i]);
        // scaled_saturation's spread with j* = js: s = e_js makes js the unique arg-max.
        ScaledVector sv;
        sv.num.assign(5, Integer(0));
        sv.num[js] = 1;
        CHECK(*sp[i] == scaled_saturation(exact[i], sv).spread);
      }
    }
  }
}
