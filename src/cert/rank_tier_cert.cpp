// JSON writers for the multi-prime rank and the double-rump enclosure certificates (see linalg_cert.hpp).
#include "memcert/cert/linalg_cert.hpp"

#include <string>

namespace memcert {

namespace {
template <class T, class F>
nlohmann::json matrix_json(const Matrix<T>& a, F str) {
  nlohmann::json data = nlohmann::json::array();
  for (std::size_t i = 0; i < a.rows(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < a.cols(); ++j) row.push_back(str(a(i, j)));
    data.push_back(std::move(row));
  }
  return {{"rows", a.rows()}, {"cols", a.cols()}, {"data", std::move(data)}};
}
std::string qstr(const Rational& q) { return rational_to_string(q); }
std::string dstr(double x) { return rational_to_string(rational_from_double(x)); }
}  // namespace

nlohmann::json multimodular_rank_certificate_to_json(const QMatrix& a, const RankCertificate& c) {
  nlohmann::json j;
  j["kind"] = "rank";
  j["claim"] = "rank";
  j["matrix"] = matrix_json(a, qstr);
  j["rank_lower"] = c.rank;
  j["rank_upper"] = c.rank;
  j["rank"] = c.rank;
  if (c.rank == 0)
    j["lower"] = {{"method", "trivial"}};
  else
    j["lower"] = {{"method", "minor-mod-p"}, {"prime", std::to_string(c.prime)}, {"rows", c.minor_rows},
                  {"cols", c.minor_cols}};
  if (c.upper_primes.empty()) {
    j["upper"] = {{"method", "trivial"}};
  } else {
    nlohmann::json ps = nlohmann::json::array();
    for (auto q : c.upper_primes) ps.push_back(std::to_string(q));
    j["upper"] = {{"method", "multi-prime"}, {"primes", std::move(ps)}};
  }
  return j;
}

nlohmann::json enclosure_rank_fast_certificate_to_json(const DMatrix& centre, const DMatrix& radius,
                                                       const EnclosureRankCertificate& c) {
  nlohmann::json j;
  j["kind"] = c.method == "double-rump" ? "enclosure-rank-rump" : "enclosure-rank";
  j["claim"] = "rank-lower-enclosure";
  j["centre"] = matrix_json(centre, dstr);
  j["radius"] = matrix_json(radius, dstr);
  j["rows"] = c.rows;
  j["mu"] = rational_to_string(c.mu);
  j["rank_lower"] = c.rows.size();
  j["method"] = c.method;
  return j;
}

}  // namespace memcert
