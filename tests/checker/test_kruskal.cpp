// kind "kruskal": hand-computed certificates accepted, altered ones rejected with a reason.
#include "catch.hpp"


#include "cert_text.hpp"
#include "support/cpu_time.hpp"

using namespace cert_text;

namespace {
// Rows e1, e2, e3, e1+e2 in Q^3: every 2-subset is independent, {0,1,3} is dependent
// (1*e1 + 1*e2 - 1*(e1+e2) = 0), so the Kruskal rank is exactly 2.
const SMat kV = {{"1", "0", "0"}, {"0", "1", "0"}, {"0", "0", "1"}, {"1", "1", "0"}};
const std::string kLower = R"({"method":"exhaustive-mod-p","prime":"101"})";
const std::string kUpper = R"({"method":"dependent-subset","subset":[0,1,3],"coefficients":["1","1","-1"]})";

std::string kruskal_cert(const SMat& v, std::size_t lo, std::size_t up, const std::string& lower,
                         const std::string& upper, const std::string& extra = "") {
  return R"({"kind":"kruskal","claim":"kruskal-rank","vectors":)" + matrix(v) + ",\"kruskal_lower\":" +
         std::to_string(lo) + ",\"lower\":" + lower + ",\"kruskal_upper\":" + std::to_string(up) +
         ",\"upper\":" + upper + extra + "}";
}
void rejected(const std::string& text, const std::string& reason_part) {
  auto v = check(text);
  INFO(text);
  INFO(v.reason);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find(reason_part) != std::string::npos);
}
}  // namespace

TEST_CASE("kruskal: valid hand-computed certificates are accepted", "[checker][kruskal]") {
  auto v = check(kruskal_cert(kV, 2, 2, kLower, kUpper, ",\"kruskal_rank\":2"));
  INFO(v.reason);
  CHECK(v.valid);
  CHECK(v.kind == "kruskal");
  CHECK(check(kruskal_cert(kV, 0, 3, R"({"method":"trivial"})", R"({"method":"trivial"})")).valid);
  CHECK(check(kruskal_cert(kV, 1, 2, kLower, kUpper)).valid);
  CHECK(check(kruskal_cert(kV, 0, 2, kLower, kUpper)).valid);
  // Rows e1, e2, e1+e2 in Q^2: krank 2 = min(count, dim), upper trivial.
  SMat w = {{"1", "0"}, {"0", "1"}, {"1/2", "0.5"}};
  CHECK(check(kruskal_cert(w, 2, 2, R"({"method":"exhaustive-mod-p","prime":"5"})", R"({"method":"trivial"})")).valid);
  // A zero vector: krank 0, shown by the 1-subset {1} with coefficient 3.
  SMat z = {{"1", "2"}, {"0", "0"}};
  CHECK(check(kruskal_cert(z, 0, 0, R"({"method":"trivial"})",
                           R"({"method":"dependent-subset","subset":[1],"coefficients":["3"]})")).valid);
}

TEST_CASE("kruskal: altered certificates are rejected", "[checker][kruskal]") {
  // A lower bound on a set that has a dependent k-subset ({0,1,3} for k = 3).
  rejected(kruskal_cert(kV, 3, 3, kLower, R"({"method":"trivial"})"), "{0,1,3} are dependent");
  // Independent over Q but (1,5) = (1,0) modulo 5: the mod-p check is sound, so it rejects.
  SMat w = {{"1", "0"}, {"0", "1"}, {"1", "5"}};
  rejected(kruskal_cert(w, 2, 2, R"({"method":"exhaustive-mod-p","prime":"5"})", R"({"method":"trivial"})"), "dependent modulo 5");
  rejected(kruskal_cert(kV, 2, 2, R"({"method":"exhaustive-mod-p","prime":"100"})", kUpper), "not prime");
  rejected(kruskal_cert(kV, 2, 2, R"({"method":"trivial"})", kUpper), "trivial");
  // Dependency: altered coefficient, all zero, repeated or out-of-range index, wrong length.
  rejected(kruskal_cert(kV, 2, 2, kLower, replace_first(kUpper, "\"-1\"", "\"-2\"")), "not 0");
  rejected(kruskal_cert(kV, 2, 2, kLower, R"({"method":"dependent-subset","subset":[0,1,3],"coefficients":["0","0","0"]})"), "all zero");
  rejected(kruskal_cert(kV, 2, 2, kLower, replace_first(kUpper, "[0,1,3]", "[0,1,1]")), "repeated");
  rejected(kruskal_cert(kV, 2, 2, kLower, replace_first(kUpper, "[0,1,3]", "[0,1,4]")), "out of range");
  rejected(kruskal_cert(kV, 2, 2, kLower, replace_first(kUpper, "[0,1,3]", "[0,1]")), "expected 3 indices");
  rejected(kruskal_cert(kV, 2, 2, kLower, replace_first(kUpper, "\"-1\"]", "\"-1\",\"0\"]")), "expected 3 entries");
  // An altered vector breaks the dependency.
  SMat altered = kV;
  altered[3][2] = "1/1000";
  rejected(kruskal_cert(altered, 2, 2, kLower, kUpper), "not 0");
  // Consistency and ranges.
  rejected(kruskal_cert(kV, 3, 2, kLower, kUpper), "kruskal_lower > kruskal_upper");
  rejected(kruskal_cert(kV, 4, 4, kLower, R"({"method":"trivial"})"), "kruskal_lower");  // k > min(count, dim)
  rejected(kruskal_cert(kV, 2, 2, kLower, R"({"method":"trivial"})"), "trivial");
  rejected(kruskal_cert(kV, 2, 2, kLower, kUpper, ",\"kruskal_rank\":3"), "kruskal_rank");
  rejected(kruskal_cert(kV, 1, 2, kLower, kUpper, ",\"kruskal_rank\":2"), "kruskal_rank");
  rejected(replace_first(kruskal_cert(kV, 2, 2, kLower, kUpper), "\"vectors\"", "\"vector\""), "vectors: missing");
}

TEST_CASE("kruskal: exhaustive check is incremental (fast)", "[checker][kruskal]") {
  // 24 generic vectors in Q^6 (rows of a Vandermonde matrix with distinct nodes: every 6-subset is
  // independent), C(24, 6) = 134596 subsets.
  SMat v;
  for (int i = 1; i <= 24; ++i) {
    std::vector<std::string> row;
    mpz_class x = 1;
    for (int j = 0; j < 6; ++j, x *= i) row.push_back(x.get_str());
    v.push_back(row);
  }
  const double t0 = memcert_test::cpu_seconds();  // CPU time: the guard must not fail on a loaded machine
  auto r = check(kruskal_cert(v, 6, 6, R"({"method":"exhaustive-mod-p","prime":"1000000007"})", R"({"method":"trivial"})"));
  INFO(r.reason);
  CHECK(r.valid);
  CHECK(memcert_test::cpu_seconds() - t0 < 5.0);  // a hang guard, not a benchmark
}
