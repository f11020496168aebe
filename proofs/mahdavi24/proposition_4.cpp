// mahdavi24 Proposition 4: one self-attention layer with uniform attention (W_K = 0) and skip connection,
// W_V W_O = lambda I (lambda != -1), maps queries to e + lambda xbar and tokens to x + lambda xbar; under
// Assumption 3 (and Assumption 2 on the input) the output satisfies Assumptions 1 and 2.
// Ablation: without Assumption 3 the output can violate Assumption 1 (certified dependent subset).
#include "../common.hpp"

namespace memcert::proofs {
namespace {
using namespace detail;

struct Prop4Instance {
  std::size_t T, n, d, dh;
  std::vector<QMatrix> contexts;
  QMatrix queries;           // T x d
  QMatrix WK, WQ, WV, WO;    // d x dh, d x dh, d x d, d x d (W_V W_O = lambda I)
  Rational lambda;
};

QVector mean_token(const QMatrix& E) {
  QVector m(E.cols(), Rational(0));
  for (std::size_t k = 0; k < E.rows(); ++k)
    for (std::size_t j = 0; j < E.cols(); ++j) m[j] += E(k, j);
  for (auto& x : m) x /= static_cast<long>(E.rows());
  return m;
}

// One token through the layer: logits E W_K W_Q^T x (all zero here, so softmax is exactly uniform —
// asserted, not assumed), mix p = E^T alpha, output W_O^T W_V^T p + x.
QVector layer_token(const Prop4Instance& in, const QMatrix& E, const QVector& x) {
  QMatrix W = mat_mul(in.WK, mat_transpose(in.WQ));
  QVector logits = mat_vec(E, mat_vec(W, x));
  for (const auto& l : logits)
    if (l != logits[0]) throw std::logic_error("proposition-4: attention is not uniform");
  QVector p = mean_token(E);
  QVector o = mat_vec(mat_transpose(in.WO), mat_vec(mat_transpose(in.WV), p));
  for (std::size_t j = 0; j < x.size(); ++j) o[j] += x[j];
  return o;
}

Instance generate(std::uint64_t seed, std::size_t index, bool drop_a3) {
  static const std::size_t sizes[][3] = {{6, 3, 4}, {5, 2, 3}, {7, 3, 5}, {6, 4, 5}};
  const auto& sz = sizes[index % 4];
  Rng rng(seed);
  Prop4Instance in;
  in.T = sz[0]; in.n = sz[1]; in.d = sz[2]; in.dh = 2;
  std::size_t k = std::min(in.n, in.T);
  for (int attempt = 0;; ++attempt) {
    in.contexts.clear();
    for (std::size_t t = 0; t < in.T; ++t) {
      QMatrix E;
      do E = rng.int_matrix(in.n, in.d, 5); while (qmat_rank(E) < in.n);
      in.contexts.push_back(E);
    }
    in.queries = rng.int_matrix(in.T, in.d, 5);
    in.lambda = (index % 3 == 2 && !drop_a3) ? rng.rational(5, 3) : Rational(1);
    if (in.lambda == -1) in.lambda = 2;
    if (drop_a3) {
      // Make e^(k-1) + xbar^(k-1) a combination of the first k-1 vectors e^(t) + xbar^(t).
      QVector target(in.d, Rational(0));
      for (std::size_t t = 0; t + 1 < k; ++t) {
        Rational c = rng.integer(1, 3);
        QVector xb = mean_token(in.contexts[t]);
        for (std::size_t j = 0; j < in.d; ++j) target[j] += c * (in.queries(t, j) + xb[j]);
      }
      QVector xb = mean_token(in.contexts[k - 1]);
      for (std::size_t j = 0; j < in.d; ++j) in.queries(k - 1, j) = target[j] - in.lambda * xb[j];
      if (kruskal_at_least(in.queries, k)) break;  // Assumption 1 must still hold on the input
    } else {
      break;
    }
    if (attempt > 50) break;
  }
  in.WK = QMatrix(in.d, in.dh, Rational(0));  // uniform attention
  in.WQ = rng.int_matrix(in.d, in.dh, 3);
  QMatrix M;
  do M = rng.int_matrix(in.d, in.d, 3); while (qmat_rank(M) < in.d);
  in.WV = M;
  in.WO = *qmat_inverse(M);
  for (auto& x : in.WO.data()) x *= in.lambda;
  Instance inst;
  inst.params = {{"T", in.T}, {"n", in.n}, {"d", in.d}, {"lambda", rational_to_string(in.lambda)}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check(const Instance& inst, bool drop_a3) {
  const auto& in = std::any_cast<const Prop4Instance&>(inst.data);
  std::size_t k = std::min(in.n, in.T);
  // Input assumptions.
  QMatrix a3(in.T, in.d);
  bool a2_in = true;
  for (std::size_t t = 0; t < in.T; ++t) {
    QVector xb = mean_token(in.contexts[t]);
    for (std::size_t j = 0; j < in.d; ++j) a3(t, j) = in.queries(t, j) + xb[j];
    a2_in = a2_in && qmat_rank(in.contexts[t]) == in.n;
  }
  bool a1_in = kruskal_at_least(in.queries, k);
  bool a3_in = kruskal_at_least(a3, k);
  // The layer's output, token by token.
  QMatrix out_q(in.T, in.d);
  bool a2_out = true;
  for (std::size_t t = 0; t < in.T; ++t) {
    const QMatrix& E = in.contexts[t];
    QVector q = layer_token(in, E, QVector(in.queries.row(t), in.queries.row(t) + in.d));
    for (std::size_t j = 0; j < in.d; ++j) out_q(t, j) = q[j];
    QMatrix out_E(in.n, in.d);
    for (std::size_t i = 0; i < in.n; ++i) {
      QVector x = layer_token(in, E, QVector(E.row(i), E.row(i) + in.d));
      for (std::size_t j = 0; j < in.d; ++j) out_E(i, j) = x[j];
    }
    a2_out = a2_out && qmat_rank(out_E) == in.n;
  }
  std::vector<std::size_t> dep;
  bool a1_out = kruskal_at_least(out_q, k, &dep);
  InstanceResult r;
  r.figures = {{"assumption1_in", a1_in}, {"assumption2_in", a2_in}, {"assumption3_in", a3_in},
               {"assumption1_out", a1_out}, {"assumption2_out", a2_out}, {"k", k}};
  nlohmann::json c = claim_cert(drop_a3 ? "mahdavi24/proposition-4-without-assumption-3"
                                        : "mahdavi24/proposition-4");
  nlohmann::json ctx = nlohmann::json::array();
  for (const auto& E : in.contexts) ctx.push_back(qmat_to_json(E));
  c["contexts"] = ctx;
  c["queries"] = qmat_to_json(in.queries);
  c["W_K"] = qmat_to_json(in.WK); c["W_Q"] = qmat_to_json(in.WQ); c["W_V"] = qmat_to_json(in.WV); c["W_O"] = qmat_to_json(in.WO);
  if (!drop_a3) {
    if (!a2_in || !a3_in) {
      r.outcome = Outcome::undecided;
      r.summary = "hypotheses fail on this instance (Assumption 2 or 3 on the input)";
      return r;
    }
    if (a1_out && a2_out) {
      r.outcome = Outcome::confirmed;
      r.summary = "lambda = " + rational_to_string(in.lambda) +
                  ": output queries e + lambda*xbar have Kruskal rank >= " + std::to_string(k) +
                  " and every output context has rank n (exhaustive, exact)";
      c["verdict"] = "confirmed";
      r.certificate = c;
      return r;
    }
    r.outcome = Outcome::counterexample;
    r.summary = "Assumption 1 or 2 fails on the output although Assumptions 2 and 3 hold on the input";
    r.witness = {{"dependent_subset", dep}};
    if (!a1_out) {
      c["verdict"] = "counterexample";
      c["dependent_subset"] = dep;
      c["coefficients"] = qvec_to_json(row_dependency(out_q, dep));
      r.certificate = c;
    }
    return r;
  }
  if (!a1_in || !a2_in) {
    r.outcome = Outcome::undecided;
    r.summary = "could not build an input satisfying Assumptions 1 and 2";
    return r;
  }
  if (a1_out) {
    r.outcome = Outcome::confirmed;
    r.summary = "Assumption 1 held on the output anyway";
    return r;
  }
  QVector coeff = row_dependency(out_q, dep);
  r.outcome = Outcome::counterexample;
  r.summary = "input satisfies Assumptions 1 and 2 but not 3; output queries " + nlohmann::json(dep).dump() +
              " are dependent (exact coefficients), so Assumption 1 fails after the layer";
  r.witness = {{"dependent_subset", dep}, {"coefficients", qvec_to_json(coeff)}};
  c["verdict"] = "counterexample";
  c["dependent_subset"] = dep;
  c["coefficients"] = qvec_to_json(coeff);
  r.certificate = c;
  return r;
}

ClaimRegistrar reg{Claim{
    "mahdavi24/proposition-4",
    "A uniform-attention self-attention layer with skip connection and W_V W_O = lambda I (lambda != -1) "
    "turns data satisfying Assumptions 2 and 3 into data satisfying Assumptions 1 and 2.",
    "exact forward pass (W_K = 0 gives exactly uniform weights); Assumption 3 on the input and Assumption 1 "
    "on the output by exhaustive subset independence, Assumption 2 by exact rank, all re-checked mod p",
    Expect::holds, "", 6, [](std::uint64_t s, std::size_t i) { return generate(s, i, false); },
    [](const Instance& in) { return check(in, false); }}};

ClaimRegistrar reg_ablation{Claim{
    "mahdavi24/proposition-4-without-assumption-3",
    "Without Assumption 3 the layer can destroy Assumption 1: an input satisfying Assumptions 1 and 2 whose "
    "output queries contain a dependent min(n,T)-subset.",
    "exact forward pass; Assumption 1 on the input exhaustively; an exact dependency among output queries",
    Expect::counterexample, "mahdavi24/proposition-4 without Assumption 3", 4,
    [](std::uint64_t s, std::size_t i) { return generate(s, i, true); },
    [](const Instance& in) { return check(in, true); }}};

}  // namespace
}  // namespace memcert::proofs
