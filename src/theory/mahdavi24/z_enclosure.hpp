#pragma once
// Private to src/theory/mahdavi24: the enclosure of the representation matrix Z (docs/THEORY.md section 1,
// eq. 7) as the induction builds it, and the certified rank test on it (docs/THEORY.md section 7).
#include <cstddef>
#include <optional>
#include <vector>

#include <Eigen/Dense>

#include "memcert/data/dataset.hpp"
#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/matrix.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "int128.hpp"

namespace memcert::mahdavi24 {

// Threads for loops that call MPFR: fast_threads() when MPFR keeps its caches thread-local (a TLS build,
// as Debian's is), else 1 (MPFR's shared caches are not safe to use from several threads at once).
int mpfr_threads();

// The Gram matrix of the enclosure of Z, accumulated over column blocks (one block per head), with the
// rigorous error information (|C||C|^T, squared radii) a rank certificate needs.
class GramAccumulator {
 public:
  explicit GramAccumulator(std::size_t T);
  // Adds the column block (centre C, radius R), T x cols.
  void add(const Eigen::MatrixXd& C, const Eigen::MatrixXd& R);
  std::size_t cols() const { return cols_; }
  // fl(C C^T)_ij, T x T; only the lower triangle is accumulated (gram_accumulate), so read through this.
  double at(std::size_t i, std::size_t j) const { return i >= j ? G_(i, j) : G_(j, i); }
  // Hands G's storage (row-major T x T, lower triangle valid) to the caller; the accumulator is empty afterwards.
  std::vector<double> release() {
    std::vector<double> g = std::move(G_.data());
    G_ = DMatrix();
    return g;
  }
  // Certifies rank >= |rows| for the enclosure restricted to `rows`, with the accumulated blocks plus
  // an optional extra block (|rows| x cols, centre/radius). want_sigma: also aim for a good lower bound
  // on the |rows|-th singular value (mu near the estimated lambda_min); otherwise mu just above
  // ||R||_F^2, which is all the rank claim needs.
  // lambda_hint > 0: an estimate of lambda_min from a nearby matrix, tried first.
  GramRankResult certify(const std::vector<std::size_t>& rows, const Eigen::MatrixXd* XC, const Eigen::MatrixXd* XR,
                         bool want_sigma, double lambda_hint = 0) const;

 private:
  DMatrix G_;
  std::vector<double> norm2_, rad2_;  // per row: squared norms of the centres / of the radii (round-to-nearest sums)
  std::size_t cols_ = 0, blocks_ = 0;
};

// The chosen examples in the forms the induction computes with: softmax-mix enclosures of each context,
// exact contexts and queries as scaled integers, and the token norm bound B (B2 = B^2 exactly).
struct ZExamples {
  // Not copyable: ctx shares sd's context numerators (ContextEnclosure's shared form). Moves keep them.
  ZExamples() = default;
  ZExamples(const ZExamples&) = delete;
  ZExamples& operator=(const ZExamples&) = delete;
  ZExamples(ZExamples&&) = default;
  ZExamples& operator=(ZExamples&&) = default;
  std::size_t n = 0, d = 0;
  std::vector<ContextEnclosure> ctx;
  ScaledDataset sd;  // contexts and queries in scaled form
  std::vector<QVector> eq;
  Rational B2 = 0;  // max over tokens of the squared Euclidean norm (exact)
  double B = 0;     // sqrt(B2) in double (used only by the B.2 estimate)
};
ZExamples z_examples(const AttentionDataset& ds, mpfr_prec_t prec);

// Row `row` of (C, R) := enclosure of softmax(logits)^T E^(t) (exact logits) ...
void z_fill_rows(const ZExamples& z, Eigen::MatrixXd& C, Eigen::MatrixXd& R, std::size_t row, const QVector& logits,
                 std::size_t t);
// ... of softmax(a + cc s)^T E^(t) with the logits held as an AffineLogits (cc >= 0) ...
void z_fill_affine(const ZExamples& z, Eigen::MatrixXd& C, Eigen::MatrixXd& R, std::size_t row, const AffineLogits& L,
                   const Rational& cc, std::size_t t);
// ... of the token E^(t)_j (the limit row e_j^T E^(t) of a saturated head).
void z_fill_token(const ZExamples& z, Eigen::MatrixXd& C, Eigen::MatrixXd& R, std::size_t row, std::size_t t,
                  std::size_t j);

// Claim 1's logits of every example, exactly: a^(t) = E^(t) U Q_R^+ e^(t) with Q_R^+ = M Q_R^T,
// M = (Q_R^T Q_R)^{-1}, evaluated as (E U)(M (Q_R^T e)). E U and Q_R^T e are products of small integers,
// exact in double while every partial sum stays below 2^53 (checked); only M y and (E U) v touch big
// integers -- about a third of the direct route's big-integer work. Falls back to the direct route
// E (U (Q_R^+ e)) when the magnitudes do not allow exact doubles. Runs on the fast-path threads.
std::vector<ScaledVector> claim1_logits_all(const ZExamples& z, const FitHead& fit, const std::vector<std::size_t>& group);
// Claim 1 with a dyadic left inverse (docs/THEORY.md section 4, "Claim 1 with a dyadic W_Q"): P (|group| x d)
// = Q_R^+ from a double least-squares solve, rounded to the grid 2^-s with |numerators| <= 2^bits (so P Q_R
// is near, not equal to, the identity: off by about cond(Q_R) 2^-bits). std::nullopt when the solve gives no finite non-zero matrix.
std::optional<ScaledMatrix> claim1_dyadic_left_inverse(const ZExamples& z, const std::vector<std::size_t>& group,
                                                       int bits = 40);
// The logits E^(t) U P e^(t) of the listed examples, exactly (U d x k, P k x d): P e and U P e in __int128,
// E (U P e) in __int128 halves, all bounds checked; falls back to big integers when they do not hold.
// Runs on the fast-path threads.
std::vector<ScaledVector> claim1_logits_dyadic(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P,
                                               const std::vector<std::size_t>& examples);
// The same logits as bounds, for examples whose exact logits nothing needs: U P e exactly in __int128, then
// E (U P e) under context_times_bounds. An example whose magnitudes leave that route, or whose enclosure
// is wider than 2^-36 (cancellation; huge logits), gets its exact logits in exact[i] instead (bounds[i]
// then empty). Both vectors get one entry per listed example.
void claim1_logit_bounds(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P,
                         const std::vector<std::size_t>& examples, std::vector<ScaledBounds>& bounds,
                         std::vector<ScaledVector>& exact);
// Lemma 4's spread max_i a_i - a_{j*} (>= 0) of each listed example's logits a = E U P e, exactly, from their
// bounds (claim1_logit_bounds; factor > 0): only the rows that can hold the maximum (hi_i >= max_k lo_k)
// and row j* are computed exactly. std::nullopt where bounds[i] is null or empty.
std::vector<std::optional<Rational>> claim1_spreads(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P,
                                                    const std::vector<std::size_t>& examples,
                                                    const std::vector<const ScaledBounds*>& bounds,
                                                    const std::vector<std::size_t>& jstar);
// Lemma 3's scores s^(t) = (w^T e^(t)) E^(t) g for every example, exactly (E g exact in double when the
// magnitudes allow, else in big integers).
// factors (optional): w^T e's numerator per example, the integer every s^(t).num is a multiple of (s^(t) =
// factor (E g) / den), for AffineLogits::compact.
std::vector<ScaledVector> lemma3_scores_all(const ZExamples& z, const QVector& g, const QVector& w,
                                            std::vector<Integer>* factors = nullptr);

// Bounds lo_j <= (E x)_j <= hi_j for a context's numerators E (n x d row-major, integer-valued doubles, as
// ScaledDataset::context_doubles) and an integer vector x given as doubles xd within 2u |xd_c| of x_c (round
// to nearest or truncation): the double product plus the a priori bound gamma_{d+3} sum_c |E_jc| |xd_c|.
// Used for the logits of examples whose exact values nothing needs (only their softmax enclosures).
void context_times_bounds(const double* E, std::size_t n, std::size_t d, const double* xd, double* lo, double* hi);

// E g exactly in 128-bit integers for a context whose numerators E (n x d, row-major) are integers below
// 2^52 held as doubles (ScaledDataset::context_doubles; max_abs >= their largest magnitude,
// ScaledDataset::context_max_abs) and an integer vector g (|g_c| < 2^62): false when
// 52 + bits(max |g|) + bits(d) > 126 (a sum could then leave __int128; use the big-integer route). Blocks
// of terms whose sums provably stay below 2^62 are taken in 64-bit integers.
bool context_times_int64(const std::vector<double>& E, double max_abs, std::size_t n, std::size_t d,
                         const std::vector<std::int64_t>& g, std::vector<int128::i128>& out);

// saturation_data for exact vectors in scaled form (positive denominators): integers only, one
// Rational each for the gap and the spread.
SaturationData scaled_saturation(const ScaledVector& a, const ScaledVector& s);

}  // namespace memcert::mahdavi24
