// mahdavi24 Lemma 5 (Weyl): ||B - A||_2 < sigma_min^+(A) => rank B >= rank A. Certified on instances:
// the hypothesis by an exact positive-definite Gram shift and an exact Frobenius norm, the conclusion by
// an exact rank computation on B (independent of the lemma). Boundary: equality ||B - A||_2 =
// sigma_min(A) (an exact SVD with rational orthogonal factors) where the rank drops.
#include <cmath>

#include "../common.hpp"
#include "memcert/linalg/qmat/enclosure.hpp"

namespace memcert::proofs {
namespace mahdavi24_lemma_5 {
using namespace detail;

struct Lemma5Instance {
  QMatrix A, P;           // B = A + P
  std::size_t r = 0;      // rank A
  std::vector<std::size_t> S;  // r independent rows of A
  // boundary data: A A^T - s2 I = C C^T, P = x y^T
  QMatrix C;
  QVector x, y;
  Rational s2;
};

QMatrix householder(Rng& rng, std::size_t n) {
  QVector v;
  do v = rng.int_vector(n, 4); while (std::all_of(v.begin(), v.end(), [](auto& z) { return z == 0; }));
  Rational vv = 0;
  for (auto& z : v) vv += z * z;
  QMatrix H = QMatrix::identity(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) H(i, j) -= 2 * v[i] * v[j] / vv;
  return H;
}

Instance generate(std::uint64_t seed, std::size_t index, bool boundary) {
  Rng rng(seed);
  Lemma5Instance in;
  Instance inst;
  if (!boundary) {
    std::size_t m = 3 + index % 3, q = 4 + index % 2, r = 1 + index % std::min(m, q);
    do in.A = mat_mul(rng.int_matrix(m, r, 4), rng.int_matrix(r, q, 4)); while (qmat_rank(in.A) < r);
    in.r = r;
    auto cert = qmat_rank_certified(in.A);
    in.S = cert.minor_rows;
    QMatrix R = rng.int_matrix(m, q, 9);
    auto mu = qmat_sigma_min_sq_lower(mat_select_rows(in.A, in.S));
    Rational fro = 0;
    for (auto& z : R.data()) fro += z * z;
    double scale = std::sqrt(rational_to_double(*mu) / (2.0 * rational_to_double(fro + 1)));
    Rational t(Integer(1), Integer(static_cast<long>(std::ceil(1.0 / scale)) + 1));
    in.P = R;
    for (auto& z : in.P.data()) z *= t;
    in.s2 = *mu;
    inst.params = {{"m", m}, {"q", q}, {"rank_A", r}};
  } else {
    std::size_t r = 2 + index % 3;
    static const long sig[] = {13, 15, 20, 37};  // sig^2 - 12^2 is a square: 5^2, 9^2, 16^2, 35^2
    static const long root[] = {5, 9, 16, 35};
    QMatrix U = householder(rng, r), V = householder(rng, r);
    QMatrix D(r, r, Rational(0)), Dc(r, r, Rational(0));
    for (std::size_t i = 0; i + 1 < r; ++i) { D(i, i) = sig[i % 4]; Dc(i, i) = root[i % 4]; }
    D(r - 1, r - 1) = 12;
    in.A = mat_mul(mat_mul(U, D), mat_transpose(V));
    in.r = r;
    in.s2 = 144;
    in.C = mat_mul(U, Dc);  // A A^T - 144 I = U (D^2 - 144) U^T = C C^T
    in.x.resize(r); in.y.resize(r);
    for (std::size_t i = 0; i < r; ++i) { in.x[i] = -12 * U(i, r - 1); in.y[i] = V(i, r - 1); }
    in.P = QMatrix(r, r);
    for (std::size_t i = 0; i < r; ++i)
      for (std::size_t j = 0; j < r; ++j) in.P(i, j) = in.x[i] * in.y[j];
    inst.params = {{"r", r}, {"sigma_min", 12}};
  }
  inst.data = std::move(in);
  return inst;
}

QMatrix plus(const QMatrix& a, const QMatrix& b) {
  QMatrix c = a;
  for (std::size_t i = 0; i < c.data().size(); ++i) c.data()[i] += b.data()[i];
  return c;
}

InstanceResult check_lemma(const Instance& inst) {
  const auto& in = std::any_cast<const Lemma5Instance&>(inst.data);
  QMatrix B = plus(in.A, in.P);
  QMatrix AS = mat_select_rows(in.A, in.S);
  QMatrix G = mat_mul(AS, mat_transpose(AS));
  for (std::size_t i = 0; i < G.rows(); ++i) G(i, i) -= in.s2;
  Rational fro = 0;
  for (auto& z : in.P.data()) fro += z * z;
  bool hyp = qmat_is_positive_definite(G) && fro < in.s2;
  std::size_t ra = qmat_rank(in.A), rb = qmat_rank(B);
  InstanceResult r;
  r.figures = {{"rank_A", ra}, {"rank_B", rb}, {"mu", rational_to_double(in.s2)},
               {"perturbation_frobenius_sq", rational_to_double(fro)}};
  if (!hyp) { r.outcome = Outcome::undecided; r.summary = "hypothesis not certified"; return r; }
  nlohmann::json c = claim_cert("mahdavi24/lemma-5");
  c["A"] = qmat_to_json(in.A); c["P"] = qmat_to_json(in.P); c["rows"] = in.S; c["mu"] = jq(in.s2);
  c["kernel_A"] = jcols(qmat_kernel(in.A));
  if (rb >= ra) {
    r.outcome = Outcome::confirmed;
    r.summary = "||B - A||_F^2 < mu <= sigma_min^+(A)^2 certified; rank B = " + std::to_string(rb) +
                " >= rank A = " + std::to_string(ra) + " (exact)";
    c["verdict"] = "confirmed";
  } else {
    r.outcome = Outcome::counterexample;
    r.summary = "rank B < rank A under the hypothesis";
    r.witness = r.figures;
    c["kernel_B"] = jcols(qmat_kernel(B));
    c["verdict"] = "counterexample";
  }
  r.certificate = c;
  return r;
}

InstanceResult check_boundary(const Instance& inst) {
  const auto& in = std::any_cast<const Lemma5Instance&>(inst.data);
  QMatrix B = plus(in.A, in.P);
  std::size_t ra = qmat_rank(in.A), rb = qmat_rank(B);
  InstanceResult r;
  r.figures = {{"rank_A", ra}, {"rank_B", rb}, {"norm_sq", rational_to_string(in.s2)}};
  if (rb >= ra) { r.outcome = Outcome::confirmed; r.summary = "rank did not drop"; return r; }
  nlohmann::json c = claim_cert("mahdavi24/lemma-5-equality");
  c["A"] = qmat_to_json(in.A); c["C"] = qmat_to_json(in.C); c["x"] = qvec_to_json(in.x); c["y"] = qvec_to_json(in.y);
  c["s2"] = jq(in.s2);
  c["kernel_B"] = jcols(qmat_kernel(B));
  c["verdict"] = "counterexample";
  r.certificate = c;
  r.outcome = Outcome::counterexample;
  r.summary = "||B - A||_2 = sigma_min(A) = 12 exactly and rank B = " + std::to_string(rb) + " < rank A = " +
              std::to_string(ra) + ": the strict inequality is needed";
  r.witness = {{"B_minus_A", "x y^T"}, {"x", qvec_to_json(in.x)}, {"y", qvec_to_json(in.y)}, {"rank_B", rb}, {"rank_A", ra}};
  return r;
}

// `claims search` families (index % 6): 0 near-singular A (one factor column scaled by 1/4096: a tiny
// sigma_min); 1 the perturbation at the margin (||P||_F^2 = (1 - 2^-10) mu, mu the certified lower bound on
// sigma_min^2 of A's chosen rows); 2 an integer lattice (factors in {-1, 0, 1}); 3 rank one; 4 square and
// invertible (m = q = r = 3); 5 shrinking, P = -t A as large as admissible: B = (1 - t) A keeps exactly
// rank A (a random P raises the rank, so the conclusion is met with room; here with none).
Instance search(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"near-singular", "at-the-margin", "lattice", "rank-one", "square-invertible", "shrinking"};
  const std::size_t fam = index % 6;
  Rng rng(seed);
  const std::size_t m = fam == 4 ? 3 : 4, q = fam == 4 ? 3 : 5, r = fam == 3 ? 1 : fam == 4 ? 3 : 2;
  const long range = fam == 2 ? 1 : 4;
  Lemma5Instance in;
  std::optional<Rational> mu_lower;
  do {
    QMatrix X = rng.int_matrix(m, r, range), Y = rng.int_matrix(r, q, range);
    if (fam == 0)
      for (std::size_t i = 0; i < m; ++i) X(i, r - 1) /= 4096;
    in.A = mat_mul(X, Y);
    if (qmat_rank(in.A) < r) continue;
    in.S = qmat_rank_certified(in.A).minor_rows;
    in.S.resize(r);
    mu_lower = qmat_sigma_min_sq_lower(mat_select_rows(in.A, in.S));
  } while (!mu_lower || *mu_lower <= 0);
  in.r = r;
  const Rational mu = *mu_lower;
  QMatrix R = fam == 5 ? in.A : rng.int_matrix(m, q, 9);
  if (fam == 5)
    for (auto& z : R.data()) z = -z;
  Rational fro = 0;
  for (auto& z : R.data()) fro += z * z;
  if (fro == 0) { R(0, 0) = 1; fro = 1; }
  // t^2 fro < mu (exactly): from a double estimate of the largest admissible t, halved until it holds.
  const double frac = fam == 1 || fam == 5 ? 1.0 - 1.0 / 1024 : 0.25;
  Rational t = rational_from_double(std::sqrt(frac * rational_to_double(mu) / rational_to_double(fro)));
  while (!(t * t * fro < mu)) t /= 2;
  in.P = R;
  for (auto& z : in.P.data()) z *= t;
  in.s2 = mu;
  Instance inst;
  inst.params = {{"family", names[fam]}, {"m", m}, {"q", q}, {"rank_A", r}};
  inst.data = std::move(in);
  return inst;
}

ClaimRegistrar reg{Claim{
    "mahdavi24/lemma-5",
    "If ||B - A||_2 < sigma_min^+(A) then rank B >= rank A.",
    "hypothesis: A_S A_S^T - mu I positive definite (exact LDL^T) and ||B - A||_F^2 < mu exactly; "
    "conclusion: rank A from above by kernel vectors, rank B from below by a minor mod p",
    Expect::holds, "", 6, [](std::uint64_t s, std::size_t i) { return generate(s, i, false); }, check_lemma, search}};

ClaimRegistrar reg_eq{Claim{
    "mahdavi24/lemma-5-equality",
    "At equality ||B - A||_2 = sigma_min(A) the rank can drop: Lemma 5 needs the strict inequality.",
    "exact SVD with rational Householder factors: A A^T - s2 I = C C^T, B - A = x y^T with |x|^2 |y|^2 = s2, "
    "and an exact kernel vector of B",
    Expect::counterexample, "mahdavi24/lemma-5 with <= instead of <", 3,
    [](std::uint64_t s, std::size_t i) { return generate(s, i, true); }, check_boundary}};

}  // namespace
}  // namespace memcert::proofs
