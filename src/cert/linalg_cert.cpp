// Writers for the rank / Kruskal / enclosure-rank certificates (formats in linalg_cert.hpp).
#include "memcert/cert/linalg_cert.hpp"

#include <algorithm>
#include <stdexcept>

#include "memcert/data/matrix_io.hpp"
#include "memcert/numeric/modp.hpp"

namespace memcert {

namespace {

using nlohmann::json;

// A prime as a string; an unset prime (0, e.g. for an empty minor) becomes the first supply prime, which
// any checker accepts for a vacuous claim.
json prime_json(std::uint64_t p) { return std::to_string(p != 0 ? p : modp::prime_31(0)); }

json indices_json(const std::vector<std::size_t>& v) {
  json out = json::array();
  for (std::size_t i : v) out.push_back(i);
  return out;
}

}  // namespace

json rank_certificate_to_json(const QMatrix& a, const RankCertificate& c) {
  std::size_t m = a.rows(), n = a.cols(), k = c.rank;
  if (c.minor_rows.size() != k || c.minor_cols.size() != k)
    throw std::invalid_argument("rank_certificate_to_json: the minor does not have size rank x rank");
  json cert{{"kind", "rank"}, {"claim", "rank"}, {"matrix", qmat_to_json_matrix(a)},
            {"rank_lower", k}, {"rank_upper", k}};
  cert["lower"] = json{{"method", "minor-mod-p"}, {"prime", prime_json(c.prime)},
                       {"rows", indices_json(c.minor_rows)}, {"cols", indices_json(c.minor_cols)}};
  if (k == std::min(m, n)) {
    cert["upper"] = json{{"method", "trivial"}};
    return cert;
  }
  if (c.kernel.rows() != n || c.kernel.cols() != n - k || c.kernel_free_rows.size() != n - k)
    throw std::invalid_argument("rank_certificate_to_json: the kernel is not cols x (cols - rank)");
  cert["upper"] = json{{"method", "kernel"}, {"kernel", qmat_to_json(mat_transpose(c.kernel))},
                       {"free_rows", indices_json(c.kernel_free_rows)}};
  return cert;
}

json kruskal_certificate_to_json(const QMatrix& vectors, const KruskalResult& r) {
  std::size_t top = std::min(vectors.rows(), vectors.cols());
  if (r.lower > r.upper || r.upper > top)
    throw std::invalid_argument("kruskal_certificate_to_json: bounds out of order");
  json cert{{"kind", "kruskal"}, {"claim", "kruskal-rank"}, {"vectors", qmat_to_json_matrix(vectors)},
            {"kruskal_lower", r.lower}, {"lower", json{{"method", "exhaustive-mod-p"}, {"prime", prime_json(r.prime)}}},
            {"kruskal_upper", r.upper}};
  if (r.upper == top && r.dependent_subset.empty()) {
    cert["upper"] = json{{"method", "trivial"}};
    return cert;
  }
  if (r.dependent_subset.size() != r.upper + 1 || r.dependent_coefficients.size() != r.upper + 1)
    throw std::invalid_argument("kruskal_certificate_to_json: upper bound without a dependent (upper+1)-subset");
  json coeffs = json::array();
  for (const Rational& q : r.dependent_coefficients) coeffs.push_back(rational_to_json(q));
  cert["upper"] = json{{"method", "dependent-subset"}, {"subset", indices_json(r.dependent_subset)},
                       {"coefficients", std::move(coeffs)}};
  return cert;
}

json enclosure_rank_certificate_to_json(const QMatrix& centre, const QMatrix& radius, const EnclosureRankCertificate& c) {
  if (centre.rows() != radius.rows() || centre.cols() != radius.cols())
    throw std::invalid_argument("enclosure_rank_certificate_to_json: centre and radius differ in shape");
  return json{{"kind", "enclosure-rank"}, {"claim", "rank-lower-enclosure"},
              {"centre", qmat_to_json_matrix(centre)}, {"radius", qmat_to_json_matrix(radius)},
              {"rows", indices_json(c.rows)}, {"mu", rational_to_json(c.mu)}, {"rank_lower", c.rows.size()}};
}

}  // namespace memcert
