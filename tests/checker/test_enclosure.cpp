// kind "enclosure-rank": hand-computed certificates accepted, altered ones rejected with a reason.
#include "catch.hpp"

#include "cert_text.hpp"

using namespace cert_text;

namespace {
// C = [[2,0,0],[0,3,0]], S = {0,1}: G = diag(4, 9), G - 3 I = diag(1, 6) is positive definite, so
// sigma_2(C) >= sqrt(3). A radius r on every entry gives ||R_S||_F^2 = 6 r^2: r = 0.7 -> 2.94 < 3
// (accepted), r = 0.71 -> 3.0246 (rejected). mu = 4 makes G - mu I = diag(0, 5) singular.
const SMat kC = {{"2", "0", "0"}, {"0", "3", "0"}};
SMat radius(const std::string& r) { return SMat(2, std::vector<std::string>(3, r)); }

std::string enc_cert(const SMat& c, const SMat& r, const std::string& rows, const std::string& mu, std::size_t k) {
  return R"({"kind":"enclosure-rank","claim":"rank-lower-enclosure","centre":)" + matrix(c) + ",\"radius\":" +
         matrix(r) + ",\"rows\":" + rows + ",\"mu\":\"" + mu + "\",\"rank_lower\":" + std::to_string(k) + "}";
}
void rejected(const std::string& text, const std::string& reason_part) {
  auto v = check(text);
  INFO(text);
  INFO(v.reason);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find(reason_part) != std::string::npos);
}
}  // namespace

TEST_CASE("enclosure-rank: valid hand-computed certificates are accepted", "[checker][enclosure]") {
  auto v = check(enc_cert(kC, radius("0.7"), "[0,1]", "3", 2));
  INFO(v.reason);
  CHECK(v.valid);
  CHECK(v.claim == "rank-lower-enclosure");
  CHECK(check(enc_cert(kC, radius("1/4"), "[1,0]", "3", 2)).valid);
  CHECK(check(enc_cert(kC, radius("0"), "[0,1]", "3.999", 2)).valid);
  CHECK(check(enc_cert(kC, radius("1"), "[1]", "8.5", 1)).valid);  // G = [9]; 3 * 1 < 8.5
  CHECK(check(enc_cert(kC, radius("100"), "[]", "1", 0)).valid);   // k = 0 is vacuous
  // Off-diagonal Gram: C = [[1,1],[1,-1/2]] -> G = [[2,1/2],[1/2,5/4]], det = 5/2 - 1/4 = 9/4;
  // trace 13/4, so the eigenvalues are (13/4 +- 5/4)/2 = 1 and 9/4: mu = 0.999 works, mu = 1 does not
  // (G - I = [[1,1/2],[1/2,1/4]] is singular).
  SMat c2 = {{"1", "1"}, {"1", "-1/2"}};
  CHECK(check(enc_cert(c2, SMat(2, {"0.1", "0.1"}), "[0,1]", "0.999", 2)).valid);
  rejected(enc_cert(c2, SMat(2, {"0.1", "0.1"}), "[0,1]", "1", 2), "not positive definite");
}

TEST_CASE("enclosure-rank: altered certificates are rejected", "[checker][enclosure]") {
  rejected(enc_cert(kC, radius("0.71"), "[0,1]", "3", 2), "not below mu");         // radius too large
  rejected(enc_cert(kC, radius("0.5"), "[0,1]", "4", 2), "not positive definite");  // mu too large
  rejected(enc_cert(kC, radius("0"), "[0,1]", "0", 2), "mu");
  rejected(enc_cert(kC, radius("0"), "[0,1]", "-1", 2), "mu");
  rejected(enc_cert(kC, radius("-0.1"), "[0,1]", "3", 2), "negative radius");
  rejected(enc_cert(kC, SMat(2, {"0", "0"}), "[0,1]", "3", 2), "radius");  // shape differs
  rejected(enc_cert(kC, radius("0"), "[0,0]", "3", 2), "repeated");
  rejected(enc_cert(kC, radius("0"), "[0,2]", "3", 2), "out of range");
  rejected(enc_cert(kC, radius("0"), "[0]", "3", 2), "expected 2 indices");
  rejected(enc_cert(kC, radius("0"), "[0,1]", "3", 3), "rank_lower");
  SMat dependent = {{"2", "0", "0"}, {"4", "0", "0"}};
  rejected(enc_cert(dependent, radius("0"), "[0,1]", "1/1000000", 2), "not positive definite");
  SMat altered = kC;
  altered[1][1] = "1.5";  // G = diag(4, 2.25): mu = 3 is too large now
  rejected(enc_cert(altered, radius("0.1"), "[0,1]", "3", 2), "not positive definite");
  rejected(replace_first(enc_cert(kC, radius("0.5"), "[0,1]", "3", 2), "\"mu\":\"3\"", "\"mu\":3"), "mu");
  rejected(replace_first(enc_cert(kC, radius("0.5"), "[0,1]", "3", 2), "\"claim\":\"rank-lower-enclosure\"", "\"claim\":\"rank\""), "claim");
}
