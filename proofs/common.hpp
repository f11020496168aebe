#pragma once
// Helpers shared by the claim files in proofs/: reproducible random exact instances, the
// representation matrix Z of mahdavi24 eq. (7), and exact numbers as JSON strings for certificates.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/matrix.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/proofs/registry.hpp"

namespace memcert::proofs::detail {

struct Rng {
  std::mt19937_64 g;
  explicit Rng(std::uint64_t seed) : g(seed) {}
  long integer(long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(g); }
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(integer(0, static_cast<long>(n) - 1)); }
  // A small rational p/q with |p| <= num, 1 <= q <= den (may be 0).
  Rational rational(long num, long den) {
    Rational q(Integer(integer(-num, num)), Integer(integer(1, den)));
    q.canonicalize();
    return q;
  }
  QMatrix int_matrix(std::size_t r, std::size_t c, long range) {
    QMatrix m(r, c);
    for (auto& x : m.data()) x = integer(-range, range);
    return m;
  }
  QVector int_vector(std::size_t n, long range) {
    QVector v(n);
    for (auto& x : v) x = integer(-range, range);
    return v;
  }
  // A positive rational stochastic vector (entries > 0, sum exactly 1): any such vector is a softmax
  // output (logits log(alpha_j)), so it stands for an attention weight vector.
  QVector stochastic(std::size_t n, long range = 9) {
    QVector v(n);
    Rational s = 0;
    for (auto& x : v) { x = integer(1, range); s += x; }
    for (auto& x : v) x /= s;
    return v;
  }
};

// alpha[h][t] in the open simplex of R^n; contexts[t] is n x d (size 1 means shared by every example).
using Alphas = std::vector<std::vector<QVector>>;

inline const QMatrix& context_of(const std::vector<QMatrix>& contexts, std::size_t t) {
  return contexts.size() == 1 ? contexts[0] : contexts[t];
}

// Z (T x Hd), row t = [alpha_1^(t)T E^(t), ..., alpha_H^(t)T E^(t)] (paper eq. 7).
inline QMatrix representation_matrix(const std::vector<QMatrix>& contexts, const Alphas& alpha) {
  std::size_t H = alpha.size(), T = alpha[0].size();
  std::size_t n = contexts[0].rows(), d = contexts[0].cols();
  QMatrix Z(T, H * d, Rational(0));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T; ++t) {
      const QMatrix& E = context_of(contexts, t);
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < d; ++j) Z(t, h * d + j) += alpha[h][t][k] * E(k, j);
    }
  return Z;
}

// A (T x Hn) = [alpha_1 .. alpha_H] (row t = the H weight vectors of example t): Z = A (I_H (x) E).
inline QMatrix weight_matrix(const Alphas& alpha) {
  std::size_t H = alpha.size(), T = alpha[0].size(), n = alpha[0][0].size();
  QMatrix A(T, H * n);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t k = 0; k < n; ++k) A(t, h * n + k) = alpha[h][t][k];
  return A;
}

inline bool is_zero(const QMatrix& m) {
  for (const auto& x : m.data())
    if (x != 0) return false;
  return true;
}

// Exact numbers as JSON strings (vectors and matrices: qvec_to_json / qmat_to_json, matrix_io.hpp).
inline nlohmann::json jq(const Rational& q) { return rational_to_string(q); }
// Columns of `m` as a list of vectors.
inline nlohmann::json jcols(const QMatrix& m) { return qmat_to_json(mat_transpose(m)); }
inline nlohmann::json jalphas(const Alphas& alpha) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& head : alpha) {
    nlohmann::json h = nlohmann::json::array();
    for (const auto& v : head) h.push_back(qvec_to_json(v));
    a.push_back(std::move(h));
  }
  return a;
}

inline nlohmann::json claim_cert(const std::string& claim) {
  nlohmann::json c;
  c["kind"] = "claim";
  c["claim"] = claim;
  return c;
}

// Rank of the rows `idx` of `m` (exact).
inline std::size_t rank_of_rows(const QMatrix& m, const std::vector<std::size_t>& idx) {
  return qmat_rank(mat_select_rows(m, idx));
}

// Every k-subset of the rows of `v` independent (exact, exhaustive; for small instances). When one is
// dependent and `dep` is given, it receives that subset.
bool kruskal_at_least(const QMatrix& v, std::size_t k, std::vector<std::size_t>* dep = nullptr);

// Kernel vector c != 0 of the rows `idx` of `v` (sum_i c_i v_{idx_i} = 0), or empty when independent.
QVector row_dependency(const QMatrix& v, const std::vector<std::size_t>& idx);

}  // namespace memcert::proofs::detail
