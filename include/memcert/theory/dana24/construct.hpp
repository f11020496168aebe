#pragma once
// dana24 (Dana, Pydi, Chevaleyre, "Memorization in Attention-only Transformers", AISTATS 2025): the
// association construction of docs/papers/dana24.md section 5, one function per step, each named after the
// paper step it implements. The model is eq. (2):
//   T(t) = W_U ( x(t,S) + sum_h W_O^h W_V^h A^h(t) ),  x(t,s) = e(t_s) + pos_s,
//   A^h(t) = sum_s softmax_s( x(t,S)^T W_Q^hT W_K^h x(t,s) ) x(t,s).
// Floating point FINDS the weights (steps 3-7); the weights are exact doubles (dyadic rationals), and
// step 8 proves memorization end to end with outward-rounded interval arithmetic. The independent
// checker (kind "dana24") re-proves it with MPFR.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <array>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "memcert/linalg/qmat/enclosure.hpp"
#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/theory/dana24/assoc_data.hpp"
#include "memcert/util/choice.hpp"
#include "memcert/util/stage_times.hpp"

namespace memcert::dana24 {

// Step 6a's target encoder (dana24_targets): the hypercube or the moment curve, or automatic (hypercube when
// N <= 2^d). Named "auto", "hypercube", "moment" (util/choice.hpp).
enum class Dana24Targets { automatic, hypercube, moment };
inline std::span<const std::string_view> choice_names(Dana24Targets) {
  static constexpr std::array<std::string_view, 3> names{"auto", "hypercube", "moment"};
  return names;
}

// The paper's quantities: b = ceil(log2 N) (at least 1), the hypercube coordinates N labels need, and
// H d_h + d, the most sequences the construction accepts (T <= H d_h + d).
constexpr std::size_t hypercube_bits(std::size_t N) {
  std::size_t b = 1;
  while (b < 64 && (std::size_t{1} << b) < N) ++b;
  return b;
}
constexpr std::size_t capacity(std::size_t H, std::size_t dh, std::size_t d) { return H * dh + d; }

struct Dana24Options {
  std::size_t H = 1, dh = 1, d = 2;
  std::uint64_t seed = 1;
  int max_attempts = 12;       // redraws of the random choices (each attempt is certified or rejected);
                               // the head scale cycles over the attempts (boost 0, 2, 1, 3, -1, 4, 2, 1)
  Choice<Dana24Targets> targets = Dana24Targets::automatic;  // also settable by name: "auto", "hypercube", "moment"
  bool certify_rank = true;    // step 5 (skip only for boundary experiments)
};

// Step 1-2 output: the model in base coordinates (x' = e' + pos'), rank-one heads W'^h = q_h k_h^T and
// value maps U^h (d_h x d). All entries are dyadic rationals stored exactly as doubles.
struct BaseModel {
  DMatrix e, pos;            // N x d, S x d
  DMatrix q, k;              // H x d (row h = q_h, k_h)
  std::vector<DMatrix> U;    // H matrices d_h x d
};

// Step 1, base embeddings (paper: Lemma 3, the A.1 genericity): e'(n), pos'(s) with coordinates k/16
// in [1, 3], drawn at random. Rational points cannot be algebraically independent (Lemma 3 cannot hold
// for them); step 5 certifies the consequence (rank) instead of the hypothesis.
void dana24_base_embeddings(std::size_t N, std::size_t S, std::size_t d, std::mt19937_64& rng, BaseModel& m);
// Step 2, heads (paper: A.1's choice of W_QK, Remark 2: rank one suffices; A.2's W_V): q_h, k_h with
// coordinates in [-c, c], c = 2^(boost - floor(log2 sqrt d) - 1), so that at boost 0 the scores stay of
// order 1 (strong saturation collapses the rank toward the hard-attention limit); U^h with coordinates
// k/16 in [-1, 1]. Small d needs larger scores (boost > 0): the construction's retries vary `boost`.
void dana24_rank_one_heads(std::size_t H, std::size_t d, std::size_t dh, std::mt19937_64& rng, BaseModel& m,
                           int boost = 0);

// Steps 3-4, attention enclosed (paper: eq. (1)) and the feature matrix (paper: A.2's W_V A' augmented
// with head 0): row t of centre/radius is F(t)^T = [x'(t,S); U^1 A'^1(t); ...; U^H A'^H(t)]^T, a T x
// (d + H d_h) enclosure (the true F(t) lies within radius of centre, entrywise). The attention uses the
// fast rigorous kernel mha_z_enclosure_double; the first block is exact.
struct FeatureEnclosure {
  DMatrix centre, radius;  // T x (d + H d_h)
};
FeatureEnclosure dana24_attention_features(const AssocData& a, const BaseModel& m);

// Step 5, certify rank F = T (paper: Lemma 2, A.2's "W_V keeps rank" and the skip step, on this
// instance): Lemma 5 enclosure certificate on all T rows of F^T. nullopt when not certified.
std::optional<EnclosureRankCertificate> dana24_certify_feature_rank(const FeatureEnclosure& f);

// Step 6a, targets with a certified margin (paper: Proposition 3 / Lemma 1's target encoder).
//  hypercube (N <= 2^b, b = ceil(log2 N) <= d): W_U row j = the +-1 bit pattern of j on the first b
//    coordinates; E*(t) = W_U[g(t)] + zeta_t, |zeta| <= 1/(4b): margin >= 2 - 2b/(4b) = 3/2.
//  moment curve: W_U row j = (j, -j^2, 0, ...), E*(t) = (2(g + zeta_t), 1, r_t), |zeta_t| <= 1/4: logits
//    (g + zeta)^2 - (j - g - zeta)^2, margin >= 1 - 2|zeta| >= 1/2.
// The random zeta_t, r_t make E* span d dimensions (else M below is singular).
struct Targets {
  std::string kind;
  DMatrix WU;       // N x d
  DMatrix E;        // d x T (column t = E*(t))
  double design_margin = 0;  // the guaranteed margin of the exact targets
};
Targets dana24_targets(const AssocData& a, std::size_t d, Choice<Dana24Targets> kind, std::mt19937_64& rng);

// Step 6b, solve [M, W_O] F = E* (paper: A.2 "W_U = W, solve E = W_O W_V A'"): X (d x (d + H d_h)) with
// X F~ = E* (unique when T = d + H d_h; else E* F~^+ + Z (I - F~ F~^+) with random Z, since the least-norm
// solution has rank <= rank E*). Computed in double (QR), entries exact doubles; det M != 0 is then
// decided EXACTLY (Bareiss on the rational values). nullopt when M is singular.
struct Readout {
  DMatrix M;    // d x d
  DMatrix WO;   // d x H d_h
  Rational det_M;
};
std::optional<Readout> dana24_solve_readout(const FeatureEnclosure& f, const Targets& tg, std::mt19937_64& rng);

// Step 7, map back to the model of eq. (2) (paper: A.2's change of basis e' = W_OV^{-1} e, done after the
// solve with M in the role of W_OV): e = M e', pos = M pos', W_Q^h = [(P^T q_h)^T; 0], W_K^h = [(P^T
// k_h)^T; 0], W_V^h = U^h P, W_O^h = block h of W_O, W_U from the targets, with P ~ M^{-1} in double. The
// identities (scores unchanged, W_V^h A^h = G^h, E(t) = [M, W_O] F(t)) hold up to double rounding; no
// proof relies on them: step 8 evaluates the resulting weights as they are.
struct Model {
  std::size_t N = 0, S = 0, d = 0, dh = 0, H = 0;
  DMatrix e, pos, WU;                  // N x d, S x d, N x d
  std::vector<DMatrix> WQ, WK, WV;     // H x (d_h x d)
  std::vector<DMatrix> WO;             // H x (d x d_h)
};
Model dana24_map_back(const BaseModel& b, const Readout& r, const Targets& tg, std::size_t dh);

// Step 6c, the exact statement of the solve (paper: A.2's "solve E = W_O W_V A'", made exact). X = [M, W_O]
// and the feature centre F~ are dyadic rationals, so the targets the solution reaches on F~,
// E* := [M, W_O] F~, are exact dyadic rationals: they are computed here with integers, and so is the
// margin of their logits, margin[t] = min_{j != g(t)} (W_U E*(t))_g - (W_U E*(t))_j (exact). lo/hi
// (d x T) enclose E* in doubles. The design targets of step 6a are not reached exactly (the solve is a
// double solve); E* is the exact target that IS reached, and its margin is what is certified.
struct ExactTargets {
  std::vector<Rational> margin;
  Rational min_margin;
  DMatrix lo, hi;
};
ExactTargets dana24_exact_targets(const FeatureEnclosure& f, const Readout& r, const DMatrix& WU,
                                  const AssocData& a, int threads = 2);
// An upper bound of max_t ||E(t) - E*(t)||_inf, E(t) the input of W_U of the mapped-back model (step 7,
// evaluated in outward-rounded double intervals): how far the model is from the exact targets.
double dana24_encoder_deviation(const Model& m, const AssocData& a, const ExactTargets& x);

// Step 8, end-to-end certificate (paper: Corollary 1's conclusion, by a direct route): evaluates eq. (2)
// on every sequence in outward-rounded interval arithmetic and certifies T(t)_{g(t)} > T(t)_j for all
// j != g(t). A sequence the double intervals leave undecided is re-evaluated with MPFR intervals at 128,
// 256 and 512 bits (ill-conditioned solves give large output weights whose products cancel). margin[t]
// is a certified lower bound of min_j (T(t)_g - T(t)_j) (<= 0: not certified).
struct ArgmaxCertificate {
  std::vector<double> margin;
  std::size_t certified = 0;
  std::size_t escalated = 0;  // MPFR re-evaluations (sequence x precision) the double pass needed
  double min_margin = 0;
};
ArgmaxCertificate dana24_certify_argmax(const Model& m, const AssocData& a);
// E(t) = x(t,S) + sum_h W_O^h W_V^h A^h(t) (the input of W_U) as intervals, for one sequence.
std::vector<std::pair<double, double>> dana24_encoder_enclosure(const Model& m, const std::vector<std::uint32_t>& seq);

// The whole construction with retries. Throws InputError for shapes it does not accept (d < 1,
// d_h > d, T > H d_h + d).
struct Dana24Result {
  Model model;
  std::string targets_kind;
  std::size_t n_last = 0, attempts = 0;
  int head_boost = 0;          // the head scale of the successful (or last) attempt
  bool rank_certified = false;
  std::optional<EnclosureRankCertificate> rank_cert;
  double sigma_min_lower = 0;  // sqrt(mu - ||R||_F^2)-free report: sqrt(mu) of the certificate
  Rational det_M = 0;
  // Step 6c: M, the feature centre F~ the solve used (T x (d + H d_h)), the exact smallest margin of
  // E* = [M, W_O] F~ and the bound on max_t ||E(t) - E*(t)||_inf (0 / empty when no attempt got there).
  // The certificate carries them (object "readout") only when the margin is positive and the bound finite.
  DMatrix M, features_centre;
  Rational targets_min_margin = 0;
  double encoder_deviation = 0;
  ArgmaxCertificate argmax;
  bool memorized = false;      // every sequence's arg-max certified
  StageTimes times;
};
Dana24Result dana24_construct(const AssocData& a, const Dana24Options& o);

// The rank ceiling of the construction (docs/papers/dana24.md 4.2(g)): rank F <= H min(d_h, d) + min(d, n_last).
std::size_t dana24_feature_rank_ceiling(std::size_t H, std::size_t dh, std::size_t d, std::size_t n_last);

// Parameter counts: the paper's d(S + 2N + 4 d_h H) and Remark 2's d(S + 2N + 2(d_h + 1) H).
std::size_t dana24_parameters_paper(std::size_t N, std::size_t S, std::size_t d, std::size_t dh, std::size_t H);
std::size_t dana24_parameters_remark2(std::size_t N, std::size_t S, std::size_t d, std::size_t dh, std::size_t H);

// Certificate (kind "dana24", docs/CERTIFICATES.md) and the CLI summary (docs/CLI.md fields).
nlohmann::json dana24_certificate_json(const AssocData& a, const Dana24Result& r, const std::string& claim);
nlohmann::json dana24_summary_json(const AssocData& a, const Dana24Result& r, const std::string& claim);
// Weights as float64 arrays (exact: every weight is a double): e (N,d), pos (S,d), W_Q/W_K/W_V (H,d_h,d),
// W_O (H,d,d_h), W_U (N,d).
void dana24_weights_write_npz(const std::string& path, const Model& m);

}  // namespace memcert::dana24
