// mahdavi24 Proposition 4: one self-attention layer with uniform attention (W_K = 0) and skip connection,
// W_V W_O = lambda I, maps queries to e + lambda xbar and tokens to x + lambda xbar.
//  * proposition-4 (lambda = 1): Assumptions 2 and 3 on the input give Assumptions 1 and 2 on the output.
//    Only lambda = 1 gives Assumption 1: Assumption 3 speaks of e + xbar, the output queries are
//    e + lambda xbar.
//  * proposition-4-assumption-2 (lambda != -1): Assumption 2 survives (Lemma 2 with a = lambda/n).
// Boundary variants, each with a certified counterexample:
//  * proposition-4-lambda-not-1: lambda != 1, Assumptions 1-3 on the input, two output queries coincide
//    (so the statement "lambda != -1 gives Assumption 1" — the paper's generalization — is false);
//  * proposition-4-lambda-minus-1: lambda = -1, every output context's rows sum to zero (Assumption 2 lost);
//  * proposition-4-without-assumption-3: lambda = 1, Assumptions 1-2 but not 3 on the input; the output
//    violates Assumption 1.
#include "../common.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"

namespace memcert::proofs {
namespace mahdavi24_proposition_4 {
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

enum class Variant { lambda_one, assumption2, lambda_not_1, lambda_minus_1, without_a3 };

const char* variant_id(Variant v) {
  switch (v) {
    case Variant::lambda_one: return "mahdavi24/proposition-4";
    case Variant::assumption2: return "mahdavi24/proposition-4-assumption-2";
    case Variant::lambda_not_1: return "mahdavi24/proposition-4-lambda-not-1";
    case Variant::lambda_minus_1: return "mahdavi24/proposition-4-lambda-minus-1";
    case Variant::without_a3: return "mahdavi24/proposition-4-without-assumption-3";
  }
  return "";
}

// e^(t) + a xbar^(t) for every example (a = 1: Assumption 3's vectors; a = lambda: the output queries).
QMatrix shifted_queries(const Prop4Instance& in, const Rational& a) {
  QMatrix out(in.T, in.d);
  for (std::size_t t = 0; t < in.T; ++t) {
    QVector xb = mean_token(in.contexts[t]);
    for (std::size_t j = 0; j < in.d; ++j) out(t, j) = in.queries(t, j) + a * xb[j];
  }
  return out;
}

// The lambda the variant runs at. lambda = 2 comes first: it is the value at which Assumption 1 is
// refuted in the text; the others cover negative, fractional and random values.
Rational variant_lambda(Variant v, Rng& rng, std::size_t index) {
  static const Rational fixed[] = {Rational(2), Rational(3), Rational(1, 2), Rational(-2), Rational(-1, 3)};
  switch (v) {
    case Variant::lambda_one:
    case Variant::without_a3: return Rational(1);
    case Variant::lambda_minus_1: return Rational(-1);
    case Variant::assumption2:
    case Variant::lambda_not_1: {
      if (index < 5) return fixed[index];
      Rational l = rng.rational(5, 3);
      return (l == 1 || l == -1) ? Rational(2) : l;
    }
  }
  return Rational(1);
}

Instance generate(std::uint64_t seed, std::size_t index, Variant v) {
  static const std::size_t sizes[][3] = {{6, 3, 4}, {5, 2, 3}, {7, 3, 5}, {6, 4, 5}};
  const auto& sz = sizes[index % 4];
  Rng rng(seed);
  Prop4Instance in;
  in.T = sz[0]; in.n = sz[1]; in.d = sz[2]; in.dh = 2;
  std::size_t k = std::min(in.n, in.T);
  in.lambda = variant_lambda(v, rng, index);
  for (int attempt = 0; attempt <= 50; ++attempt) {
    in.contexts.clear();
    for (std::size_t t = 0; t < in.T; ++t) {
      QMatrix E;
      do E = rng.int_matrix(in.n, in.d, 5); while (qmat_rank(E) < in.n);
      in.contexts.push_back(E);
    }
    in.queries = rng.int_matrix(in.T, in.d, 5);
    if (v == Variant::without_a3) {
      // Make e^(k-1) + xbar^(k-1) a combination of the first k-1 vectors e^(t) + xbar^(t).
      QVector target(in.d, Rational(0));
      for (std::size_t t = 0; t + 1 < k; ++t) {
        Rational c = rng.integer(1, 3);
        QVector xb = mean_token(in.contexts[t]);
        for (std::size_t j = 0; j < in.d; ++j) target[j] += c * (in.queries(t, j) + xb[j]);
      }
      QVector xb = mean_token(in.contexts[k - 1]);
      for (std::size_t j = 0; j < in.d; ++j) in.queries(k - 1, j) = target[j] - xb[j];
      if (kruskal_at_least(in.queries, k)) break;  // Assumption 1 must still hold on the input
    } else if (v == Variant::lambda_not_1) {
      // Two output queries coincide: e^(1) + lambda xbar^(1) = e^(0) + lambda xbar^(0). Then
      // e^(1) + xbar^(1) - (e^(0) + xbar^(0)) = (lambda - 1)(xbar^(0) - xbar^(1)) != 0 generically, so
      // Assumptions 1 and 3 can still hold (checked below; retried if not).
      QVector x0 = mean_token(in.contexts[0]), x1 = mean_token(in.contexts[1]);
      for (std::size_t j = 0; j < in.d; ++j) in.queries(1, j) = in.queries(0, j) + in.lambda * (x0[j] - x1[j]);
      if (kruskal_at_least(in.queries, k) && kruskal_at_least(shifted_queries(in, 1), k)) break;
    } else {
      break;
    }
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

InstanceResult check(const Instance& inst, Variant v) {
  const auto& in = std::any_cast<const Prop4Instance&>(inst.data);
  std::size_t k = std::min(in.n, in.T);
  // Input assumptions.
  QMatrix a3 = shifted_queries(in, 1);
  bool a2_in = true;
  for (std::size_t t = 0; t < in.T; ++t) a2_in = a2_in && qmat_rank(in.contexts[t]) == in.n;
  bool a1_in = kruskal_at_least(in.queries, k);
  bool a3_in = kruskal_at_least(a3, k);
  // The layer's output, token by token (an exact forward pass, independent of shifted_queries).
  QMatrix out_q(in.T, in.d);
  bool a2_out = true;
  std::size_t bad_context = in.T;
  for (std::size_t t = 0; t < in.T; ++t) {
    const QMatrix& E = in.contexts[t];
    QVector q = layer_token(in, E, QVector(in.queries.row(t), in.queries.row(t) + in.d));
    for (std::size_t j = 0; j < in.d; ++j) out_q(t, j) = q[j];
    QMatrix out_E(in.n, in.d);
    for (std::size_t i = 0; i < in.n; ++i) {
      QVector x = layer_token(in, E, QVector(E.row(i), E.row(i) + in.d));
      for (std::size_t j = 0; j < in.d; ++j) out_E(i, j) = x[j];
    }
    if (qmat_rank(out_E) < in.n && bad_context == in.T) bad_context = t;
    a2_out = a2_out && qmat_rank(out_E) == in.n;
  }
  std::vector<std::size_t> dep;
  bool a1_out = kruskal_at_least(out_q, k, &dep);
  InstanceResult r;
  r.figures = {{"lambda", rational_to_string(in.lambda)}, {"assumption1_in", a1_in}, {"assumption2_in", a2_in},
               {"assumption3_in", a3_in}, {"assumption1_out", a1_out}, {"assumption2_out", a2_out}, {"k", k}};
  nlohmann::json c = claim_cert(variant_id(v));
  nlohmann::json ctx = nlohmann::json::array();
  for (const auto& E : in.contexts) ctx.push_back(qmat_to_json(E));
  c["contexts"] = ctx;
  c["queries"] = qmat_to_json(in.queries);
  c["W_K"] = qmat_to_json(in.WK); c["W_Q"] = qmat_to_json(in.WQ); c["W_V"] = qmat_to_json(in.WV); c["W_O"] = qmat_to_json(in.WO);
  const std::string lam = "lambda = " + rational_to_string(in.lambda);
  auto dependent_queries = [&](const std::string& summary) {
    QVector coeff = row_dependency(out_q, dep);
    r.outcome = Outcome::counterexample;
    r.summary = summary + "; output queries " + nlohmann::json(dep).dump() + " are dependent (exact coefficients)";
    r.witness = {{"dependent_subset", dep}, {"coefficients", qvec_to_json(coeff)}};
    c["verdict"] = "counterexample";
    c["dependent_subset"] = dep;
    c["coefficients"] = qvec_to_json(coeff);
    r.certificate = c;
  };
  switch (v) {
    case Variant::lambda_one:
      if (!a2_in || !a3_in) { r.summary = "hypotheses fail on this instance (Assumption 2 or 3 on the input)"; return r; }
      if (a1_out && a2_out) {
        r.outcome = Outcome::confirmed;
        r.summary = "output queries e + xbar have Kruskal rank >= " + std::to_string(k) +
                    " and every output context has rank n (exhaustive, exact)";
        c["verdict"] = "confirmed";
        r.certificate = c;
        return r;
      }
      if (!a1_out) dependent_queries("Assumption 1 fails on the output although Assumptions 2 and 3 hold on the input");
      else { r.outcome = Outcome::counterexample; r.summary = "Assumption 2 fails on the output (uncertified)"; }
      return r;
    case Variant::assumption2:
      if (!a2_in) { r.summary = "hypothesis fails on this instance (Assumption 2 on the input)"; return r; }
      if (a2_out) {
        r.outcome = Outcome::confirmed;
        r.summary = lam + ": every output context x + lambda xbar has rank n (exact)";
        c["verdict"] = "confirmed";
        r.certificate = c;
        return r;
      }
      r.outcome = Outcome::counterexample;  // would contradict Lemma 2; reported, not certified here
      r.summary = lam + ": output context " + std::to_string(bad_context) + " lost rank n";
      return r;
    case Variant::lambda_not_1:
      if (!a1_in || !a2_in || !a3_in) { r.summary = "could not build an input satisfying Assumptions 1-3"; return r; }
      if (a1_out) { r.outcome = Outcome::confirmed; r.summary = lam + ": Assumption 1 held on the output anyway"; return r; }
      dependent_queries(lam + ": input satisfies Assumptions 1, 2 and 3, yet Assumption 1 fails after the layer");
      return r;
    case Variant::lambda_minus_1: {
      if (!a2_in) { r.summary = "hypothesis fails on this instance (Assumption 2 on the input)"; return r; }
      if (a2_out) { r.outcome = Outcome::confirmed; r.summary = "Assumption 2 held on the output anyway"; return r; }
      // x_i - xbar summed over i is zero: the all-ones combination of the output context's rows.
      r.outcome = Outcome::counterexample;
      r.summary = "lambda = -1: the rows of output context " + std::to_string(bad_context) +
                  " sum to zero, so Assumption 2 fails after the layer";
      r.witness = {{"context", bad_context}};
      c["verdict"] = "counterexample";
      c["context"] = bad_context;
      c["coefficients"] = qvec_to_json(QVector(in.n, Rational(1)));
      r.certificate = c;
      return r;
    }
    case Variant::without_a3:
      if (!a1_in || !a2_in) { r.summary = "could not build an input satisfying Assumptions 1 and 2"; return r; }
      if (a1_out) { r.outcome = Outcome::confirmed; r.summary = "Assumption 1 held on the output anyway"; return r; }
      dependent_queries("input satisfies Assumptions 1 and 2 but not 3, so Assumption 1 fails after the layer");
      return r;
  }
  return r;
}

// `claims search` for the lambda = 1 claim (index % 5): 0 the lambda = 2 counterexample's input shape
// (e^(1) = e^(0) + 2 (xbar^(0) - xbar^(1))); 1 Assumption 3 barely holding (e^(1) + xbar^(1) within 1/4096
// per coordinate of e^(0) + xbar^(0)); 2 an integer lattice (entries in {-1, 0, 1}); 3 tiny dimensions
// (n = d = 2, T = 3); 4 queries of Kruskal rank exactly n.
Instance search(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"lambda-2-shape", "near-coincident", "lattice", "tiny", "kruskal-exactly-n"};
  const std::size_t fam = index % 5;
  Rng rng(seed);
  Prop4Instance in;
  in.T = fam == 3 ? 3 : 5 + rng.index(2);
  in.n = fam == 3 ? 2 : 2 + rng.index(2);
  in.d = fam == 3 ? 2 : in.n + 1 + rng.index(2);
  in.dh = 2;
  in.lambda = 1;
  const long range = fam == 2 ? 1 : 5;
  for (std::size_t t = 0; t < in.T; ++t) {
    QMatrix E;
    do E = rng.int_matrix(in.n, in.d, range); while (qmat_rank(E) < in.n);
    in.contexts.push_back(E);
  }
  in.queries = fam == 4 ? mahdavi24::queries_with_kruskal_rank(in.T, in.d, in.n, rng.g, 5) : rng.int_matrix(in.T, in.d, range);
  QVector x0 = mean_token(in.contexts[0]), x1 = mean_token(in.contexts[1]);
  for (std::size_t j = 0; j < in.d; ++j) {
    if (fam == 0) in.queries(1, j) = in.queries(0, j) + 2 * (x0[j] - x1[j]);
    if (fam == 1) in.queries(1, j) = in.queries(0, j) + x0[j] - x1[j] + Rational(rng.integer(-1, 1), 4096);
  }
  in.WK = QMatrix(in.d, in.dh, Rational(0));
  in.WQ = rng.int_matrix(in.d, in.dh, 3);
  QMatrix M;
  do M = rng.int_matrix(in.d, in.d, 3); while (qmat_rank(M) < in.d);
  in.WV = M;
  in.WO = *qmat_inverse(M);
  Instance inst;
  inst.params = {{"family", names[fam]}, {"T", in.T}, {"n", in.n}, {"d", in.d}, {"lambda", "1"}};
  inst.data = std::move(in);
  return inst;
}

Claim make_claim(Variant v, std::string statement, std::string method, std::string refutes, std::size_t instances) {
  return Claim{variant_id(v), std::move(statement), std::move(method),
               refutes.empty() ? Expect::holds : Expect::counterexample, std::move(refutes), instances,
               [v](std::uint64_t s, std::size_t i) { return generate(s, i, v); },
               [v](const Instance& in) { return check(in, v); }};
}

Claim with_search(Claim c) {
  c.search = search;
  return c;
}

const std::string kForward = "exact forward pass (W_K = 0 gives exactly uniform weights); ";

ClaimRegistrar reg{with_search(make_claim(
    Variant::lambda_one,
    "A uniform-attention self-attention layer with skip connection and W_V W_O = I turns data satisfying "
    "Assumptions 2 and 3 into data satisfying Assumptions 1 and 2.",
    kForward + "Assumption 3 on the input and Assumption 1 on the output by exhaustive subset independence, "
    "Assumption 2 by exact rank, all re-checked mod p",
    "", 6))};

ClaimRegistrar reg_a2{make_claim(
    Variant::assumption2,
    "With W_V W_O = lambda I for any lambda != -1 the layer keeps Assumption 2 (Lemma 2 with a = lambda/n).",
    kForward + "Assumption 2 on the input and on every output context by exact rank, re-checked mod p",
    "", 6)};

ClaimRegistrar reg_not1{make_claim(
    Variant::lambda_not_1,
    "For lambda != 1 Assumption 1 is not preserved: an input satisfying Assumptions 1, 2 and 3 whose output "
    "queries e + lambda xbar contain two equal vectors.",
    kForward + "Assumptions 1 and 3 on the input exhaustively, Assumption 2 by rank; an exact dependency among "
    "output queries",
    "mahdavi24/proposition-4 with W_V W_O = lambda I, lambda != -1 (Assumption 1 on the output)", 5)};

ClaimRegistrar reg_m1{make_claim(
    Variant::lambda_minus_1,
    "At lambda = -1 the layer destroys Assumption 2: every output context's rows sum to zero.",
    kForward + "Assumption 2 on the input by rank; the all-ones combination of an output context's rows is 0",
    "mahdavi24/proposition-4-assumption-2 at lambda = -1", 3)};

ClaimRegistrar reg_ablation{make_claim(
    Variant::without_a3,
    "Without Assumption 3 the layer can destroy Assumption 1: an input satisfying Assumptions 1 and 2 whose "
    "output queries contain a dependent min(n,T)-subset.",
    kForward + "Assumption 1 on the input exhaustively; an exact dependency among output queries",
    "mahdavi24/proposition-4 without Assumption 3", 4)};

}  // namespace
}  // namespace memcert::proofs
