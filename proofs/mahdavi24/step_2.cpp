// mahdavi24 Step 2 (read-out): if Z has full row rank T, Z M = Y is solvable and M factors as
// blockdiag(W_V^1..W_V^H) W_O W_D when d_v >= d_out and d >= d_out. And the hypothesis d >= d_out, missing
// from the paper's statement of Theorem 1, is necessary: with d < d_out every prediction matrix
// Y_hat = (Z blockdiag(W_V) W_O) W_D factors through R^d, so rank Y_hat <= d, and labels of rank > d are
// not memorized by ANY parameters — a certified counterexample to Theorem 1 as printed (docs/THEORY.md §3).
#include <algorithm>

#include "../common.hpp"

namespace memcert::proofs {
namespace mahdavi24_step_2 {
using namespace detail;

struct ReadoutInstance {
  std::size_t H, n, d, dv, dout, T, dh = 0;
  std::vector<QMatrix> contexts{};
  Alphas alpha{};
  QMatrix queries{}, Y{};
};

Instance generate_readout(std::uint64_t seed, std::size_t index) {
  static const std::size_t sizes[][5] = {{2, 2, 3, 2, 1}, {3, 2, 4, 3, 2}, {2, 3, 5, 4, 3}, {4, 2, 3, 3, 3}};  // H n d dv dout
  const auto& s = sizes[index % 4];
  Rng rng(seed);
  ReadoutInstance in{s[0], s[1], s[2], s[3], s[4], 0};
  in.T = std::min(in.H * (in.n - 1) + 1, in.H * in.d);
  for (std::size_t t = 0; t < in.T; ++t) in.contexts.push_back(rng.int_matrix(in.n, in.d, 5));
  in.alpha.assign(in.H, {});
  for (auto& head : in.alpha)
    for (std::size_t t = 0; t < in.T; ++t) head.push_back(rng.stochastic(in.n));
  in.Y = rng.int_matrix(in.T, in.dout, 9);
  Instance inst;
  inst.params = {{"H", in.H}, {"n", in.n}, {"d", in.d}, {"d_v", in.dv}, {"d_out", in.dout}, {"T", in.T}};
  inst.data = std::move(in);
  return inst;
}

// `claims search` families (index % 6), each with T = min(H(n-1)+1, Hd) examples: 0 an integer lattice
// (context entries in {-1, 0, 1}); 1 one context shared by every example (Proposition 2's ceiling is then
// exactly T); 2 near-saturated attention (one weight 1 - 2^-20 per head: Z close to rank-deficient);
// 3 the hypotheses' boundary d_out = d_v = d; 4 tiny sizes H = 1, n = d = 2, d_out = 1; 5 repeated tokens
// (every context a row permutation of one token set).
Instance search_readout(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"lattice", "shared-context", "near-saturated", "d-out-equals-d", "tiny", "repeated-tokens"};
  static const std::size_t sizes[][5] = {{2, 2, 3, 2, 1}, {3, 2, 4, 3, 2}, {2, 3, 5, 4, 3}, {3, 3, 3, 3, 3}, {1, 2, 2, 1, 1}};
  const std::size_t fam = index % 6;
  Rng rng(seed);
  const auto& s = sizes[fam == 3 ? 3 : fam == 4 ? 4 : rng.index(3)];
  ReadoutInstance in{s[0], s[1], s[2], s[3], s[4], 0};
  in.T = std::min(in.H * (in.n - 1) + 1, in.H * in.d);
  QMatrix base = rng.int_matrix(in.n, in.d, 5);
  for (std::size_t t = 0; t < in.T; ++t) {
    if (fam == 0) in.contexts.push_back(rng.int_matrix(in.n, in.d, 1));
    else if (fam == 1) in.contexts.push_back(base);
    else if (fam == 5) {
      std::vector<std::size_t> perm(in.n);
      for (std::size_t i = 0; i < in.n; ++i) perm[i] = i;
      std::shuffle(perm.begin(), perm.end(), rng.g);
      in.contexts.push_back(mat_select_rows(base, perm));
    } else in.contexts.push_back(rng.int_matrix(in.n, in.d, 5));
  }
  in.alpha.assign(in.H, {});
  for (auto& head : in.alpha)
    for (std::size_t t = 0; t < in.T; ++t) {
      QVector a = rng.stochastic(in.n);
      if (fam == 2) {  // mass 1 - 2^-20 on one token, the rest spread evenly
        const Rational small(1, 1 << 20);
        std::size_t j = rng.index(in.n);
        for (std::size_t k = 0; k < in.n; ++k) a[k] = k == j ? Rational(Rational(1) - small) : Rational(small / Rational(static_cast<long>(in.n - 1)));
      }
      head.push_back(a);
    }
  in.Y = rng.int_matrix(in.T, in.dout, 9);
  Instance inst;
  inst.params = {{"family", names[fam]}, {"H", in.H}, {"n", in.n}, {"d", in.d}, {"d_v", in.dv}, {"d_out", in.dout}, {"T", in.T}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check_readout(const Instance& inst) {
  const auto& in = std::any_cast<const ReadoutInstance&>(inst.data);
  QMatrix Z = representation_matrix(in.contexts, in.alpha);
  InstanceResult r;
  std::size_t rank = qmat_rank(Z);
  if (rank < in.T) { r.outcome = Outcome::undecided; r.summary = "Z not of full row rank on this instance"; return r; }
  QMatrix M = *qmat_solve_any(Z, in.Y);  // Hd x d_out
  std::size_t H = in.H, d = in.d, dv = in.dv, dout = in.dout;
  std::vector<QMatrix> WV(H, QMatrix(d, dv, Rational(0)));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < dout; ++j) WV[h](i, j) = M(h * d + i, j);
  QMatrix WO(H * dv, d, Rational(0)), WD(d, dout, Rational(0));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < dout; ++i) WO(h * dv + i, i) = 1;
  for (std::size_t i = 0; i < dout; ++i) WD(i, i) = 1;
  // Independent evaluation through the model's equations (4)-(6): o_h = W_V^h^T p_h, o = W_O^T [o_h],
  // y_hat = W_D^T o, for every example.
  bool ok = true;
  for (std::size_t t = 0; t < in.T && ok; ++t) {
    QVector stacked;
    for (std::size_t h = 0; h < H; ++h) {
      QVector p(Z.row(t) + h * d, Z.row(t) + (h + 1) * d);
      QVector o = mat_vec(mat_transpose(WV[h]), p);
      stacked.insert(stacked.end(), o.begin(), o.end());
    }
    QVector yhat = mat_vec(mat_transpose(WD), mat_vec(mat_transpose(WO), stacked));
    for (std::size_t j = 0; j < dout; ++j) ok = ok && yhat[j] == in.Y(t, j);
  }
  r.figures = {{"rank_Z", rank}, {"T", in.T}};
  nlohmann::json c = claim_cert("mahdavi24/step-2-readout");
  c["H"] = H; c["n"] = in.n; c["d"] = d; c["T"] = in.T;
  nlohmann::json ctx = nlohmann::json::array();
  for (const auto& E : in.contexts) ctx.push_back(qmat_to_json(E));
  c["contexts"] = ctx;
  c["alpha"] = jalphas(in.alpha);
  c["labels"] = qmat_to_json(in.Y);
  nlohmann::json wv = nlohmann::json::array();
  for (const auto& w : WV) wv.push_back(qmat_to_json(w));
  c["W_V"] = wv; c["W_O"] = qmat_to_json(WO); c["W_D"] = qmat_to_json(WD);
  if (ok) {
    r.outcome = Outcome::confirmed;
    r.summary = "rank Z = T = " + std::to_string(in.T) + ": exact M with Z M = Y factored as blockdiag(W_V) W_O W_D; "
                "every label reproduced exactly";
    c["verdict"] = "confirmed";
    r.certificate = c;
  } else {
    r.outcome = Outcome::counterexample;
    r.summary = "the factorization did not reproduce the labels";
    r.witness = r.figures;
  }
  return r;
}

Instance generate_dout(std::uint64_t seed, std::size_t index) {
  // (d, n, d_h, H, d_out): the docs/THEORY.md example d=3, n=d_h=2, H=10, d_out=5 first.
  static const std::size_t sizes[][5] = {{3, 2, 2, 10, 5}, {3, 2, 2, 4, 4}, {4, 3, 3, 3, 6}};
  const auto& s = sizes[index % 3];
  Rng rng(seed);
  ReadoutInstance in{s[3], s[1], s[0], s[4], s[4], 0};
  in.dh = s[2];
  in.T = in.H * (std::min(in.n, in.dh) - 1) + 1;
  for (std::size_t t = 0; t < in.T; ++t) {
    QMatrix E;
    do E = rng.int_matrix(in.n, in.d, 5); while (qmat_rank(E) < in.n);
    in.contexts.push_back(E);
  }
  do in.queries = rng.int_matrix(in.T, in.d, 6); while (!kruskal_at_least(in.queries, std::min(in.n, in.T)));
  do in.Y = rng.int_matrix(in.T, in.dout, 9); while (qmat_rank(in.Y) <= in.d);
  Instance inst;
  inst.params = {{"H", in.H}, {"n", in.n}, {"d", in.d}, {"d_h", in.dh}, {"d_out", in.dout}, {"T", in.T}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check_dout(const Instance& inst) {
  const auto& in = std::any_cast<const ReadoutInstance&>(inst.data);
  InstanceResult r;
  std::size_t ry = qmat_rank(in.Y);
  bool a1 = kruskal_at_least(in.queries, std::min(in.n, in.T));
  bool a2 = true;
  for (const auto& E : in.contexts) a2 = a2 && qmat_rank(E) == in.n;
  r.figures = {{"rank_Y", ry}, {"d", in.d}, {"assumption1", a1}, {"assumption2", a2},
               {"T", in.T}, {"capacity_claimed", in.H * (std::min(in.n, in.dh) - 1) + 1}};
  if (!a1 || !a2 || ry <= in.d) { r.outcome = Outcome::confirmed; r.summary = "no counterexample on this instance"; return r; }
  nlohmann::json c = claim_cert("mahdavi24/theorem-1-without-d-ge-dout");
  c["H"] = in.H; c["d_h"] = in.dh; c["d_out"] = in.dout;
  nlohmann::json ctx = nlohmann::json::array();
  for (const auto& E : in.contexts) ctx.push_back(qmat_to_json(E));
  c["contexts"] = ctx;
  c["queries"] = qmat_to_json(in.queries);
  c["labels"] = qmat_to_json(in.Y);
  c["verdict"] = "counterexample";
  r.certificate = c;
  r.outcome = Outcome::counterexample;
  r.summary = "d = " + std::to_string(in.d) + " < d_out = " + std::to_string(in.dout) + ": T = " + std::to_string(in.T) +
              " = H(r-1)+1 examples satisfying Assumptions 1-2, labels of rank " + std::to_string(ry) +
              " > d; every prediction matrix has rank <= d, so no parameters memorize them";
  r.witness = {{"rank_Y", ry}, {"d", in.d}};
  return r;
}

ClaimRegistrar reg{Claim{
    "mahdavi24/step-2-readout",
    "If Z has full row rank T, the read-out M solving Z M = Y factors as blockdiag(W_V) W_O W_D (d_v >= d_out, "
    "d >= d_out) and the layer reproduces every label exactly.",
    "exact solve and the explicit factorization; the checker recomputes Z from contexts and weights and the "
    "predictions through equations (4)-(6)",
    Expect::holds, "", 4, generate_readout, check_readout, search_readout}};

ClaimRegistrar reg_dout{Claim{
    "mahdavi24/theorem-1-without-d-ge-dout",
    "Theorem 1 as printed (without d >= d_out) is false: with d < d_out, labels of rank > d on T = H(r-1)+1 "
    "examples satisfying Assumptions 1 and 2 are memorized by no parameters.",
    "Assumptions 1-2 and T = H(r-1)+1 checked exactly; rank of the labels > d by a minor mod p; every prediction "
    "matrix factors through W_D in R^{d x d_out}",
    Expect::counterexample, "mahdavi24/theorem-1 without the hypothesis d >= d_out", 3, generate_dout, check_dout}};

}  // namespace
}  // namespace memcert::proofs
