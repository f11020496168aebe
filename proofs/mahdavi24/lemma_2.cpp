// mahdavi24 Lemma 2: x_1..x_n independent => y_i = x_i + a sum_j x_j independent for every a != -1/n;
// and its boundary a = -1/n, where sum_i y_i = 0 (a certified dependency).
#include "../common.hpp"

namespace memcert::proofs {
namespace mahdavi24_lemma_2 {
using namespace detail;

struct Lemma2Instance {
  QMatrix X;  // n x d, rows x_i
  Rational a;
};

Instance generate(std::uint64_t seed, std::size_t index, bool boundary) {
  Rng rng(seed);
  std::size_t n = 2 + index % 4, d = n + index % 3;
  Lemma2Instance in;
  do in.X = rng.int_matrix(n, d, 6); while (qmat_rank(in.X) < n);
  Rational m1n(Integer(-1), Integer(static_cast<long>(n)));
  if (boundary) {
    in.a = m1n;
  } else {
    switch (index % 4) {  // generic values and values close to the boundary
      case 0: in.a = rng.rational(9, 5); break;
      case 1: in.a = m1n + Rational(Integer(1), Integer(1000)); break;
      case 2: in.a = m1n - Rational(Integer(1), Integer(997)); break;
      default: in.a = Rational(Integer(rng.integer(-1000, 1000))); break;
    }
    if (in.a == m1n) in.a += 1;
  }
  Instance inst;
  inst.params = {{"n", n}, {"d", d}, {"a", rational_to_string(in.a)}};
  inst.data = std::move(in);
  return inst;
}

QMatrix lemma2_image(const QMatrix& X, const Rational& a) {
  QMatrix Y = X;
  for (std::size_t j = 0; j < X.cols(); ++j) {
    Rational s = 0;
    for (std::size_t i = 0; i < X.rows(); ++i) s += X(i, j);
    for (std::size_t i = 0; i < X.rows(); ++i) Y(i, j) += a * s;
  }
  return Y;
}

InstanceResult check(const Instance& inst, bool boundary) {
  const auto& in = std::any_cast<const Lemma2Instance&>(inst.data);
  std::size_t n = in.X.rows();
  QMatrix Y = lemma2_image(in.X, in.a);
  std::size_t rank = qmat_rank(Y);
  InstanceResult r;
  r.figures = {{"rank_X", qmat_rank(in.X)}, {"rank_Y", rank}, {"det_factor_1_plus_na",
               rational_to_string(1 + Rational(Integer(static_cast<long>(n))) * in.a)}};
  nlohmann::json c = claim_cert(boundary ? "mahdavi24/lemma-2-boundary" : "mahdavi24/lemma-2");
  c["X"] = qmat_to_json(in.X);
  c["a"] = jq(in.a);
  if (rank == n) {
    r.outcome = Outcome::confirmed;
    r.summary = "a = " + rational_to_string(in.a) + ": the y_i are independent (rank " + std::to_string(n) + ")";
    if (!boundary) { c["verdict"] = "confirmed"; r.certificate = c; }
    return r;
  }
  // A dependency among the y_i: exact kernel vector of Y^T.
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  QVector coeff = row_dependency(Y, all);
  r.outcome = Outcome::counterexample;
  r.summary = "a = " + rational_to_string(in.a) + ": sum_i c_i y_i = 0 with c = exact kernel vector (rank Y = " +
              std::to_string(rank) + " < n = " + std::to_string(n) + ")";
  r.witness = {{"a", rational_to_string(in.a)}, {"coefficients", qvec_to_json(coeff)}};
  c["verdict"] = "counterexample";
  c["coefficients"] = qvec_to_json(coeff);
  r.certificate = c;
  return r;
}

ClaimRegistrar reg{Claim{
    "mahdavi24/lemma-2",
    "If x_1..x_n are linearly independent then y_i = x_i + a sum_j x_j are linearly independent for every "
    "a != -1/n.",
    "exact: the checker recomputes Y = (I + a 1 1^T) X and finds an n x n minor of X and of Y non-zero "
    "modulo a prime",
    Expect::holds, "", 8, [](std::uint64_t s, std::size_t i) { return generate(s, i, false); },
    [](const Instance& in) { return check(in, false); }}};

ClaimRegistrar reg_boundary{Claim{
    "mahdavi24/lemma-2-boundary",
    "At a = -1/n Lemma 2 fails: the y_i sum to zero although the x_i are independent.",
    "exact: independent x_i (non-zero minor) and a non-zero coefficient vector c with sum c_i y_i = 0",
    Expect::counterexample, "mahdavi24/lemma-2 at a = -1/n", 4,
    [](std::uint64_t s, std::size_t i) { return generate(s, i, true); },
    [](const Instance& in) { return check(in, true); }}};

}  // namespace
}  // namespace memcert::proofs
