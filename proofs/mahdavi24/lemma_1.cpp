// mahdavi24 Lemma 1: rank [[A, B], [0, D]] >= rank A + rank D; and the ablation with a non-zero
// lower-left block, where the inequality fails.
#include "../common.hpp"

namespace memcert::proofs {
namespace mahdavi24_lemma_1 {
using namespace detail;

struct Lemma1Instance {
  QMatrix A, B, C, D;  // C == 0 for the lemma
};

QMatrix low_rank(Rng& rng, std::size_t r, std::size_t c, std::size_t k) {
  if (k == 0) return QMatrix(r, c, Rational(0));
  return mat_mul(rng.int_matrix(r, k, 3), rng.int_matrix(k, c, 3));
}

QMatrix block(const Lemma1Instance& in) {
  return mat_vcat(mat_hcat(in.A, in.B), mat_hcat(in.C, in.D));
}

Instance generate(std::uint64_t seed, std::size_t index, bool ablation) {
  Rng rng(seed);
  Lemma1Instance in;
  std::size_t p = 2 + index % 3, q = 3 + index % 2, r = 2 + (index + 1) % 3, s = 2 + index % 4;
  if (!ablation) {
    in.A = low_rank(rng, p, q, rng.index(std::min(p, q) + 1));
    in.D = low_rank(rng, r, s, rng.index(std::min(r, s) + 1));
    in.B = index % 2 ? rng.int_matrix(p, s, 4) : low_rank(rng, p, s, 1);
    in.C = QMatrix(r, q, Rational(0));
  } else {
    // M = U V of rank k: generic diagonal blocks have rank k each, so rank A + rank D = 2k > rank M.
    std::size_t k = 1 + index % 2;
    p = q = r = s = k;
    std::vector<std::size_t> top, bot;
    for (std::size_t i = 0; i < k; ++i) { top.push_back(i); bot.push_back(k + i); }
    for (int attempt = 0; attempt < 100; ++attempt) {
      QMatrix M = mat_mul(rng.int_matrix(2 * k, k, 4), rng.int_matrix(k, 2 * k, 4));
      in.A = mat_submatrix(M, top, top); in.B = mat_submatrix(M, top, bot);
      in.C = mat_submatrix(M, bot, top); in.D = mat_submatrix(M, bot, bot);
      if (qmat_rank(in.A) == k && qmat_rank(in.D) == k) break;
    }
  }
  Instance inst;
  inst.params = {{"A", {in.A.rows(), in.A.cols()}}, {"D", {in.D.rows(), in.D.cols()}}, {"lower_left_zero", !ablation}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check(const Instance& inst, bool ablation) {
  const auto& in = std::any_cast<const Lemma1Instance&>(inst.data);
  QMatrix M = block(in);
  std::size_t ra = qmat_rank(in.A), rd = qmat_rank(in.D), rm = qmat_rank(M);
  InstanceResult r;
  r.figures = {{"rank_A", ra}, {"rank_D", rd}, {"rank_M", rm}};
  nlohmann::json c = claim_cert(ablation ? "mahdavi24/lemma-1-nonzero-block" : "mahdavi24/lemma-1");
  c["A"] = qmat_to_json(in.A); c["B"] = qmat_to_json(in.B); c["D"] = qmat_to_json(in.D);
  if (ablation) c["C"] = qmat_to_json(in.C);
  if (rm >= ra + rd) {
    r.outcome = Outcome::confirmed;
    r.summary = "rank M = " + std::to_string(rm) + " >= rank A + rank D = " + std::to_string(ra) + " + " + std::to_string(rd);
    if (!ablation) {
      // Upper certificates for rank A and rank D, lower (checker's minor mod p) for M.
      c["kernel_A"] = jcols(qmat_kernel(in.A));
      c["kernel_D"] = jcols(qmat_kernel(in.D));
      c["verdict"] = "confirmed";
      r.certificate = c;
    }
    return r;
  }
  r.outcome = Outcome::counterexample;
  r.summary = "rank M = " + std::to_string(rm) + " < rank A + rank D = " + std::to_string(ra + rd) +
              (ablation ? " (lower-left block non-zero)" : "");
  r.witness = r.figures;
  c["kernel_M"] = jcols(qmat_kernel(M));
  c["verdict"] = "counterexample";
  r.certificate = c;
  return r;
}

ClaimRegistrar reg{Claim{
    "mahdavi24/lemma-1",
    "For a block upper-triangular matrix [[A, B], [0, D]], rank >= rank A + rank D.",
    "exact: kernel bases certify rank A and rank D from above, a minor of the block matrix non-zero mod p "
    "certifies its rank from below",
    Expect::holds, "", 8, [](std::uint64_t s, std::size_t i) { return generate(s, i, false); },
    [](const Instance& in) { return check(in, false); }}};

ClaimRegistrar reg_ablation{Claim{
    "mahdavi24/lemma-1-nonzero-block",
    "With a non-zero lower-left block the inequality fails: rank [[A, B], [C, D]] < rank A + rank D.",
    "exact: kernel vectors certify rank M from above, minors mod p certify rank A and rank D from below",
    Expect::counterexample, "mahdavi24/lemma-1 without the zero block", 4,
    [](std::uint64_t s, std::size_t i) { return generate(s, i, true); },
    [](const Instance& in) { return check(in, true); }}};

}  // namespace
}  // namespace memcert::proofs
