// Cross-check with the engine (memcert_core): every certificate the engine writes is accepted by the
// independent checker, and altering one of its numbers gets it rejected. This is the only checker
// test that uses engine code; the checker library itself never does.
#include "catch.hpp"

#include <random>

#include "memcert/cert/linalg_cert.hpp"
#include "memcert/checker/checker.hpp"

using namespace memcert;

namespace {
QMatrix random_low_rank(std::mt19937_64& rng, std::size_t m, std::size_t n, std::size_t r) {
  QMatrix u(m, r), v(r, n);
  for (auto& x : u.data()) x = Rational(static_cast<long>(rng() % 9) - 4, 1 + rng() % 3);
  for (auto& x : v.data()) x = Rational(static_cast<long>(rng() % 9) - 4);
  for (auto& x : u.data()) x.canonicalize();
  return mat_mul(u, v);
}
memcert_checker::Verdict verify(const nlohmann::json& j) { return memcert_checker::verify_certificate_text(j.dump()); }
}  // namespace

TEST_CASE("engine: rank certificates from qmat_rank_certified are accepted", "[checker][engine]") {
  std::mt19937_64 rng(31);
  int altered = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::size_t m = 1 + rng() % 9, n = 1 + rng() % 9, r = rng() % (std::min(m, n) + 1);
    QMatrix a = random_low_rank(rng, m, n, r);
    RankCertificate c = qmat_rank_certified(a);
    nlohmann::json j = rank_certificate_to_json(a, c);
    auto v = verify(j);
    INFO(j.dump());
    INFO(v.reason);
    REQUIRE(v.valid);
    if (j["upper"]["method"].get<std::string>() == "kernel" && c.rank > 0) {  // alter one kernel entry where A's column != 0
      std::size_t col = 0;
      while ([&] { for (std::size_t i = 0; i < m; ++i) if (a(i, col) != 0) return false; return true; }()) ++col;
      nlohmann::json k = j;
      k["upper"]["kernel"][0][col] = "12345/7";
      REQUIRE_FALSE(verify(k).valid);
      ++altered;
    }
  }
  CHECK(altered > 5);
}

TEST_CASE("engine: Kruskal and enclosure certificates are accepted", "[checker][engine]") {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 30; ++trial) {
    std::size_t t = 2 + rng() % 6, d = 1 + rng() % 4;
    QMatrix vecs(t, d);
    for (auto& x : vecs.data()) x = Rational(static_cast<long>(rng() % 5) - 2);
    KruskalResult kr = qmat_kruskal_rank(vecs);
    nlohmann::json j = kruskal_certificate_to_json(vecs, kr);
    auto v = verify(j);
    INFO(j.dump());
    INFO(v.reason);
    REQUIRE(v.valid);
  }
  for (int trial = 0; trial < 20; ++trial) {
    std::size_t m = 1 + rng() % 4, n = 2 + rng() % 4;
    QMatrix centre(m, n), radius(m, n, Rational(1, 1000000));
    for (auto& x : centre.data()) x = Rational(static_cast<long>(rng() % 9) - 4);
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < std::min(m, n); ++i) rows.push_back(i);
    auto c = enclosure_rank_lower(centre, radius, rows);
    if (!c) continue;  // rows dependent: nothing to certify
    nlohmann::json j = enclosure_rank_certificate_to_json(centre, radius, *c);
    auto v = verify(j);
    INFO(j.dump());
    INFO(v.reason);
    REQUIRE(v.valid);
    nlohmann::json bigger = j;
    bigger["mu"] = rational_to_string(c->mu * 1000000);  // far above sigma_min^2
    REQUIRE_FALSE(verify(bigger).valid);
  }
}
