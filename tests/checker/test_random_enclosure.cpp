// Property test (fixed seed): enclosure-rank certificates with mu found by Sylvester's criterion in
// the test are accepted; a too-large radius or a doubled mu is rejected.
#include "catch.hpp"

#include "brute_q.hpp"
#include "cert_text.hpp"

using namespace cert_text;
using brute_q::QMat;

namespace {
std::string cert(const QMat& c, const QMat& r, std::size_t n, const std::vector<std::size_t>& rows,
                 const mpq_class& mu) {
  return R"({"kind":"enclosure-rank","claim":"rank-lower-enclosure","centre":)" + matrix(to_strings(c), n) +
         ",\"radius\":" + matrix(to_strings(r), n) + ",\"rows\":" + ints(rows) + ",\"mu\":\"" + mu.get_str() +
         "\",\"rank_lower\":" + std::to_string(rows.size()) + "}";
}
mpq_class pow2(int e) {
  mpq_class x = 1;
  for (int i = 0; i < (e < 0 ? -e : e); ++i) x *= 2;
  return e < 0 ? 1 / x : x;
}
}  // namespace

TEST_CASE("enclosure property: test-built certificates accepted, alterations rejected", "[checker][enclosure][random]") {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 60; ++trial) {
    std::size_t m = 1 + rng() % 5, n = 1 + rng() % 6, r = rng() % (std::min(m, n) + 1);
    QMat c = brute_q::random_low_rank(rng, m, n, r);
    std::vector<std::size_t> s = brute_q::independent_rows(c);
    const std::size_t k = s.size();
    QMat g(k, std::vector<mpq_class>(k, 0));  // G = C_S C_S^T
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t b = 0; b < k; ++b)
        for (std::size_t j = 0; j < n; ++j) g[a][b] += c[s[a]][j] * c[s[b]][j];
    // mu = the largest power of two (from 2^40 down) with G - mu I positive definite.
    mpq_class mu = 0;
    for (int e = 40; e >= -120 && mu == 0; --e) {
      QMat h = g;
      for (std::size_t a = 0; a < k; ++a) h[a][a] -= pow2(e);
      if (brute_q::positive_definite(h)) mu = pow2(e);
    }
    INFO("trial " << trial << ": " << m << "x" << n << ", k = " << k << ", mu = " << mu.get_str());
    REQUIRE(mu > 0);
    // Radius t = 2^-e on every entry with k n t^2 < mu.
    mpq_class t = 1;
    while (k * n * t * t >= mu) t /= 2;
    QMat rad(m, std::vector<mpq_class>(n, t));
    auto v = check(cert(c, rad, n, s, mu));
    INFO(v.reason);
    REQUIRE(v.valid);
    if (k == 0) continue;
    REQUIRE_FALSE(check(cert(c, rad, n, s, 2 * mu)).valid);  // G - 2 mu I is not positive definite
    QMat big = rad;
    big[s[rng() % k]][rng() % n] = mu + 1;  // (mu + 1)^2 > mu
    REQUIRE_FALSE(check(cert(c, big, n, s, mu)).valid);
    QMat neg = rad;
    neg[rng() % m][rng() % n] = -t;
    REQUIRE_FALSE(check(cert(c, neg, n, s, mu)).valid);
  }
}
