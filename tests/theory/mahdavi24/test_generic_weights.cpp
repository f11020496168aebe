// Beyond Theorem 1: generic weights for T > T* (generic_weights_construct, docs/THEORY.md "Beyond T*").
// Each certificate is re-verified by the independent checker; as a second, unrelated method the weights it
// holds are run through a plain double forward pass (Eigen) whose Z must have numerical rank T and whose
// outputs must reproduce the labels; and the certified rank must respect the bounds theory puts on rank(Z)
// for ANY weights (min(T, H d); Proposition 2's H(n-1)+1 for shared contexts).
#include "catch.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <random>

#include "memcert/checker/checker.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

using namespace memcert;
using namespace memcert::mahdavi24;
using nlohmann::json;

namespace {

double num(const json& v) { return rational_to_double(*rational_parse(v.get<std::string>())); }
Eigen::MatrixXd mat(const json& a) {
  Eigen::MatrixXd m(a.size(), a.empty() ? 0 : a[0].size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a[i].size(); ++j) m(i, j) = num(a[i][j]);
  return m;
}

// The double forward pass of the certificate's weights on its examples: Z (T x H d) and the outputs.
struct Forward {
  Eigen::MatrixXd Z, Y;
};
Forward forward_double(const json& cert) {
  const std::size_t T = cert["T"], H = cert["H"], d = cert["d"];
  const auto& heads = cert["weights"]["heads"];
  Eigen::MatrixXd WO = mat(cert["weights"]["WO"]), WD = mat(cert["weights"]["WD"]);
  Forward f;
  f.Z.resize(T, H * d);
  f.Y.resize(T, WD.cols());
  for (std::size_t t = 0; t < T; ++t) {
    Eigen::MatrixXd E = mat(cert["data"]["contexts"][t]);
    Eigen::VectorXd e = mat(json::array({cert["data"]["queries"][t]})).row(0).transpose();
    Eigen::VectorXd o_heads(0);
    for (std::size_t h = 0; h < H; ++h) {
      Eigen::VectorXd a = E * (mat(heads[h]["WK"]) * (mat(heads[h]["WQ"]).transpose() * e));
      Eigen::VectorXd w = (a.array() - a.maxCoeff()).exp();
      w /= w.sum();
      Eigen::VectorXd p = E.transpose() * w;
      f.Z.block(t, h * d, 1, d) = p.transpose();
      Eigen::VectorXd oh = mat(heads[h]["WV"]).transpose() * p;
      Eigen::VectorXd cat(o_heads.size() + oh.size());
      cat << o_heads, oh;
      o_heads = cat;
    }
    f.Y.row(t) = (WD.transpose() * (WO.transpose() * o_heads)).transpose();
  }
  return f;
}

std::size_t numerical_rank(const Eigen::MatrixXd& Z) {
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(Z);
  const auto& s = svd.singularValues();
  std::size_t k = 0;
  for (Eigen::Index i = 0; i < s.size(); ++i) k += s(i) > 1e-9 * s(0);
  return k;
}

Theorem1Options options(std::size_t H, std::size_t dh) {
  Theorem1Options o;
  o.H = H;
  o.dh = dh;
  o.seed = 3;
  return o;
}

}  // namespace

TEST_CASE("generic weights memorize all T > T* when T <= H d, re-verified independently", "[generic]") {
  // n = 3, d = 6, H = 2, d_h = 3: T* = H(r-1)+1 = 5, H d = 12; T = 10 distinct random contexts.
  const AttentionDataset ds = generate_attention_dataset("theorem1", 10, 3, 6, std::nullopt, 7);
  Theorem1Result g = generic_weights_construct(ds, options(2, 3));
  REQUIRE(g.method == "generic");
  REQUIRE(g.T_star == 5);
  CHECK(g.rank_Z_bound == 10);
  REQUIRE(g.rank_Z_lower == 10);
  REQUIRE(g.memorized);
  REQUIRE(g.examples.size() == 10);
  const json& cert = g.certificate;
  CHECK(cert["method"] == "generic");
  CHECK(cert["claim"] == "mahdavi24/generic-weights");
  CHECK(cert["trace"].empty());
  auto v = memcert_checker::verify_certificate_text(cert.dump());
  REQUIRE(v.valid);
  // Second method: a plain double forward pass of the written weights.
  Forward f = forward_double(cert);
  CHECK(numerical_rank(f.Z) == 10);
  for (std::size_t t = 0; t < 10; ++t) CHECK(std::abs(f.Y(t, 0) - num(cert["data"]["labels"][t][0])) < 1e-6);
  // The W_K, W_Q of each head have d_h columns (rank W^h <= d_h, as the architecture demands).
  CHECK(cert["weights"]["heads"][0]["WK"][0].size() == 3);

  SECTION("the checker rejects what it must") {
    json bad = cert;  // a label moved by far more than the checker's rule allows
    bad["data"]["labels"][4][0] = rational_to_string(*rational_parse(bad["data"]["labels"][4][0].get<std::string>()) + 1);
    CHECK_FALSE(memcert_checker::verify_certificate_text(bad.dump()).valid);
    json as_theorem = cert;  // the same weights claimed as Theorem 1: T = 10 > T* = 5
    as_theorem["method"] = "theorem";
    as_theorem["claim"] = "mahdavi24/theorem-1";
    CHECK_FALSE(memcert_checker::verify_certificate_text(as_theorem.dump()).valid);
    json wrong_claim = cert;
    wrong_claim["claim"] = "mahdavi24/theorem-1";
    CHECK_FALSE(memcert_checker::verify_certificate_text(wrong_claim.dump()).valid);
    json with_trace = cert;  // generic certificates claim no proof step
    with_trace["trace"] = json::array({json::object()});
    CHECK_FALSE(memcert_checker::verify_certificate_text(with_trace.dump()).valid);
    json zero_head = cert;  // a head's value weights zeroed: the labels are no longer reproduced
    for (auto& row : zero_head["weights"]["heads"][1]["WV"])
      for (auto& x : row) x = "0";
    CHECK_FALSE(memcert_checker::verify_certificate_text(zero_head.dump()).valid);
  }
}

TEST_CASE("generic weights with class labels and the skip connection", "[generic]") {
  const AttentionDataset ds = generate_attention_dataset("theorem1", 9, 3, 5, std::size_t(3), 11);
  Theorem1Options o = options(2, 2);
  o.skip = true;
  Theorem1Result g = generic_weights_construct(ds, o);
  REQUIRE(g.rank_Z_lower == 9);
  REQUIRE(g.memorized);
  CHECK(g.class_labels);
  CHECK(memcert_checker::verify_certificate_text(g.certificate.dump()).valid);
}

TEST_CASE("T > H d: generic weights certify at most H d examples, and say so", "[generic]") {
  // H d = 2 * 4 = 8 < T = 14: rank(Z) <= 8 for ANY weights.
  const AttentionDataset ds = generate_attention_dataset("theorem1", 14, 3, 4, std::nullopt, 5);
  Theorem1Result g = generic_weights_construct(ds, options(2, 3));
  CHECK(g.rank_Z_bound == 8);
  CHECK(g.rank_Z_numerical <= 8);
  REQUIRE(g.rank_Z_lower <= 8);
  REQUIRE(g.rank_Z_lower > g.T_star);  // T* = 5: generic weights still beat the theorem here
  REQUIRE(g.memorized);
  CHECK(g.examples.size() == g.rank_Z_lower);
  auto v = memcert_checker::verify_certificate_text(g.certificate.dump());
  CHECK(v.valid);
  // The checker refuses a generic certificate claiming more rows than Z has columns.
  json over = g.certificate;
  over["T"] = 9;
  over["rank_Z_lower"] = 9;
  CHECK_FALSE(memcert_checker::verify_certificate_text(over.dump()).valid);
}

TEST_CASE("shared contexts: the certified generic rank never exceeds Proposition 2's ceiling", "[generic]") {
  // Proposition 2: E^(t) = E for all t gives rank(Z) <= H(n-1)+1 for ANY weights. n = 3, H = 2: ceiling 5.
  const AttentionDataset ds = generate_attention_dataset("shared", 12, 3, 6, std::nullopt, 9);
  Theorem1Result g = generic_weights_construct(ds, options(2, 2));
  CHECK(g.rank_Z_lower <= 5);
  CHECK(g.rank_Z_numerical <= 5);
  // d_h = 2 < n: T* = H(d_h-1)+1 = 3, yet generic weights reach the ceiling 5 here.
  CHECK(g.T_star == 3);
  CHECK(g.rank_Z_lower == 5);
  if (g.memorized) CHECK(memcert_checker::verify_certificate_text(g.certificate.dump()).valid);
}

TEST_CASE("constant token sums: the certified generic rank never exceeds Proposition 5's ceiling", "[generic]") {
  // Proposition 5: every context token with 1^T x = s gives rank(Z) <= H(d-1)+1 for ANY weights (H(d-1)
  // when s = 0), although such data can be in general position. Random tokens with the last coordinate
  // fixing the sum; T = H d examples, so only the theorem can stop the rank.
  const std::size_t H = 2, n = 3, d = 5, T = H * d;
  for (int s : {1, 0}) {
    std::mt19937_64 rng(17 + s);
    std::uniform_int_distribution<int> u(-64, 64);
    AttentionDataset ds;
    for (std::size_t t = 0; t < T; ++t) {
      QMatrix E(n, d);
      for (std::size_t j = 0; j < n; ++j) {
        Rational sum = 0;
        for (std::size_t c = 0; c + 1 < d; ++c) { E(j, c) = Rational(u(rng), 64); E(j, c).canonicalize(); sum += E(j, c); }
        E(j, d - 1) = Rational(s) - sum;
      }
      ds.contexts.push_back(E);
    }
    ds.queries = QMatrix(T, d);
    for (auto& x : ds.queries.data()) { x = Rational(u(rng), 64); x.canonicalize(); }
    Theorem1Result g = generic_weights_construct(ds, options(H, 3));
    const std::size_t ceiling = s == 0 ? H * (d - 1) : H * (d - 1) + 1;
    INFO("s = " << s);
    CHECK(g.rank_Z_lower <= ceiling);
    CHECK(g.rank_Z_numerical <= ceiling);
    CHECK(g.rank_Z_lower >= ceiling - 1);  // and generic weights come close to it
    if (g.memorized) CHECK(memcert_checker::verify_certificate_text(g.certificate.dump()).valid);
  }
}
