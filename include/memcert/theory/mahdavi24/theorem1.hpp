#pragma once
// Theorem 1 of mahdavi24, constructed step by step (docs/THEORY.md sections 3-4). One function per proof
// step, named after it; `theorem1_construct` chains them (Proposition 1's induction over heads, then
// Step 2's read-out) and produces a certificate that the independent checker re-verifies.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "memcert/data/dataset.hpp"
#include "memcert/linalg/matrix.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/theory/mahdavi24/quantities.hpp"
#include "memcert/util/choice.hpp"
#include "memcert/util/stage_times.hpp"

namespace memcert::mahdavi24 {

// ---- options as enums (each also settable by its name, util/choice.hpp) ---------------------------
// The scale the saturating heads' weights are built at (Theorem1Options::scale).
enum class Theorem1Scale { proof, weyl, network, value };
inline std::span<const std::string_view> choice_names(Theorem1Scale) {
  static constexpr std::array<std::string_view, 4> names{"proof", "weyl", "network", "value"};
  return names;
}
// Which criterion of Lemma 5 gave a head's eps (HeadTrace::eps_criterion): none (head 1, or a head without
// examples), the direct Weyl criterion sqrt(m) eps B < sigma, or the paper's B.2 criterion.
enum class EpsCriterion { none, direct, b2 };
inline std::span<const std::string_view> choice_names(EpsCriterion) {
  static constexpr std::array<std::string_view, 3> names{"none", "direct", "b2"};
  return names;
}

// The data set's contexts and queries as integer numerators over one denominator each (exact), computed
// once for the many exact products of the construction.
struct ScaledDataset {
  // contexts[t].num is 0 x 0 (den still set) for a typed-backed data set whose context numerators are
  // all held, exactly, in context_doubles[t]: scaled_context rebuilds it when a big-integer route needs it.
  std::vector<ScaledMatrix> contexts;
  std::vector<ScaledVector> queries;
  // The context numerators as exact doubles (row-major n x d) with their largest magnitude, for exact
  // small-integer products in double; empty for a context with a numerator of 2^52 or more.
  std::vector<std::vector<double>> context_doubles;
  std::vector<double> context_max_abs;
  std::size_t context_rows = 0;  // n
};
ScaledDataset scaled_dataset(const AttentionDataset& ds);
// Context t in scaled form: sd.contexts[t] itself, or (typed data) rebuilt into `scratch` from the exact
// doubles and returned.
const ScaledMatrix& scaled_context(const ScaledDataset& sd, std::size_t t, ScaledMatrix& scratch);

// ---- Claim 1: fit |R| examples in one head (docs/THEORY.md section 4, "Claim 1") ----------------------
// W_fit = U Q_R^+ with u^(t) = E^(t)+ l^(t) (exact right inverse) or a given exact preimage u^(t)
// (E^(t) u^(t) = l^(t) is then checked exactly), Q_R^+ = (Q_R^T Q_R)^{-1} Q_R^T (exact left inverse).
// Then E^(t) W_fit e^(t) = l^(t) for t in R, exactly, and W_fit = U Q_R^+ is an exact factorization of
// rank <= |R| (kept factored: the weights are W_K = U, W_Q = Q_R^+T). Returns nullopt when a context is
// rank deficient, Q_R has dependent columns, or a given preimage does not map to its target.
// `sd`: scaled_dataset(ds) when the caller has it (the exact checks then run on integers).
struct FitHead {
  QMatrix U;      // d x |R|, columns u^(t)
  QMatrix Qpinv;  // |R| x d, the exact left inverse of Q_R
  std::vector<QVector> targets;
};
// The d x d matrix W_fit = U Q_R^+ (exact; for tests and small cases: the product of big rationals is costly).
QMatrix claim1_fit_matrix(const FitHead& f);
std::optional<FitHead> claim1_fit_head(const AttentionDataset& ds, const std::vector<std::size_t>& group,
                                       const std::vector<QVector>& targets,
                                       const std::vector<QVector>* preimages = nullptr,
                                       const ScaledDataset* sd = nullptr);


// ---- Lemma 3: the rank-one saturator W' = g w^T ---------------------------------------------------
// w in the orthogonal complement of span{e^(t) : t in group} (exact kernel), g random small integers;
// exact checks: w^T e^(t) = 0 for t in group (20); for t in `others`, w^T e^(t) != 0 and
// s^(t) = E^(t) W' e^(t) = (w^T e^(t)) E^(t) g has a unique maximum (the weakening of (21) the
// construction needs). Retries the random choices until every check passes. `sd`: scaled_dataset(ds)
// when the caller has it (otherwise the needed rows are scaled on the fly).
struct Saturator {
  QVector g, w;
  std::size_t attempts = 0;  // number of candidates tried (1 = first try passed)
};
bool lemma3_check(const AttentionDataset& ds, const std::vector<std::size_t>& group,
                  const std::vector<std::size_t>& others, const QVector& g, const QVector& w,
                  const ScaledDataset* sd = nullptr);
std::optional<Saturator> lemma3_rank_one_saturator(const AttentionDataset& ds,
                                                   const std::vector<std::size_t>& group,
                                                   const std::vector<std::size_t>& others,
                                                   std::mt19937_64& rng, std::size_t max_attempts = 64,
                                                   const QVector* first_g = nullptr, const ScaledDataset* sd = nullptr);

// ---- Lemma 4, quantitative: the saturation scale -------------------------------------------------
// For logits a + c s with j* the unique argmax of s, gap delta = s_j* - max_{j != j*} s_j and spread
// A = max_j (a_j - a_j*): ||softmax(a + c s) - e_j*||_1 <= 2 (n-1) exp(A - c delta).
struct SaturationData {
  bool unique = false;
  std::size_t jstar = 0;
  Rational gap, spread;
};
SaturationData saturation_data(const QVector& a, const QVector& s);
// The smallest "short" rational c (a dyadic with <= 12 significant bits, rounded up) with
// c >= (A + ln(2(n-1)/eps)) / delta, bounded rigorously (MPFR). n = 1: returns 0 (any c works).
Rational lemma4_saturation_scale(const Rational& spread, const Rational& gap, std::size_t n, const Rational& eps);
// Rigorous upper bound on 2 (n-1) exp(A - c delta) (for tests and the trace).
double lemma4_l1_bound_upper(const Rational& spread, const Rational& gap, std::size_t n, const Rational& c);

// ---- Lemma 5 (Weyl): the admissible eps -------------------------------------------------------------
// Direct criterion: sqrt(m) eps B < sigma (checked exactly as m eps^2 B^2 < sigma^2). Returns a short
// rational eps (<= 1) satisfying it strictly, or nullopt when sigma <= 0.
std::optional<Rational> lemma5_weyl_eps(const Rational& sigma_lower, std::size_t m, const Rational& B2);
// The paper's B.2 criterion ||C|| sqrt(m) eps B < sigma_min(D - C Z_inf_{h,1}) on the reduced matrix
// (C from the column reduction of the old heads' block), evaluated in double: an estimate only.
struct WeylB2 {
  double eps = 0, c_norm = 0, sigma = 0;
  bool available = false;
};
// Inputs (row-major doubles): Goo = Z_o Z_o^T (m x m), Gno = X Z_o^T (k x m), Linf (m x d) the limit
// rows of head h for the old examples, D (k x d) head h's rows for the new examples; B the token norm bound.
WeylB2 lemma5_weyl_b2_estimate(const std::vector<double>& Goo, const std::vector<double>& Gno,
                               const std::vector<double>& Linf, const std::vector<double>& D, std::size_t m,
                               std::size_t k, std::size_t d, double B);

// ---- certified rank of an enclosure via a Gram matrix --------------------------------------------
// Accumulates, over column blocks, the double Gram matrix of the centres together with rigorous
// error information (row norms of the centres, the squared radii) and certifies rank >= k for a row subset
// by Rump's floating-point positive-definiteness test (rump_isspd, docs/THEORY.md section 7) applied to G - mu I.
struct GramRankResult {
  bool ok = false;
  double mu = 0;           // G - mu I certified PD
  double radius_f = 0;     // ||R_S||_F (upper bound)
  double sigma_lower = 0;  // sqrt(mu) - ||R_S||_F (rounded down), > 0 when ok
  double lambda_estimate = 0;
};

// ---- c_network: smallest grid value {0} u {c_max 2^-j : j = 40..0} (increasing) accepted ------------
// Acceptance (the whole network's final rank certificate with every head at one common c) is not
// monotone in c, so every grid point is tried in increasing order; nullopt when none is accepted.
std::optional<Rational> c_network_grid_search(const Rational& c_max,
                                              const std::function<bool(const Rational&)>& certifies);

// ---- c_weyl: the smallest c satisfying head h's direct Weyl criterion with the actual eps ------------
// logits[i]: head h's logits a + c s for the i-th earlier example (s with a unique maximum at jstar[i]);
// the criterion is m eps(c)^2 B^2 < sigma_lower^2 with eps(c) = max_i ||softmax(a_i + c s_i) - e_{j*_i}||_1
// (m = logits.size(), B2 = B^2), each eps enclosed with MPFR directed rounding. eps is non-increasing in c,
// so per example a doubling-then-bisection search (from c_hint, a scale where the criterion is expected
// to hold) to relative width 2^-12 gives c_t; c = max_t c_t is then re-certified for every example.
// Returns nullopt when sigma_lower <= 0 or no scale up to c_hint 2^64 is certified.
struct WeylScale {
  Rational c = 0;                    // the criterion is certified at c (hence for every c' >= c)
  std::optional<Rational> c_lower;   // the criterion was not certified at c_lower (< c); none when c = 0
  double eps_upper = 0;              // certified upper bound on eps(c)
};
std::optional<WeylScale> weyl_scale_bisect(const std::vector<const AffineLogits*>& logits,
                                           const std::vector<std::size_t>& jstar, const Rational& sigma_lower,
                                           const Rational& B2, const Rational& c_hint);

// ---- Step 2: the read-out --------------------------------------------------------------------------
// Z known as centre +- radius (T x Hd, row-major doubles) with full row rank: M solving Z M = Y (in
// double, min-norm, iteratively refined; M is then exact as the doubles it holds), and a rigorous bound
// on max |Z M - Y| over the whole enclosure (real labels), or for class labels (cls != null; y_hat =
// Z M + shift) the certified arg-max margin min_t (y_label - max_other).
struct Step2Readout {
  Eigen::MatrixXd M;  // Hd x d_out
  double max_error = 0, min_margin = 0;
};
// `gram`: fl(Zc Zc^T) when the caller has it (T x T row-major; only used to compute M, which is then
// checked rigorously either way; factored in place, so its contents are gone afterwards), else computed here.
Step2Readout step2_readout(const std::vector<double>& Zc, const std::vector<double>& Zr, std::size_t T, std::size_t Hd,
                           const QMatrix& Ytarget, const std::vector<long>* cls, const std::vector<QVector>& shift,
                           std::vector<double>* gram = nullptr);

// Step 2 at growing MPFR precision (128, 256, 512 bits), for when step2_readout's bound does not certify
// the labels (an ill-conditioned Z: its double enclosure and solve are too coarse). For the examples
// `rows` of ds and the heads' W_K, W_Q: Z is enclosed again from the exact logits at that precision, M
// solved there (Cholesky of Zc Zc^T), and the labels checked rigorously -- real labels within
// min(tolerance, 2^-20 max(1, |y|)) (the independent checker's rule), class labels with a positive
// arg-max margin. Y (labels), Yt (targets: Y minus the skip's shift), cls and shift are by position in
// rows. ok: M (exact, H d x d_out) certifies every label; otherwise `why` says why not. Over the budget
// (step2_escalation_cost > kStep2EscalationOps, or T H d > kStep2EscalationEntries) nothing is tried.
struct ReadoutEscalation {
  bool ok = false;
  QMatrix M;
  double max_error = 0, min_margin = 0;
  long bits = 0;  // the precision that certified (or the last tried)
  std::string why;
};
inline constexpr double kStep2EscalationOps = 1e8, kStep2EscalationEntries = 1e6;
double step2_escalation_cost(std::size_t T, std::size_t Hd, std::size_t n);
ReadoutEscalation step2_readout_escalate(const AttentionDataset& ds, const std::vector<std::size_t>& rows,
                                         const std::vector<MhaHead>& heads, const QMatrix& Y, const QMatrix& Yt,
                                         const std::vector<long>* cls, const std::vector<QVector>& shift,
                                         const Rational& tolerance);

// ---- the whole construction -----------------------------------------------------------------------
struct Theorem1Options {
  std::size_t H = 1, dh = 1;
  std::optional<std::size_t> dv;  // default d_out
  bool skip = false;
  std::uint64_t seed = 1;
  // Saturation scales (THEORY.md section 4, "Which c to report"): compute c_weyl per head (a second
  // induction chain with every head at its c_weyl) and c_network (one common c for all heads).
  bool saturation = true;
  // The scale the weights are built at: "proof" (Lemma 4's c per head, the Weyl chain certified step by
  // step), "weyl" (each head at its c_weyl), "network" (every head at c_network) or "value" (every head at
  // c_value). Other than "proof", the certificate rests on the final rank(Z) >= T alone.
  Choice<Theorem1Scale> scale = Theorem1Scale::proof;
  Rational c_value = 0;
  // c_network's grid search skips the values <= this one: a caller whose independent check refused the
  // certificate built at c_network escalates to the next grid value (theorem1_construct_accepted).
  std::optional<Rational> c_network_above;
  Rational tolerance = Rational(1, 1000000);
  std::size_t max_retries = 40;
  // Lemma 5's B.2 criterion is estimated only for heads with at most this many earlier examples: its
  // m x m factorization then costs as much as a rank certificate (a quarter of the construction at
  // H = 128), and at H = 64 the direct criterion's eps was the larger at every head with m > 2048.
  std::size_t b2_max_old = 2048;
  // Lemma 5's sigma from a reference Gram matrix (docs/THEORY.md section 4, "sigma from a reference"): heads
  // 1..h0 alone on the rows of the next heads, certified once for all heads whose rows fit in this fraction
  // of the reference's h0 d columns. 0: every head certifies its own Z_inf (a k_h^3 factorization each).
  double sigma_reference_ratio = 0.75;
  mpfr_prec_t precision = 64;
  // Claim 1's W_Q (docs/THEORY.md section 4): false = a short dyadic matrix near Q_R^+ with the targets
  // defined as the logits it gives (the default: exact and small); true = the exact left inverse Q_R^+.
  bool exact_fit = false;
  std::function<void(const std::string&)> narrate;  // step-by-step text (demo), may be empty
  // Called after each head of the induction with (heads done, H); may be empty (CLI: stderr progress).
  std::function<void(std::size_t, std::size_t)> progress;
  StageTimes* timings = nullptr;  // when set, wall-clock seconds per stage are added to it
  // Data by reference (docs/CERTIFICATES.md): when data_file is set, the certificate names this file and
  // data_digest (memcert_checker::attention_arrays_digest of the T* examples used) instead of embedding
  // the contexts and queries; the labels stay embedded.
  std::string data_file, data_digest;
};

struct HeadTrace {
  std::size_t head = 0;  // 1-based
  std::vector<std::size_t> group;           // example indices (into the chosen examples)
  std::vector<QVector> targets;             // l^(t), t in group
  QVector g, w;                             // W'_h = g w^T (empty for head 1)
  std::size_t lemma3_attempts = 0, target_attempts = 0;
  std::size_t old_examples = 0;             // m
  Rational gap, spread;                     // min delta / max A over old examples
  std::optional<Rational> eps;              // chosen eps
  Choice<EpsCriterion> eps_criterion = EpsCriterion::none;
  std::optional<Rational> eps_direct;
  std::optional<double> eps_b2;
  double sigma_lower = 0;                   // certified lower bound on sigma_{k_h}(Z_inf)
  std::size_t sigma_reference_heads = 0;    // > 0: sigma_lower certified for heads 1..this alone on rows
                                            // R_1 u ... (a superset of Z_inf's); 0: Z_inf's own Gram matrix
  Rational c;                               // the c the weights use (0 for head 1)
  Rational c_proof;                         // Lemma 4's c from the admissible eps (the proof's c)
  std::optional<Rational> c_weyl;           // smallest c of the direct Weyl criterion, heads 1..h-1 at
                                            // their c_weyl (none when that chain could not be certified)
  std::optional<Rational> c_weyl_lower;     // the criterion was not certified there (bisection's other end)
  double sigma_weyl = 0;                    // certified sigma_{k_h} of that chain's Z_inf
  double eps_weyl = 0;                      // certified upper bound on the actual eps at c_weyl
  std::size_t rank_target = 0;              // k_h
  double step_sigma_lower = 0;              // certified sigma_{k_h}(Z_c) lower bound at the chosen c
};

struct Theorem1Result {
  std::size_t H = 0, n = 0, d = 0, dh = 0, dv = 0, d_out = 0, r = 0, T_star = 0, T_data = 0;
  std::vector<std::size_t> examples;  // indices into the input data set (the first T* examples)
  bool skip = false, class_labels = false, labels_generated = false;
  MhaWeights weights;
  std::vector<HeadTrace> trace;
  Choice<Theorem1Scale> scale = Theorem1Scale::proof;  // Theorem1Options::scale as used
  std::optional<Rational> c_network;      // smallest grid c (every head at it) with the final certificate
  double network_sigma_lower = 0;         // that certificate's sigma_T lower bound
  bool weyl_chain = false;                // every head's c_weyl was certified
  std::size_t rank_Z_lower = 0;
  double final_sigma_lower = 0, final_mu = 0;
  double max_label_error = 0;   // rigorous bound on max |y_hat - y| (real labels)
  double min_class_margin = 0;  // rigorous lower bound on min (y_label - max other) (class labels)
  bool labels_ok = false;
  bool memorized = false;
  // The read-out's precision: 53 (double, step2_readout) or the MPFR bits step2_readout_escalate needed.
  long readout_bits = 53;
  // Non-empty when rank(Z) >= T* is certified (so an exact read-out exists) but no read-out was certified
  // within the label rule even at the escalation's highest precision: undecided, not "not memorized".
  std::string readout_undecided;
  Rational tolerance;
  std::string hypotheses;       // "assumptions-1-2", "grouping-facts", or "none" (method "generic")
  // "theorem": the proof's construction on the first T* examples; "generic": random exact weights for
  // all T examples (generic_weights_construct), certified on the examples whose rows of Z are.
  std::string method = "theorem";
  std::size_t rank_Z_numerical = 0;   // generic: numerical rank of Z over ALL T examples (an estimate)
  std::size_t rank_Z_bound = 0;       // generic: min(T, H d), a bound on rank(Z) for any weights
  Rational logit_scale = 0;           // generic: the power of two the random W_K were scaled by
  std::size_t generic_attempts = 0;   // generic: random weight draws screened
  nlohmann::json certificate;   // the certificate (kind "theorem1")
};

// The read-out an escalation certified (esc.ok), taken over: M becomes esc.M, and res records it
// (labels_ok, readout_bits and the label bounds at that precision).
void step2_adopt_escalation(Theorem1Result& res, ReadoutEscalation& esc, QMatrix& M);

// Raised when a hypothesis fails: `witness` is JSON describing it (exit 1).
struct HypothesisFailure : std::runtime_error {
  nlohmann::json witness;
  HypothesisFailure(const std::string& what, nlohmann::json w) : std::runtime_error(what), witness(std::move(w)) {}
};

// The labels of the first `count` examples as the construction uses them (real labels, class labels as
// one-hot rows over the whole data set's classes, or random labels m/64 from rng when the file has none);
// sets res.class_labels, res.d_out, res.labels_generated. Throws InputError on a label shape it cannot take.
void theorem1_labels(const AttentionDataset& ds, std::size_t count, std::mt19937_64& rng, Theorem1Result& res,
                     QMatrix& Y, std::vector<long>& cls);
// Step 2's factorization of a read-out M (H d x d_out, exact) into W_V^h = M_h (padded to d_v columns),
// W_O stacking identities into the first d_out coordinates and W_D selecting them; w.heads must hold H heads.
void step2_factor_readout(MhaWeights& w, const QMatrix& M, std::size_t d, std::size_t dv, std::size_t dout);

// Groups R_1 (r examples), R_h (h >= 2, the next r-1) over the first min(T, H(r-1)+1) examples.
std::vector<std::vector<std::size_t>> theorem1_groups(std::size_t T, std::size_t H, std::size_t r);

// The full construction (Proposition 1 by induction over heads, see proposition1.hpp, then Step 2).
// Throws InputError for bad usage (H = 0, d_v < d_out, d < d_out, n > d, label shape) and
// HypothesisFailure when the hypotheses fail; otherwise returns the certified result (result.memorized tells whether every check passed).
Theorem1Result theorem1_construct(const AttentionDataset& ds, const Theorem1Options& opt);

// theorem1_construct, then `accepted(result)` (the caller's independent check of result.certificate; it
// may complete the certificate first, e.g. a data digest). At scale "network" a refused certificate is
// rebuilt at the next larger grid value of c_network (the engine's rank test and the checker's differ in
// their enclosures, and the smallest certified grid value can sit at the edge of one of them), until one is
// accepted or the grid is exhausted (std::runtime_error, as for theorem1_construct). Other scales return
// the first result. `accepted` is called for every result with a certificate.
Theorem1Result theorem1_construct_accepted(const AttentionDataset& ds, Theorem1Options opt,
                                           const std::function<bool(Theorem1Result&)>& accepted);

// Beyond Theorem 1 (docs/THEORY.md, "Beyond T*"): when T > T*, a generic choice of the weights can still
// give rank(Z) = T as long as T <= H d (Z is T x H d). Draws random exact W_K, W_Q per head (small
// integers times a power of two chosen so the logits are of order one), screens a few draws in double,
// computes the enclosure of Z for ALL T examples at the best one, picks the rows a pivoted QR calls
// independent and certifies rank >= k on them (Gram matrix + Rump, docs/THEORY.md section 7), then Step 2's
// read-out on those k examples. Result: method "generic", examples = the k certified examples (indices into
// ds), rank_Z_lower = k, rank_Z_numerical, and the certificate (kind "theorem1", method "generic") when the
// labels are reproduced (result.memorized). Honest by construction: k < T is reported, never hidden.
// Same usage checks and options as theorem1_construct (H, dh, dv, skip, seed, tolerance, precision).
Theorem1Result generic_weights_construct(const AttentionDataset& ds, const Theorem1Options& opt);

// The certificate of kind "theorem1" for a finished construction (docs/THEORY.md section 7): sizes, the chosen
// examples `ds` (contexts, queries) with their labels (`Y` for real labels, `cls` when res.class_labels),
// the exact weights, the trace and its trace_checksum. Deterministic: equal inputs give equal JSON.
// data_file non-empty: "data" names that file and data_digest instead of embedding the contexts and
// queries (data by reference, docs/CERTIFICATES.md); the labels stay embedded.
nlohmann::json theorem1_write_certificate(const Theorem1Result& res, const AttentionDataset& ds, const QMatrix& Y,
                                          const std::vector<long>& cls, const std::string& data_file = "",
                                          const std::string& data_digest = "");

// The certificate's "trace_checksum" (FNV-1a 64, hex) over the trace entries the checker does not
// re-derive (attempt counts, sigma values, c_weyl, the B.2 estimate) and the descriptive top-level fields.
std::string theorem1_trace_checksum(const nlohmann::json& cert);

// The data generate_attention_dataset draws (`memcert generate theorem1|shared|general`): independent
// contexts, one shared context (Proposition 2), or entries in general position (finer rationals m/4096).
enum class AttentionDataKind { theorem1, shared, general };
inline std::span<const std::string_view> choice_names(AttentionDataKind) {
  static constexpr std::array<std::string_view, 3> names{"theorem1", "shared", "general"};
  return names;
}
// Default embedded instance and generators (rational entries m/64, seeded). `kruskal`: queries with
// Kruskal rank exactly that value (queries_with_kruskal_rank; Assumption 1's boundary when it equals n).
AttentionDataset generate_attention_dataset(Choice<AttentionDataKind> kind, std::size_t T, std::size_t n, std::size_t d,
                                            std::optional<std::size_t> classes, std::uint64_t seed,
                                            std::optional<std::size_t> kruskal = std::nullopt);

}  // namespace memcert::mahdavi24
