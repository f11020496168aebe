// kind "rank": hand-computed certificates accepted, altered ones rejected with a reason.
#include "catch.hpp"

#include "cert_text.hpp"

#include <random>

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

TEST_CASE("rank: multi-prime on a 48 x 45 matrix of rank 30 gives the rational reading's verdicts", "[checker][rank]") {
  // B = X Y with X = [I; 18 random rows] (48 x 30) and Y = [unit upper triangular | random] (30 x 45), entries
  // of X and Y in [-31, 31]: rank exactly 30 (the minor rows 0..29 x cols 0..29 is Y's triangle, det 1).
  // memcert's kind of primes (just below 2^23): the squared row norms of B are below 45 (30 * 31^2)^2
  // < 2^36, so the 31 largest multiply to below 2^1116 and 25 primes (product above 2^574, square above
  // 2^1148) suffice. Ten do not (square below 2^460): the 18 rows of X's random part give B rows of
  // squared norm about 45 * 30 * 320^2 > 2^27 each, more than 2^486 together. The same matrix with one
  // entry written "x/1" goes the rational route; with row 0 times 2^48 (entries past 2^52, squared norm
  // times 2^96: 27 primes suffice) the machine-integer route that reduces each prime's residues itself.
  // Every verdict must agree.
  std::mt19937_64 rng(47);
  auto entry = [&] { return static_cast<long>(rng() % 63) - 31; };
  std::vector<std::vector<long>> x(48, std::vector<long>(30, 0)), y(30, std::vector<long>(45, 0));
  for (std::size_t i = 0; i < 48; ++i)
    for (std::size_t t = 0; t < 30; ++t) x[i][t] = i < 30 ? (i == t) : entry();
  for (std::size_t t = 0; t < 30; ++t)
    for (std::size_t j = 0; j < 45; ++j) y[t][j] = j < 30 ? (j == t ? 1 : j > t ? entry() : 0) : entry();
  std::vector<std::vector<long>> b(48, std::vector<long>(45, 0));
  for (std::size_t i = 0; i < 48; ++i)
    for (std::size_t j = 0; j < 45; ++j)
      for (std::size_t t = 0; t < 30; ++t) b[i][j] += x[i][t] * y[t][j];
  auto text = [&](long scale0, bool frac) {
    SMat s(48, std::vector<std::string>(45));
    for (std::size_t i = 0; i < 48; ++i)
      for (std::size_t j = 0; j < 45; ++j) s[i][j] = std::to_string(b[i][j] * (i == 0 ? scale0 : 1));
    if (frac) s[47][44] += "/1";
    return s;
  };
  auto is_prime = [](std::uint64_t q) {
    for (std::uint64_t d = 2; d * d <= q; ++d)
      if (q % d == 0) return false;
    return q > 1;
  };
  std::vector<std::string> primes;
  for (std::uint64_t q = (std::uint64_t{1} << 23) - 1; primes.size() < 27; --q)
    if (is_prime(q)) primes.push_back(std::to_string(q));
  auto upper = [&](std::size_t count) {
    std::string u = R"({"method":"multi-prime","primes":[)";
    for (std::size_t i = 0; i < count; ++i) u += (i ? ",\"" : "\"") + primes[i] + "\"";
    return u + "]}";
  };
  std::string rows = "[", cols = "[";
  for (std::size_t i = 0; i < 30; ++i) rows += (i ? "," : "") + std::to_string(i);
  cols = rows += "]";
  const std::string lower = R"({"method":"minor-mod-p","prime":")" + primes[0] + R"(","rows":)" + rows + R"(,"cols":)" + cols + "}";
  struct Case {
    long scale0;
    std::size_t lo, up, count;
    bool valid;
    std::string reason;
  };
  const long s48 = long{1} << 48;
  const std::vector<Case> cases = {
      {1, 30, 30, 25, true, ""},
      {1, 30, 30, 10, false, "Hadamard"},
      {1, 0, 29, 25, false, "upper.primes[0]: rank modulo"},
      {1, 31, 31, 25, false, "lower: the 31x31 minor"},
      {s48, 30, 30, 27, true, ""},
      {s48, 30, 30, 10, false, "Hadamard"},
      {s48, 0, 29, 27, false, "upper.primes[0]: rank modulo"},
  };
  for (const Case& c : cases) {
    std::string lo = c.lo == 0 ? R"({"method":"trivial"})" : lower;
    if (c.lo == 31) {  // rows / cols 0..30: B's 31-minors are 0
      lo = R"({"method":"minor-mod-p","prime":")" + primes[0] + R"(","rows":)" + rows.substr(0, rows.size() - 1) +
           R"(,30],"cols":)" + rows.substr(0, rows.size() - 1) + ",30]}";
    }
    for (bool frac : {false, true}) {
      const auto v = check(rank_cert(text(c.scale0, frac), c.lo, c.up, lo, upper(c.count)));
      INFO("scale " << c.scale0 << ", lower " << c.lo << ", upper " << c.up << ", primes " << c.count << ", frac " << frac);
      INFO(v.reason);
      CHECK(v.valid == c.valid);
      if (!c.valid) CHECK(v.reason.find(c.reason) != std::string::npos);
    }
  }
}
