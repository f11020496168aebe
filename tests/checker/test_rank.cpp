// kind "rank": hand-computed certificates accepted, altered ones rejected with a reason.
#include "catch.hpp"

#include "cert_text.hpp"

using namespace cert_text;

namespace {
// A = [[1,2,3],[2,4,6],[1,0,1]]: rank 2 (row 1 = 2 * row 0).
//  lower: rows {0,2} x cols {0,1}: det [[1,2],[1,0]] = -2, non-zero mod 7.
//  upper: v = (-1,-1,1): A v = (0,0,0); v restricted to coordinate 2 is [1], non-singular.
//  multi-prime: squared row norms 14, 56, 2; the 3 largest multiply to 1568 < 41^2 = 1681, and
//  rank(A mod 41) = 2; 37^2 = 1369 is not enough.
const SMat kA = {{"1", "2", "3"}, {"2", "4", "6"}, {"1", "0", "1"}};
const std::string kLower = R"({"method":"minor-mod-p","prime":"7","rows":[0,2],"cols":[0,1]})";
const std::string kKernel = R"({"method":"kernel","kernel":[["-1","-1","1"]],"free_rows":[2]})";

std::string rank_cert(const SMat& a, std::size_t lo, std::size_t up, const std::string& lower,
                      const std::string& upper, const std::string& extra = "") {
  return R"({"kind":"rank","claim":"rank","matrix":)" + matrix(a) + ",\"rank_lower\":" + std::to_string(lo) +
         ",\"rank_upper\":" + std::to_string(up) + ",\"lower\":" + lower + ",\"upper\":" + upper + extra + "}";
}
}  // namespace

TEST_CASE("rank: valid hand-computed certificates are accepted", "[checker][rank]") {
  auto v = check(rank_cert(kA, 2, 2, kLower, kKernel));
  INFO(v.reason);
  CHECK(v.valid);
  CHECK(v.kind == "rank");
  CHECK(v.claim == "rank");
  CHECK(check(rank_cert(kA, 2, 2, kLower, kKernel, ",\"rank\":2")).valid);
  CHECK(check(rank_cert(kA, 2, 2, kLower, R"({"method":"multi-prime","primes":["41"]})")).valid);
  CHECK(check(rank_cert(kA, 2, 2, kLower, R"({"method":"multi-prime","primes":["37","5"]})")).valid);
  CHECK(check(rank_cert(kA, 0, 3, R"({"method":"trivial"})", R"({"method":"trivial"})")).valid);
  CHECK(check(rank_cert(kA, 2, 3, kLower, R"({"method":"trivial"})")).valid);
  // Rational entries: rows are scaled by the lcm of their denominators (same rank).
  SMat aq = {{"1/2", "1", "1.5"}, {"2e0", "4", "6"}, {"0.5", "0", "1/2"}};
  CHECK(check(rank_cert(aq, 2, 2, kLower, kKernel)).valid);
  CHECK(check(rank_cert(aq, 2, 2, kLower, R"({"method":"kernel","kernel":[["-1/3","-1/3","1/3"]],"free_rows":[2]})")).valid);
  // Full rank, kernel empty.
  SMat id = {{"1", "0"}, {"0", "1"}, {"1", "1"}};
  CHECK(check(rank_cert(id, 2, 2, R"({"method":"minor-mod-p","prime":"2","rows":[0,1],"cols":[0,1]})",
                        R"({"method":"kernel","kernel":[],"free_rows":[]})")).valid);
  // Empty matrix: rank 0.
  CHECK(check(rank_cert(SMat{}, 0, 0, R"({"method":"trivial"})", R"({"method":"trivial"})")).valid);
}

TEST_CASE("rank: altered certificates are rejected", "[checker][rank]") {
  auto rejected = [](const std::string& text, const std::string& reason_part) {
    auto v = check(text);
    INFO(text);
    INFO(v.reason);
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find(reason_part) != std::string::npos);
  };
  // An altered matrix entry breaks the kernel vector.
  SMat altered = kA;
  altered[2][2] = "2";
  rejected(rank_cert(altered, 2, 2, kLower, kKernel), "upper.kernel[0]");
  // A wrong minor index: rows {0,1} x cols {0,1} = [[1,2],[2,4]] is singular.
  rejected(rank_cert(kA, 2, 2, R"({"method":"minor-mod-p","prime":"7","rows":[0,1],"cols":[0,1]})", kKernel), "minor is zero");
  // The minor is non-zero over Q (-2) but zero modulo 2: mod-p checks are sound, not complete.
  rejected(rank_cert(kA, 2, 2, R"({"method":"minor-mod-p","prime":"2","rows":[0,2],"cols":[0,1]})", kKernel), "minor is zero");
  // Composite and non-numeric "primes".
  rejected(rank_cert(kA, 2, 2, replace_first(kLower, "\"7\"", "\"9\""), kKernel), "not prime");
  rejected(rank_cert(kA, 2, 2, replace_first(kLower, "\"7\"", "\"1\""), kKernel), "not prime");
  rejected(rank_cert(kA, 2, 2, replace_first(kLower, "\"7\"", "\"seven\""), kKernel), "lower.prime");
  rejected(rank_cert(kA, 2, 2, replace_first(kLower, "\"7\"", "7"), kKernel), "lower.prime");
  rejected(rank_cert(kA, 2, 2, replace_first(kLower, "\"7\"", "\"9223372036854775837\""), kKernel), "exceeds");
  // A kernel vector with one entry changed.
  rejected(rank_cert(kA, 2, 2, kLower, replace_first(kKernel, "\"-1\",\"-1\"", "\"-1\",\"-2\"")), "upper.kernel[0]");
  // A zero kernel vector satisfies A v = 0 but is not independent.
  rejected(rank_cert(kA, 2, 2, kLower, R"({"method":"kernel","kernel":[["0","0","0"]],"free_rows":[2]})"), "singular");
  // Wrong kernel count for the claimed upper bound.
  rejected(rank_cert(kA, 1, 1, R"({"method":"minor-mod-p","prime":"7","rows":[0],"cols":[0]})", kKernel), "expected cols - rank_upper");
  // Multi-prime: too few primes, repeated primes, rank mod p too high for the claim.
  rejected(rank_cert(kA, 2, 2, kLower, R"({"method":"multi-prime","primes":["37"]})"), "Hadamard");
  rejected(rank_cert(kA, 2, 2, kLower, R"({"method":"multi-prime","primes":["37","37"]})"), "repeated");
  rejected(rank_cert(kA, 2, 2, kLower, R"({"method":"multi-prime","primes":[]})"), "empty");
  rejected(rank_cert(kA, 1, 1, R"({"method":"minor-mod-p","prime":"7","rows":[0],"cols":[0]})",
                     R"({"method":"multi-prime","primes":["1000000007","998244353"]})"), "rank modulo");
  // Consistency: bounds out of order, trivial methods claiming too much, "rank" not what was shown.
  rejected(rank_cert(kA, 2, 1, kLower, kKernel), "rank_lower > rank_upper");
  rejected(rank_cert(kA, 2, 2, R"({"method":"trivial"})", kKernel), "trivial");
  rejected(rank_cert(kA, 2, 2, kLower, R"({"method":"trivial"})"), "trivial");
  rejected(rank_cert(kA, 2, 3, kLower, R"({"method":"trivial"})", ",\"rank\":2"), "rank:");
  rejected(rank_cert(kA, 2, 4, kLower, R"({"method":"trivial"})"), "rank_upper");
  rejected(rank_cert(kA, 2, 2, kLower, R"({"method":"magic"})"), "upper.method");
  // Malformed indices: repeated, out of range, negative, huge, fractional, strings, wrong count.
  for (const char* rows : {"[0,0]", "[0,3]", "[-1,2]", "[0,99999999999999999999999]", "[0,1.0]", "[\"0\",2]",
                           "[0]", "[0,1,2]", "{}", "0"}) {
    rejected(rank_cert(kA, 2, 2, replace_first(kLower, "[0,2]", rows), kKernel), "lower.rows");
  }
  // Shapes that do not match the data; non-numeric and non-string entries.
  rejected(replace_first(rank_cert(kA, 2, 2, kLower, kKernel), "\"rows\":3", "\"rows\":4"), "matrix.data");
  rejected(replace_first(rank_cert(kA, 2, 2, kLower, kKernel), "\"cols\":3", "\"cols\":2"), "matrix.data[0]");
  rejected(replace_first(rank_cert(kA, 2, 2, kLower, kKernel), "\"rows\":3", "\"rows\":-3"), "negative");
  SMat bad = kA;
  bad[1][1] = "four";
  rejected(rank_cert(bad, 2, 2, kLower, kKernel), "matrix.data[1][1]");
  bad[1][1] = "1/0";
  rejected(rank_cert(bad, 2, 2, kLower, kKernel), "zero denominator");
  rejected(replace_first(rank_cert(kA, 2, 2, kLower, kKernel), "\"4\"", "4"), "as a string");
  rejected(replace_first(rank_cert(kA, 2, 2, kLower, kKernel), "\"claim\":\"rank\"", "\"claim\":\"kruskal-rank\""), "claim");
  rejected(replace_first(rank_cert(kA, 2, 2, kLower, kKernel), ",\"upper\":", ",\"upper2\":"), "upper: missing");
  rejected(replace_first(rank_cert(kA, 2, 2, kLower, kKernel), "\"rank_lower\":2", "\"rank_lower\":\"2\""), "rank_lower");
}

TEST_CASE("rank: integer entries read as machine integers give the rational reading's verdicts", "[checker][rank]") {
  // The checker reads a matrix of plain integer strings (at most 18 digits) as machine integers and any
  // other matrix as exact rationals. Writing one entry as a fraction ("6/2") sends the same matrix down
  // the rational route: every verdict must agree, valid and altered alike.
  const std::string x = "999999999999999999", x2 = "1999999999999999998";  // 18 digits; 2x has 19
  // B = [[x, 1], [2x, 2]]: rank 1; kernel (1, -x); squared row norms x^2 + 1 and 4x^2 + 4.
  const SMat big = {{x, "1"}, {x2, "2"}};
  const std::string lo = R"({"method":"minor-mod-p","prime":"7","rows":[0],"cols":[1]})";
  const std::string ker = R"({"method":"kernel","kernel":[["1","-)" + x + R"("]],"free_rows":[0]})";
  // Hadamard: the 2-minor is at most sqrt((x^2 + 1)(4x^2 + 4)) ~ 2e36; five primes near 1e9 exceed it,
  // one does not.
  const std::string primes5 =
      R"({"method":"multi-prime","primes":["1000000007","1000000009","998244353","1000000021","1000000033"]})";
  const std::string primes1 = R"({"method":"multi-prime","primes":["1000000007"]})";
  SMat kA_frac = kA, big_frac = big;
  kA_frac[1][2] = "12/2";
  big_frac[0][1] = "2/2";
  SMat kA_bad = kA, kA_bad_frac = kA_frac;
  kA_bad[0][0] = "-0";  // a literal the fast path takes: the minor [[0,2],[1,0]] stays non-zero, the kernel breaks
  kA_bad_frac[0][0] = "0";
  struct Case {
    std::string ints, frac;
    bool valid;
  };
  const std::vector<Case> cases = {
      {rank_cert(kA, 2, 2, kLower, kKernel), rank_cert(kA_frac, 2, 2, kLower, kKernel), true},
      {rank_cert(kA, 2, 2, kLower, R"({"method":"multi-prime","primes":["41"]})"),
       rank_cert(kA_frac, 2, 2, kLower, R"({"method":"multi-prime","primes":["41"]})"), true},
      {rank_cert(kA, 2, 2, kLower, R"({"method":"multi-prime","primes":["37"]})"),
       rank_cert(kA_frac, 2, 2, kLower, R"({"method":"multi-prime","primes":["37"]})"), false},
      {rank_cert(kA, 1, 1, kLower, kKernel), rank_cert(kA_frac, 1, 1, kLower, kKernel), false},
      {rank_cert(kA_bad, 2, 2, kLower, kKernel), rank_cert(kA_bad_frac, 2, 2, kLower, kKernel), false},
      {rank_cert(big, 1, 1, lo, ker), rank_cert(big_frac, 1, 1, lo, ker), true},
      {rank_cert(big, 1, 1, lo, primes5), rank_cert(big_frac, 1, 1, lo, primes5), true},
      {rank_cert(big, 1, 1, lo, primes1), rank_cert(big_frac, 1, 1, lo, primes1), false},
      {rank_cert(big, 2, 2, R"({"method":"minor-mod-p","prime":"7","rows":[0,1],"cols":[0,1]})", R"({"method":"trivial"})"),
       rank_cert(big_frac, 2, 2, R"({"method":"minor-mod-p","prime":"7","rows":[0,1],"cols":[0,1]})", R"({"method":"trivial"})"),
       false},
  };
  for (const Case& c : cases) {
    auto vi = check(c.ints), vq = check(c.frac);
    INFO(c.ints);
    INFO(vi.reason + " | " + vq.reason);
    CHECK(vi.valid == c.valid);
    CHECK(vq.valid == c.valid);
    CHECK(vi.malformed == vq.malformed);
  }
}

TEST_CASE("rank: dyadic entries read as numerators and powers of two give the rational reading's verdicts", "[checker][rank]") {
  // Entries n/2^k in lowest terms (how memcert writes doubles) are read as machine numerators with their
  // exponents; an entry written otherwise ("2/4", "2/2") sends the same matrix down the rational route.
  // A = [[1/2, 3/4, 5], [1, 3/2, 10], [1/8, 1/16, 3]]: rank 2, B = [[2,3,20],[2,3,20],[2,1,48]], kernel
  // (31, -14, -1); the minor B[{0,2},{0,1}] = -4.
  const SMat a = {{"1/2", "3/4", "5"}, {"1", "3/2", "10"}, {"1/8", "1/16", "3"}};
  SMat a_frac = a, a_bad = a, a_bad_frac;
  a_frac[0][0] = "2/4";
  a_bad[2][1] = "3/16";  // the kernel vector breaks; the minor stays non-zero
  a_bad_frac = a_bad;
  a_bad_frac[0][0] = "2/4";
  const std::string lo = R"({"method":"minor-mod-p","prime":"7","rows":[0,2],"cols":[0,1]})";
  const std::string lo_singular = R"({"method":"minor-mod-p","prime":"7","rows":[0,1],"cols":[0,1]})";
  const std::string ker = R"({"method":"kernel","kernel":[["31","-14","-1"]],"free_rows":[2]})";
  const std::string big_p = R"({"method":"multi-prime","primes":["1000000007"]})";
  const std::string small_p = R"({"method":"multi-prime","primes":["41"]})";
  // Exponents past 64: A = [[3/2^70, 1], [3/2^69, 2]] has rank 1, B = [[3, 2^70], [3, 2^70]], kernel (2^70, -3).
  const std::string p70 = "1180591620717411303424", p69 = "590295810358705651712";
  const SMat e = {{"3/" + p70, "1"}, {"3/" + p69, "2"}};
  SMat e_frac = e;
  e_frac[0][1] = "2/2";
  const std::string e_lo = R"({"method":"minor-mod-p","prime":"7","rows":[0],"cols":[1]})";
  const std::string e_ker = R"({"method":"kernel","kernel":[[")" + p70 + R"(","-3"]],"free_rows":[1]})";
  const std::string e_primes5 =
      R"({"method":"multi-prime","primes":["1000000007","1000000009","998244353","1000000021","1000000033"]})";
  struct Case {
    std::string captured, tree;
    bool valid;
  };
  const std::vector<Case> cases = {
      {rank_cert(a, 2, 2, lo, ker), rank_cert(a_frac, 2, 2, lo, ker), true},
      {rank_cert(a, 2, 2, lo, big_p), rank_cert(a_frac, 2, 2, lo, big_p), true},
      {rank_cert(a, 2, 2, lo, small_p), rank_cert(a_frac, 2, 2, lo, small_p), false},
      {rank_cert(a, 2, 2, lo_singular, ker), rank_cert(a_frac, 2, 2, lo_singular, ker), false},
      {rank_cert(a_bad, 2, 2, lo, ker), rank_cert(a_bad_frac, 2, 2, lo, ker), false},
      {rank_cert(e, 1, 1, e_lo, e_ker), rank_cert(e_frac, 1, 1, e_lo, e_ker), true},
      {rank_cert(e, 1, 1, e_lo, e_primes5), rank_cert(e_frac, 1, 1, e_lo, e_primes5), true},
      {rank_cert(e, 1, 1, e_lo, big_p), rank_cert(e_frac, 1, 1, e_lo, big_p), false},
  };
  for (const Case& c : cases) {
    auto vc = check(c.captured), vt = check(c.tree);
    INFO(c.captured);
    INFO(vc.reason + " | " + vt.reason);
    CHECK(vc.valid == c.valid);
    CHECK(vt.valid == c.valid);
  }
}
