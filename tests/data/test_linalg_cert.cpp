// The certificate writers emit exactly the agreed JSON formats (memcert/cert/linalg_cert.hpp). Built from
// hand-made certificates so this suite does not depend on the linear-algebra engine.
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/data/matrix_io.hpp"
#include "npy_fixtures.hpp"

using namespace memcert;

namespace {
QMatrix mat(std::size_t r, std::size_t c, std::initializer_list<Rational> v) {
  QMatrix m(r, c);
  std::size_t k = 0;
  for (const Rational& x : v) m.data()[k++] = x;
  return m;
}
}  // namespace

TEST_CASE("rank certificate with a kernel upper bound", "[cert]") {
  // Rows (1, 2, 3) and (2, 4, 6): rank 1; kernel spanned by (-2, 1, 0) and (-3, 0, 1).
  QMatrix a = mat(2, 3, {1, 2, 3, Rational(1, 2), 1, Rational(3, 2)});
  RankCertificate c;
  c.rows = 2;
  c.cols = 3;
  c.rank = 1;
  c.prime = 2147483647;
  c.minor_rows = {0};
  c.minor_cols = {0};
  c.kernel = mat(3, 2, {-2, -3, 1, 0, 0, 1});
  c.kernel_free_rows = {1, 2};
  nlohmann::json j = rank_certificate_to_json(a, c);
  CHECK(j["kind"] == "rank");
  CHECK(j["claim"] == "rank");
  CHECK(j["matrix"]["rows"] == 2);
  CHECK(j["matrix"]["cols"] == 3);
  CHECK(j["matrix"]["data"][1][0] == "1/2");
  CHECK(j["rank_lower"] == 1);
  CHECK(j["rank_upper"] == 1);
  CHECK(j["lower"] == nlohmann::json::parse(R"({"method":"minor-mod-p","prime":"2147483647","rows":[0],"cols":[0]})"));
  CHECK(j["upper"]["method"] == "kernel");
  CHECK(j["upper"]["kernel"] == nlohmann::json::parse(R"([["-2","1","0"],["-3","0","1"]])"));
  CHECK(j["upper"]["free_rows"] == nlohmann::json::parse("[1,2]"));
  // The written kernel vectors really are in the kernel (the transposition is right).
  QMatrix k = json_to_qmat(j["upper"]["kernel"], "cert", "kernel");
  CHECK(mat_mul(a, mat_transpose(k)) == QMatrix(2, 2, Rational(0)));
}

TEST_CASE("rank certificate of full rank has a trivial upper bound", "[cert]") {
  QMatrix a = mat(2, 3, {1, 0, 0, 0, 1, 0});
  RankCertificate c;
  c.rank = 2;
  c.prime = 2147483629;
  c.minor_rows = {0, 1};
  c.minor_cols = {0, 1};
  nlohmann::json j = rank_certificate_to_json(a, c);
  CHECK(j["upper"] == nlohmann::json::parse(R"({"method":"trivial"})"));
  CHECK(j["rank_upper"] == 2);
  c.minor_rows = {0};
  CHECK_THROWS_AS(rank_certificate_to_json(a, c), std::invalid_argument);
}

TEST_CASE("kruskal certificate: dependent subset or trivial", "[cert]") {
  QMatrix v = mat(3, 2, {1, 0, 0, 1, 1, 1});
  KruskalResult r;
  r.count = 3;
  r.dim = 2;
  r.lower = r.upper = 2;
  r.prime = 2147483647;
  nlohmann::json j = kruskal_certificate_to_json(v, r);
  CHECK(j["kind"] == "kruskal");
  CHECK(j["claim"] == "kruskal-rank");
  CHECK(j["vectors"]["rows"] == 3);
  CHECK(j["kruskal_lower"] == 2);
  CHECK(j["lower"] == nlohmann::json::parse(R"({"method":"exhaustive-mod-p","prime":"2147483647"})"));
  CHECK(j["kruskal_upper"] == 2);
  CHECK(j["upper"] == nlohmann::json::parse(R"({"method":"trivial"})"));

  QMatrix w = mat(3, 3, {1, 0, 0, 2, 0, 0, 0, 1, 0});
  r.count = 3;
  r.dim = 3;
  r.lower = r.upper = 1;
  r.dependent_subset = {0, 1};
  r.dependent_coefficients = {Rational(2), Rational(-1)};
  j = kruskal_certificate_to_json(w, r);
  CHECK(j["upper"] == nlohmann::json::parse(R"({"method":"dependent-subset","subset":[0,1],"coefficients":["2","-1"]})"));
  r.dependent_subset.clear();
  r.dependent_coefficients.clear();
  CHECK_THROWS_AS(kruskal_certificate_to_json(w, r), std::invalid_argument);
}

TEST_CASE("enclosure-rank certificate", "[cert]") {
  QMatrix centre = mat(2, 2, {1, 0, 0, 1}), radius = mat(2, 2, {Rational(1, 100), 0, 0, Rational(1, 100)});
  EnclosureRankCertificate c;
  c.rows = {0, 1};
  c.mu = Rational(1, 2);
  c.radius_frobenius_sq = Rational(2, 10000);
  c.method = "exact-ldl";
  nlohmann::json j = enclosure_rank_certificate_to_json(centre, radius, c);
  CHECK(j["kind"] == "enclosure-rank");
  CHECK(j["claim"] == "rank-lower-enclosure");
  CHECK(j["centre"]["data"][1][1] == "1");
  CHECK(j["radius"]["data"][0][0] == "1/100");
  CHECK(j["rows"] == nlohmann::json::parse("[0,1]"));
  CHECK(j["mu"] == "1/2");
  CHECK(j["rank_lower"] == 2);
}
