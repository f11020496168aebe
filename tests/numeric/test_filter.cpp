// The filter template (numeric/filter.hpp) driving a real predicate, the sign of a sum of doubles, through
// its tiers: outward-rounded double intervals, MPFR with directed rounding at increasing precisions, exact
// GMP rationals. Every decision is compared with the exact sign; a sum that cancels catastrophically must
// reach the tier whose precision can see it, a clear sign is decided in double, and an indeterminate
// answer is never taken as a decision.
#include "catch.hpp"

#include <mpfr.h>

#include <cmath>
#include <random>
#include <vector>

#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/numeric/rational.hpp"

using namespace memcert;

namespace {

// "sum > 0" at each tier, counting the evaluations.
struct SumPositive {
  std::vector<double> terms;
  int doubles = 0, mpfrs = 0, exacts = 0;

  UncertainBool in_double() {
    ++doubles;
    DInterval s = DInterval::point(0);
    for (double t : terms) s = s + DInterval::point(t);
    return s > DInterval::point(0);
  }
  UncertainBool in_mpfr(long prec) {
    ++mpfrs;
    mpfr_t lo, hi;
    mpfr_init2(lo, prec);
    mpfr_init2(hi, prec);
    mpfr_set_zero(lo, 1);
    mpfr_set_zero(hi, 1);
    for (double t : terms) {
      mpfr_add_d(lo, lo, t, MPFR_RNDD);
      mpfr_add_d(hi, hi, t, MPFR_RNDU);
    }
    UncertainBool r = UncertainBool::indeterminate();
    if (mpfr_sgn(lo) > 0) r = UncertainBool::certain(true);
    else if (mpfr_sgn(hi) <= 0) r = UncertainBool::certain(false);
    mpfr_clear(lo);
    mpfr_clear(hi);
    return r;
  }
  UncertainBool exact() {
    ++exacts;
    return UncertainBool::certain(exact_sum() > 0);
  }
  Rational exact_sum() const {  // the independent reference
    Rational s = 0;
    for (double t : terms) s += rational_from_double(t);
    return s;
  }
  Decision run() {
    return decide_escalating([&] { return in_double(); }, {64, 128, 256}, [&](long p) { return in_mpfr(p); },
                             [&] { return exact(); });
  }
};

}  // namespace

TEST_CASE("filter: a catastrophically cancelling sum escalates to exact and agrees with GMP", "[filter]") {
  // 2^400 + 1 - 2^400 (+1) and 2^400 + 1 - 2^400 - 2 (-1): every tier below 401 bits sees an enclosure
  // at least [0, 2^(400 - p)] wide around the small remainder.
  for (double rest : {0.0, -2.0}) {
    SumPositive p{{std::ldexp(1.0, 400), 1.0, -std::ldexp(1.0, 400), rest}};
    const Decision d = p.run();
    REQUIRE(d.decided());
    CHECK(d.kind == FilterTier::exact);
    CHECK(d.tier == 4);
    CHECK(d.mpfr_tiers == 3);
    CHECK(p.doubles == 1);
    CHECK(p.mpfrs == 3);
    CHECK(p.exacts == 1);
    CHECK(d.value.certainly_true() == (p.exact_sum() > 0));
    CHECK(d.value.certainly_true() == (rest == 0));
  }
}

TEST_CASE("filter: a clear sign is decided in double, the dearer tiers never run", "[filter]") {
  SumPositive p{{1.5, 2.0, -0.25}};
  const Decision d = p.run();
  REQUIRE(d.decided());
  CHECK(d.kind == FilterTier::floating);
  CHECK(d.tier == 0);
  CHECK(d.mpfr_tiers == 0);
  CHECK(p.mpfrs == 0);
  CHECK(p.exacts == 0);
  CHECK(d.value.certainly_true());
  CHECK(p.exact_sum() > 0);
}

TEST_CASE("filter: the first MPFR precision that sees the cancellation decides", "[filter]") {
  // 2^100 + 1 needs 101 bits: undecided in double and at 64 bits, decided at 128.
  SumPositive p{{std::ldexp(1.0, 100), 1.0, -std::ldexp(1.0, 100)}};
  const Decision d = p.run();
  REQUIRE(d.decided());
  CHECK(d.kind == FilterTier::mpfr);
  CHECK(d.precision == 128);
  CHECK(d.tier == 2);
  CHECK(d.mpfr_tiers == 2);
  CHECK(p.exacts == 0);
  CHECK(d.value.certainly_true());
}

TEST_CASE("filter: random cancelling sums, every decision is GMP's sign", "[filter]") {
  std::mt19937_64 g(20261128);
  std::uniform_int_distribution<int> ex(0, 600), small(-30, 30), n(1, 6);
  int by_kind[4] = {0, 0, 0, 0};
  for (int trial = 0; trial < 2000; ++trial) {
    SumPositive p;
    const int k = n(g);
    for (int i = 0; i < k; ++i) {
      const double big = std::ldexp(1.0 + double(g() % 1024) / 1024, ex(g));
      p.terms.push_back(big);
      p.terms.push_back(std::ldexp(double(small(g)), small(g)));
      if (g() % 2) p.terms.push_back(-big);  // cancels exactly, leaving the small terms
    }
    const Decision d = p.run();
    REQUIRE(d.decided());
    REQUIRE(d.value.certainly_true() == (p.exact_sum() > 0));
    ++by_kind[static_cast<int>(d.kind)];
  }
  // Every tier is exercised by the sample.
  CHECK(by_kind[static_cast<int>(FilterTier::floating)] > 0);
  CHECK(by_kind[static_cast<int>(FilterTier::mpfr)] > 0);
  CHECK(by_kind[static_cast<int>(FilterTier::exact)] > 0);
}

TEST_CASE("filter: an indeterminate tier is never trusted; no decision means undecided", "[filter]") {
  // Tiers that have an opinion but are uncertain must be passed over.
  int calls = 0;
  Decision d = decide([&] { ++calls; return UncertainBool::indeterminate(); },
                      [&] { ++calls; return UncertainBool::indeterminate(); },
                      [&] { ++calls; return UncertainBool::certain(false); },
                      [&] { ++calls; return UncertainBool::certain(true); });
  CHECK(calls == 3);
  CHECK(d.tier == 2);
  CHECK(d.value.certainly_false());

  d = decide([] { return UncertainBool::indeterminate(); }, [] { return UncertainBool::indeterminate(); });
  CHECK_FALSE(d.decided());
  CHECK(d.tier == 2);

  // No exact method and every precision too weak: undecided, after every tier ran.
  SumPositive p{{std::ldexp(1.0, 400), 1.0, -std::ldexp(1.0, 400)}};
  d = decide_escalating([&] { return p.in_double(); }, {64, 128}, [&](long prec) { return p.in_mpfr(prec); },
                        kNoExactTier);
  CHECK_FALSE(d.decided());
  CHECK(d.kind == FilterTier::undecided);
  CHECK(d.tier == 4);
  CHECK(d.mpfr_tiers == 2);
  CHECK(p.mpfrs == 2);

  // The optional form: the first stage with an answer wins, later stages do not run.
  int later = 0;
  auto r = filtered<int>([] { return std::optional<int>(); }, [] { return std::optional<int>(7); },
                         [&] { ++later; return std::optional<int>(8); });
  CHECK(r == 7);
  CHECK(later == 0);
}
