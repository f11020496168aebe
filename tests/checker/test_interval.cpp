// MPFR intervals: every result contains the true value, checked against known constants and
// exact rational identities.
#include "catch.hpp"

#include "../../src/checker/kernel/interval.hpp"

using memcert_checker::Interval;

namespace {
mpq_class lo(const Interval& x) { mpq_class q; mpfr_get_q(q.get_mpq_t(), x.lo()); return q; }
mpq_class hi(const Interval& x) { mpq_class q; mpfr_get_q(q.get_mpq_t(), x.hi()); return q; }
}  // namespace

TEST_CASE("interval: enclosures of rationals and arithmetic", "[checker][interval]") {
  mpq_class third(1, 3), seventh(-1, 7);
  Interval a(third), b(seventh);
  CHECK(a.contains(third));
  CHECK(lo(a) < third);  // 1/3 is not a binary float: the enclosure is strict
  CHECK(hi(a) > third);
  CHECK((a + b).contains(third + seventh));
  CHECK((a - b).contains(third - seventh));
  CHECK((a * b).contains(third * seventh));
  CHECK((a / b).contains(third / seventh));
  CHECK((a * b).lower_above(mpq_class(-1, 20)));
  CHECK((a * b).upper_below(mpq_class(-1, 22)));
  Interval wide(mpq_class(-2), mpq_class(3));
  Interval w2 = wide * wide;  // [-6, 9]
  CHECK(lo(w2) == -6);
  CHECK(hi(w2) == 9);
  Interval q = a / wide;  // divisor contains 0: unbounded, certifies nothing
  CHECK_FALSE(q.is_positive());
  CHECK_FALSE(q.upper_below(mpq_class(1000000)));
  Interval copy = a;
  copy = b;
  CHECK(copy.contains(seventh));
  Interval acc(mpq_class(0), 256);  // accumulate by move assignment; precision follows the operands
  for (int i = 1; i <= 10; ++i) acc = acc + Interval(mpq_class(1, i));
  CHECK(acc.contains(mpq_class(7381, 2520)));  // H_10
  CHECK(acc.precision() == 256);
}

TEST_CASE("interval: exp, log, sqrt enclose the true values", "[checker][interval]") {
  // e = 2.718281828459045235360287..., log 2 = 0.693147180559945309417232...
  Interval e = exp(Interval(mpq_class(1)));
  CHECK(e.lower_above(mpq_class("2718281828459045235360287/1000000000000000000000000")));
  CHECK(e.upper_below(mpq_class("2718281828459045235360288/1000000000000000000000000")));
  Interval l2 = log(Interval(mpq_class(2)));
  CHECK(l2.lower_above(mpq_class("693147180559945309417232/1000000000000000000000000")));
  CHECK(l2.upper_below(mpq_class("693147180559945309417233/1000000000000000000000000")));
  Interval s = sqrt(Interval(mpq_class(2)));
  CHECK(lo(s) * lo(s) < 2);
  CHECK(hi(s) * hi(s) > 2);
  CHECK((s * s).contains(2));
  CHECK(log(exp(Interval(mpq_class(3, 10)))).contains(mpq_class(3, 10)));
  CHECK_FALSE(log(Interval(mpq_class(-1), mpq_class(1))).is_valid());
  CHECK_FALSE(sqrt(Interval(mpq_class(-1))).is_valid());
  CHECK(sqrt(Interval(mpq_class(0))).contains(0));
  // Softmax-style: exp(a) / (exp(a) + exp(b)) for a = 1, b = 2 is 1/(1+e) ~ 0.2689414213699951.
  Interval ea = exp(Interval(mpq_class(1))), eb = exp(Interval(mpq_class(2)));
  Interval sm = ea / (ea + eb);
  CHECK(sm.lower_above(mpq_class("26894142136/100000000000")));
  CHECK(sm.upper_below(mpq_class("26894142137/100000000000")));
}
