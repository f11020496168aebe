#pragma once
// Private to src/theory/mahdavi24: one step of Proposition 1's induction (docs/THEORY.md section 4), i.e. the
// choice of head h's weights W^h = W_fit + c_h g w^T. Head 1 is Claim 1, each later head Claim 2.
#include <cstddef>
#include <optional>
#include <random>
#include <vector>

#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "z_enclosure.hpp"

namespace memcert::mahdavi24 {

// Head h's weights as the induction chose them. Its logits for example t are a[t] + c s[t]: exact where
// Lemma 4 or the targets need them, enclosed (ab, sb) for the examples of later groups.
struct HeadStep {
  HeadTrace tr;
  std::vector<ScaledVector> a;   // exactly for the group (and where the bounds were too wide), else empty
  std::vector<ScaledBounds> ab;  // bounds on a for the other examples: only their softmax enters Z
  std::vector<std::optional<Rational>> old_spread;  // per earlier example with bounded a: Lemma 4's exact spread
  std::vector<ScaledVector> s;   // exactly, every example
  std::vector<Integer> s_factor; // w^T e's numerator per example: divides every s[t].num (AffineLogits::compact)
  std::vector<AffineLogits> L;     // a + c s as MPFR enclosures, one per example (filled once a, s are final)
  Rational c;                      // the proof's saturation scale (0 for head 1)
  double lambda_hint = 0;          // lambda_min estimate of this step's Z_inf Gram (hint for Z_c's certificate)
  double step_lambda = 0;          // lambda_min estimate of this step's Z_c Gram (hint for the next head's Z_inf)
  FitHead fit;                     // W_fit = U Q_R^+ of Claim 1
  std::optional<Saturator> sat;    // W' = g w^T of Lemma 3 (none for head 1)
  std::vector<std::size_t> jstar;  // Lemma 4's unique maximum of s for each earlier example (h >= 2)
  Eigen::MatrixXd zinfC, zinfR;    // head h's block of Z_inf (rows: earlier examples, then the group)
};

// Lemma 5's sigma from a reference (docs/THEORY.md section 4): sigma_K of Z restricted to heads 1..heads
// (as computed) and rows 0..rows-1 (the first groups, in order), certified once. Z_inf of a later head h
// (heads > this count, rows <= rows) has at least these columns and at most these rows, so its Gram matrix
// is above a principal submatrix of the reference's: sigma_{k_h}(Z_inf) >= sigma.
struct SigmaReference {
  std::size_t heads = 0, rows = 0;
  double sigma = 0;
  // Whether it bounds Z_inf of a head with `k` rows (built after the reference's heads).
  bool covers(std::size_t k) const { return rows >= k && sigma > 0; }
};

// Claim 1 for head 1 (docs/THEORY.md section 4, "Claim 1"): random rational targets for R_1 = `group`, fitted
// exactly by claim1_fit_head and redrawn (at most opt.max_retries times) until the rows
// softmax(l^(t))^T E^(t) have certified rank |R_1|. s = 0, c = 0. Throws std::runtime_error on failure.
HeadStep claim1_first_head(const AttentionDataset& ds, const ZExamples& z, const GramAccumulator& gram,
                           const std::vector<std::size_t>& group, const Theorem1Options& opt, std::mt19937_64& rng);

// Claim 2 for head h >= 2 (docs/THEORY.md section 4): Lemma 3's saturator W' = g w^T (W' e = 0 on R_h =
// `group`, unique maximum of E W' e on `old` = R_1 u ... u R_{h-1}); Claim 1's exact fit of random targets
// on R_h, redrawn until Z_inf (heads 1..h, rows old then group, head h saturated on old) has certified
// rank k_h; eps from Lemma 5 (the larger of the direct and B.2 criteria); c from Lemma 4's bound, the
// maximum over `old`. `gram` holds heads 1..h-1 (all T rows). h is 0-based (h >= 1). Draws Lemma 3's
// candidates, then the targets, from rng. Throws std::runtime_error when a step cannot be certified.
// zinf_hint: an estimate of lambda_min of Z_inf's Gram matrix (the previous step's; 0: none), which
// spares Z_inf's certificate its own estimate when 0.81 of it certifies. ref: a certified reference whose
// heads come before h and whose rows cover R_1..R_h, taken as Z_inf's sigma (no factorization of its own).
HeadStep claim2_saturate_head(const AttentionDataset& ds, const ZExamples& z, const GramAccumulator& gram,
                              const std::vector<std::size_t>& old, const std::vector<std::size_t>& group, std::size_t h,
                              const Theorem1Options& opt, std::mt19937_64& rng, double zinf_hint = 0,
                              const SigmaReference* ref = nullptr);

}  // namespace memcert::mahdavi24
