#pragma once
// ks25 Theorem 4.1 (next-token), Corollary 4.1 (seq-to-seq) and Theorem D.1 (deep sets): the checks
// before building, F1, the uniform attention, F2, the assembled network, its exact end-to-end
// verification, complexity against the theorem's bounds, the certificate, and the linear-phi ablation.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "memcert/data/dataset.hpp"
#include "memcert/theory/ks25/lemmas.hpp"
#include "memcert/theory/ks25/relu_net.hpp"

namespace memcert::ks25 {

// ---- checks before building ---------------------------------------------------------------------------
inline constexpr double kExactSeparationBudget = 1e7;
struct KsPrepared {
  std::size_t N = 0, n = 0, d = 0;
  long C = 0;
  bool seq2seq = false;                          // per-token labels (Corollary 4.1)
  std::vector<QVector> tokens;                   // the distinct tokens (first-occurrence order)
  std::vector<std::vector<TokenId>> seq_ids;     // N x n token ids
  std::vector<Multiset> distinct_multisets;
  std::vector<std::size_t> ms_index;             // sequence -> distinct multiset
  std::vector<long> labels;                      // next-token labels (N)
  std::vector<std::vector<long>> token_labels;   // seq-to-seq labels (N x n)
  // Token-wise (r, delta) separation, exact: r2 = max |x|^2, delta2 = min |x - x'|^2 over distinct tokens
  // when V^2 d <= kExactSeparationBudget; above it delta2 is the certified lower bound g^2 / |u|^2 with g the
  // smallest gap of the projections u^T x (|x - x'| >= |u^T (x - x')| / |u|), delta2_exact = false.
  Rational r2 = 0, delta2 = 0;
  bool delta2_exact = true;
  QVector delta_direction;  // u (when !delta2_exact)
  std::pair<std::size_t, std::size_t> delta_pair{0, 0};  // token ids attaining delta2
  std::pair<std::size_t, std::size_t> delta_pair_seq{0, 0};  // (sequence, position) of the first token
  std::pair<std::size_t, std::size_t> delta_pair_seq2{0, 0};
  // Consistent labeling: same (last token, multiset) => same label (seq-to-seq: per token).
  bool consistent = true;
  std::pair<std::size_t, std::size_t> inconsistent_pair{0, 0};  // sequences
  std::size_t inconsistent_position = 0;                          // token position (seq-to-seq)
};
// Validates shapes and labels (InputError naming `file` and the offending indices: unequal lengths,
// d mismatch, labels outside [0, C), a missing label list), dedups tokens and multisets, computes the
// separation exactly and checks consistency. C defaults to max label + 1.
KsPrepared ks_prepare(const SequenceDataset& ds, std::optional<long> C, const std::string& file);
// The same from the compact form (distinct tokens + ids; sequence_dataset_read_tokens).
KsPrepared ks_prepare(TokenSequenceDataset&& ds, std::optional<long> C, const std::string& file);

// ---- the network ---------------------------------------------------------------------------------------
struct KsNetwork {
  ReluNet f1;    // R^d -> R^3
  QMatrix WOV;   // 3 x 3 = W_O W_V
  ReluNet f2;    // R^3 -> R (empty layers when not built)
};
// The network as float64 arrays (nearest doubles; docs/FORMATS.md "Weights out"): for L in f1, f2 the layer
// count L_layers (), input width L_in_dim (), and per layer i L_Wi (out, in), L_bi (out,); WOV (3, 3).
// Semantics as the certificate's: ReLU after every layer of a net but its last; s = f1(x_pos) +
// WOV mean_k f1(x_k); prediction f2(s).
using KsFloat64Arrays = std::map<std::string, std::pair<std::vector<std::size_t>, std::vector<double>>>;
KsFloat64Arrays ks_weights_float64_arrays(const KsNetwork& net);
// The uniform attention of eq. (52): W_O W_V = [[0,0,0],[0,0,0],[1,0,0]].
QMatrix ks_uniform_attention_wov();
// s = f1(x_pos) + WOV * mean_k f1(x_k) from the f1 outputs of the sequence's tokens.
QVector ks_context(const std::vector<QVector>& f1_tokens, const QMatrix& wov, std::size_t pos);

struct KsOptions {
  std::uint64_t seed = 1;
  bool ablation_linear_phi = false;  // replace phi~ by the linear projection F (no count encoding)
  unsigned threads = 2;
  std::optional<long> C;
};

struct KsBounds {  // Theorem 4.1 / B.1 expressions (log base 2, constants hidden by the paper's <~)
  double log2_R = 0;          // R = 400 sqrt(3) d n^3 r N^5 delta^-1 pi
  double depth_expr = 0;      // sqrt(N log N) + sqrt(N / log N) max(log R, log C)
  double bit_expr = 0;        // log d + sqrt(N / log N) max(log R, log C)
  double parameters_expr = 0; // d + depth_expr (O~(d + sqrt N))
  std::size_t width_bound = 14;
};

// Theorem B.1's expressions (Theorem D.1's with deep_set) for a data set of N sequences of length n in
// R^d, C classes and separation r^2, delta^2: what ks_construct / ks_construct_deep_set report, as a
// function of those figures alone (a certificate states them all).
KsBounds ks_theorem_bounds(std::size_t N, std::size_t n, std::size_t d, long C, const Rational& r2,
                           const Rational& delta2, bool seq2seq, bool deep_set);

struct KsResult {
  KsPrepared prep;
  KsNetwork net;
  PhiTilde phi;             // Lemma B.3 data (not in the ablation)
  TokenProjection linear_F; // the ablation's F
  C1Info f2info;
  bool f2_built = false;
  bool deep_set = false;    // Theorem D.1 (ks_construct_deep_set)
  std::vector<QVector> f1_out;                   // per distinct token
  std::vector<QVector> contexts;                 // per sequence (next-token) or per sequence*n + k
  std::vector<Rational> predictions;             // same indexing
  bool memorized = false;
  std::size_t mismatches = 0;
  std::optional<std::pair<std::size_t, std::size_t>> first_mismatch;  // (sequence, position)
  // eq. (55): contexts of distinct (token, multiset) keys are >= 1/n apart.
  bool eq55_holds = false;
  Rational eq55_min_dist2 = 0;  // min ||s - s'||^2 over keys that differ (0 if a collision)
  std::optional<std::pair<std::size_t, std::size_t>> collision;  // differently-labeled, equal contexts
  std::pair<std::size_t, std::size_t> collision_positions{0, 0};  // token positions (seq-to-seq)
  bool collision_token_sums_equal = false;  // the pair collides for EVERY linear phi
  NetComplexity f1c, f2c, total;
  KsBounds bounds;
  double build_seconds = 0, verify_seconds = 0;
};

// Builds (after ks_prepare) and verifies in exact arithmetic. When the data is inconsistent, returns
// with prep.consistent == false and nothing built.
KsResult ks_construct(const KsPrepared& prep, const KsOptions& opt);

// Certificate (docs/CLI.md: kind "ks"), with the network, the data (distinct tokens + token ids), the
// separation, the complexity and a position-weighted checksum of all network numbers. For a collision
// (ablation) the certificate holds the pair instead of f2.
nlohmann::json ks_certificate_json(const KsResult& r);
// The `construct ks --json` object of docs/CLI.md.
nlohmann::json ks_summary_json(const KsResult& r);

// ---- Theorem D.1: deep sets ----------------------------------------------------------------------------
struct DeepSet {
  ReluNet phi;  // R^d -> R
  ReluNet rho;  // R -> R
  PhiTilde phi_info;
  C1Info rho_info;
  bool memorized = false;
  NetComplexity complexity;  // depth = depth(phi) + depth(rho), width = max
};
// multisets: each a list of points in R^d (any cardinality >= 1); labels non-negative. Equal multisets
// must carry equal labels (std::invalid_argument otherwise).
DeepSet theoremD1_deep_set(const std::vector<std::vector<QVector>>& multisets, const std::vector<long>& labels,
                           std::uint64_t seed);

// Theorem D.1 in the Transformer format: each sequence read as a multiset (labels must agree on equal
// multisets, else prep.consistent is set false with the pair). f1 = (phi~, 0, 0), the same uniform
// attention, and f2 = rho~ reading n * (third coordinate) = sum phi~; so the prediction is
// rho~(sum_k phi~(x_k)). Verified exactly on every sequence; certificate claim "ks25/theorem-D.1".
KsResult ks_construct_deep_set(const KsPrepared& prep, const KsOptions& opt);

// ---- data sets and the complexity sweep ------------------------------------------------------------------
// N sequences of n tokens drawn from a vocabulary of V distinct vectors in R^d (rational: integer
// coordinates in [-8, 8] halved, or float64 uniform in [-1, 1] taken exactly), labels in [0, C), made
// consistent (a repeated (last token, multiset) reuses its label).
SequenceDataset ks_generate(std::size_t N, std::size_t n, std::size_t d, std::size_t V, long C, std::uint64_t seed,
                            bool float64);
// The same with per-token labels (Corollary 4.1), consistent per (token, multiset).
SequenceDataset ks_generate_seq2seq(std::size_t N, std::size_t n, std::size_t d, std::size_t V, long C,
                                    std::uint64_t seed, bool float64);

// Both in the compact form (the vocabulary's drawn tokens once, ids in first-occurrence order; labels as
// ks_generate / ks_generate_seq2seq draw them: the expanded data sets are the same).
TokenSequenceDataset ks_generate_tokens(std::size_t N, std::size_t n, std::size_t d, std::size_t V, long C,
                                        std::uint64_t seed, bool float64, bool seq2seq);

struct KsSweepRow {
  std::size_t N = 0;
  std::size_t parameters = 0, nonzero_parameters = 0, depth = 0, width = 0, bit_complexity = 0;
  bool memorized = false, eq55 = false;
  double seconds = 0;
  nlohmann::json certificate;  // kind "ks" (only with keep_certificates)
};
struct KsSweep {
  std::vector<KsSweepRow> rows;
  double exponent = 0;         // least-squares slope of log(parameters) on log(N)
  double coefficient = 0;      // parameters ~ coefficient * N^exponent
  std::optional<std::size_t> first_below_N;   // smallest swept N with parameters < N
  double crossover_estimate = 0;  // N where coefficient * N^exponent = N (extrapolated; inf if exponent >= 1)
  std::size_t n = 0, d = 0, V = 0;
  long C = 0;
};
// Builds and verifies the construction for every N (generated data) and fits the growth exponent.
// For `claims run ks25/theorem-4.1`: Ns = {100, 400, 1600, 6400}, n = 16, d = 32, V = 512, C = 10
// takes ~20 s on 2 cores and fits an exponent ~0.48. keep_certificates stores each row's certificate.
KsSweep ks25_parameter_sweep(const std::vector<std::size_t>& Ns, std::size_t n, std::size_t d, std::size_t V,
                             long C, std::uint64_t seed, bool keep_certificates = false);
nlohmann::json ks_sweep_json(const KsSweep& s);

}  // namespace memcert::ks25
