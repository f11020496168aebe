// Writers for the rank / Kruskal / enclosure-rank certificates (formats in linalg_cert.hpp).
#include "memcert/cert/linalg_cert.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <map>
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

void append_u64(std::string& out, std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The exact value of a finite double as a canonical rational string: "±m" or "±m/2^k" with m odd.
void append_dyadic(std::string& out, double x) {
  if (x == 0) { out += '0'; return; }
  std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  int be = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t m = (bits & ((std::uint64_t(1) << 52) - 1)) | (be != 0 ? std::uint64_t(1) << 52 : 0);
  int e = (be == 0 ? 1 : be) - 1075;
  int tz = std::countr_zero(m);
  m >>= tz;
  e += tz;
  if (bits >> 63) out += '-';
  if (e >= 0) {
    if (e + std::bit_width(m) <= 64) { append_u64(out, m << e); return; }
    Integer z = static_cast<unsigned long>(m);
    mpz_mul_2exp(z.get_mpz_t(), z.get_mpz_t(), static_cast<mp_bitcnt_t>(e));
    out += z.get_str();
    return;
  }
  append_u64(out, m);
  out += '/';
  if (-e <= 63) { append_u64(out, std::uint64_t(1) << -e); return; }
  thread_local std::map<int, std::string> pow2;  // 2^k for k up to 1074, as decimal
  auto it = pow2.find(-e);
  if (it == pow2.end()) {
    Integer z = 1;
    mpz_mul_2exp(z.get_mpz_t(), z.get_mpz_t(), static_cast<mp_bitcnt_t>(-e));
    it = pow2.emplace(-e, z.get_str()).first;
  }
  out += it->second;
}

}  // namespace

std::string typed_matrix_json_text(const TypedMatrix& a) {
  if (a.storage == Storage::rational) return qmat_to_json_matrix(a.q).dump();
  std::string out = "{\"rows\":" + std::to_string(a.rows) + ",\"cols\":" + std::to_string(a.cols) + ",\"data\":[";
  out.reserve(out.size() + a.rows * a.cols * (a.storage == Storage::int64 ? 8 : 28));
  for (std::size_t i = 0; i < a.rows; ++i) {
    out += i ? ",[" : "[";
    for (std::size_t j = 0; j < a.cols; ++j) {
      out += j ? ",\"" : "\"";
      std::size_t k = i * a.cols + j;
      if (a.storage == Storage::int64) {
        std::int64_t v = a.i64[k];
        if (v < 0) out += '-';
        append_u64(out, v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v));
      } else {
        append_dyadic(out, a.f64[k]);
      }
      out += '"';
    }
    out += ']';
  }
  out += "]}";
  return out;
}

std::string rank_certificate_text(const TypedMatrix& a, const RankCertificate& c) {
  if (c.upper == RankUpper::kernel) return rank_certificate_to_json(typed_matrix_to_qmat(a), c).dump() + "\n";
  // The tree without the matrix, which is then spliced in as text.
  json j = multimodular_rank_certificate_to_json(QMatrix(0, 0), c);
  j["matrix"] = "@MATRIX@";
  std::string head = j.dump();
  const std::string mark = "\"@MATRIX@\"";
  std::size_t at = head.find(mark);
  return head.substr(0, at) + typed_matrix_json_text(a) + head.substr(at + mark.size()) + "\n";
}

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
  if (c.upper == RankUpper::multi_prime) {
    json ps = json::array();
    for (auto q : c.upper_primes) ps.push_back(std::to_string(q));
    cert["upper"] = json{{"method", "multi-prime"}, {"primes", std::move(ps)}};
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
