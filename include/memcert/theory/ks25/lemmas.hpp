#pragma once
// ks25 (Kajitsuka & Sato, ICLR 2025), Appendix B/C/G: each lemma of the Theorem 4.1 construction as its
// own function, named after it (docs/THEORY.md section 5). Everything is exact. Where the paper only proves
// that a constant exists (Lemma G.1's direction, Lemma B.2's weights, Lemma C.2's projection), memcert
// draws a candidate and CERTIFIES the property it needs on the data, exactly, retrying on failure.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/theory/ks25/relu_net.hpp"

namespace memcert::ks25 {

using TokenId = std::size_t;
// A multiset of tokens: (token id, count > 0) sorted by id.
using Multiset = std::vector<std::pair<TokenId, long>>;
// A sparse non-negative integer vector: (coordinate, value != 0) sorted by coordinate.
using CountVec = std::vector<std::pair<std::size_t, long>>;

// ---- Lemma B.1: at most N distinguishing tokens -----------------------------------------------------
// For DISTINCT multisets m(1..N), a set A (|A| <= N, sorted) of tokens such that the restrictions m(i)|A
// stay distinct; built by the paper's induction (add one token where a newly colliding pair differs).
// Throws std::invalid_argument when two input multisets are equal.
std::vector<TokenId> lemmaB1_distinguishing_tokens(const std::vector<Multiset>& distinct_multisets);
Multiset multiset_restrict(const Multiset& m, const std::vector<TokenId>& sorted_A);

// ---- Lemma G.1 (Park et al. 2021): a projection direction -------------------------------------------
// A vector v with positive integer entries <= K such that v^T x is injective on `points` (certified by
// sorting the exact values) and the certified Park-type ratio
//   min_{x != x'} (v^T (x - x'))^2 / (|v|^2 |x - x'|^2)
// (exact, over ALL pairs when there are at most `max_pairs_points` points). The paper guarantees a unit v
// with ratio >= 8 / (pi dim |X|^4); memcert reports both.
struct ProjectionDirection {
  std::vector<long long> v;
  long long K = 0;
  bool injective = false;
  bool ratio_certified = false;   // all pairs examined
  Rational min_ratio2 = 0;        // exact (valid when ratio_certified)
  std::pair<std::size_t, std::size_t> argmin{0, 0};
  double park_bound2 = 0;         // 8/(pi dim |X|^4), for comparison only
  unsigned attempts = 0;
};
ProjectionDirection lemmaG1_projection_direction(const std::vector<CountVec>& points, std::size_t dim,
                                                 std::uint64_t seed, std::size_t max_pairs_points = 4000);

// ---- Lemma B.2: integer token weights whose sums separate the multisets -----------------------------
// f : A -> positive integers with sum_{x in m(i)|A} f(x) pairwise distinct integers (so >= 1 apart),
// certified exactly. memcert takes f = v of Lemma G.1 on the count vectors m~(i) (K ~ N^2, smaller than
// the paper's ceil(4 N^2 |A| sqrt(pi)), the property is checked, not assumed).
struct TokenWeights {
  std::vector<TokenId> A;          // sorted
  std::vector<Integer> f;          // f[i] = weight of A[i]
  std::vector<Integer> sums;       // per multiset
  Integer min_gap = 0;             // min |sum_i - sum_j| over i != j (>= 1 certified), 0 if N = 1
  Integer max_sum = 0;
  ProjectionDirection g1;
};
TokenWeights lemmaB2_token_weights(const std::vector<Multiset>& distinct_multisets,
                                   const std::vector<TokenId>& A, std::uint64_t seed);

// ---- Lemma C.2 (Vardi et al.): token projection F(x) = ReLU(alpha u^T x + beta) ---------------------
// Distinct points map to values in [2, R] with pairwise gaps >= 2 (certified: sort, adjacent gaps).
// u is a random integer direction (or `direction` when it is injective on the points), alpha a power of
// two, beta an integer.
struct TokenProjection {
  QVector u;
  Rational alpha = 0, beta = 0;
  std::vector<Rational> values;  // F(points[i])
  Rational min_gap = 0;          // >= 2 (certified); 0 when fewer than two points
  Rational max_value = 0;        // R
  bool used_given_direction = false;
  unsigned attempts = 0;
};
TokenProjection lemmaC2_token_projection(const std::vector<QVector>& distinct_points, std::uint64_t seed,
                                         const QVector* direction = nullptr);

// ---- Lemmas G.2-G.6: the pieces of the Vardi memorizer, appended to a NetBuilder --------------------
// G.2 trapezoid: t(x) = ReLU(1 - ReLU(2a - 2x) - ReLU(2x - 2b)): 1 on [a, b], 0 outside
// [a - 1/2, b + 1/2]. Two layers, width 2 (+ carried values).
std::pair<Lin, Lin> trapezoid_hidden(const Lin& x, const Rational& a, const Rational& b);  // pre-activations
Lin trapezoid_out(const Lin& h1, const Lin& h2);                                             // pre-activation
Lin lemmaG2_trapezoid(NetBuilder& nb, Lin& x, const Rational& a, const Rational& b,
                      const std::vector<Lin*>& carry = {});

// G.3 selection: x1 < ... < xN with gaps >= 2 cut into m = ceil(N/k) groups of k; for each value list
// vals[o] (m non-negative integers) returns y_o(x) = vals[o][j] when x lies in group j's interval
// [floor(x_{first}), floor(x_{last} + 1)], and 0 when x is at distance >= 2 from every x_i outside all
// intervals. The G.2 layers of consecutive groups are pipelined: depth m + 1.
std::vector<Lin> lemmaG3_selection_network(NetBuilder& nb, Lin& x, const std::vector<Rational>& sorted_points,
                                           std::size_t k, const std::vector<std::vector<Integer>>& vals,
                                           const std::vector<Lin*>& carry = {});

// G.4 bit extraction with Telgarsky's triangle psi(z) = ReLU(ReLU(2z) - ReLU(4z - 2)).
// A stream holds z1 = psi^(t)(v/2^L + 2^-(L+1)) and z2 = psi^(t)(v/2^L + 2^-(L+2)) for an integer
// 0 <= v < 2^L; bit t of v (most significant first) is 2^(L+2-t) ReLU(z2 - z1) after t steps.
struct BitStream {
  Lin z1, z2;
  std::size_t L = 0;  // total bits
  std::size_t t = 0;  // iterations done
};
BitStream bitstream_init(const Lin& value, std::size_t L);
// Extracts the next `nbits` bits of every stream in the same layers (2 layers per bit); returns each
// stream's BIN_{t+1 : t+nbits}.
std::vector<Lin> lemmaG4_bit_extraction(NetBuilder& nb, const std::vector<BitStream*>& streams, std::size_t nbits,
                                        const std::vector<Lin*>& carry = {});
// Telgarsky's triangle on a rational (for tests): psi(z) = max(0, max(0,2z) - max(0,4z-2)).
Rational telgarsky_psi(const Rational& z);

// G.5 window test: 1 when y <= x <= y + 1, 0 when x > y + 3/2 or x < y - 1/2. Two layers.
Lin lemmaG5_window(NetBuilder& nb, Lin& x, const Lin& y, const std::vector<Lin*>& carry = {});

// G.6: u packs `fields` fields of B bits (u's field i = floor of a labeled projection), w packs the
// labels (B bits each). Returns w's field i when floor(x) = u's field i, 0 when
// |x - 1/2 - field| > 1 for every field. Depth fields * (2B + 3).
Lin lemmaG6_packed_lookup(NetBuilder& nb, Lin& x, const Lin& w, const Lin& u, std::size_t fields, std::size_t B,
                          const std::vector<Lin*>& carry = {});

// ---- Lemma C.1: the extended Vardi memorizer ---------------------------------------------------------
// V distinct points in R^d, labels (non-negative integers; 0 = "the other V - N points"). Appends to
// `nb` (whose current values are `in`, the point coordinates) a network with output = the label on every
// point. Stage I: lemmaC2 (values in [2, R], gaps >= 2); Stage II: sort the labeled projections, cut into
// m groups of k, pack w_j (labels) and u_j (floors) in B-bit fields, select with G.3; Stage III: G.6.
// k minimizes the depth (m + 1) + k (2B + 3).
struct C1Info {
  TokenProjection stage1;
  std::size_t labeled = 0, k = 0, m = 0, B = 0, rho = 0, c = 0;
  std::size_t depth = 0;  // layers appended
};
struct C1Out {
  Lin out;  // the label
  Lin x;    // the stage-I projection F (>= 2 on the points), still live
  C1Info info;
};
C1Out lemmaC1_vardi_memorizer(NetBuilder& nb, const std::vector<Lin>& in, const std::vector<QVector>& points,
                              const std::vector<Integer>& labels, std::uint64_t seed,
                              const QVector* stage1_direction = nullptr);
// Standalone network x -> label (for tests and deep sets).
ReluNet lemmaC1_network(const std::vector<QVector>& points, const std::vector<Integer>& labels, std::uint64_t seed,
                        C1Info* info = nullptr, const QVector* stage1_direction = nullptr);

// ---- Lemma B.3: phi~ --------------------------------------------------------------------------------
// tokens: the V distinct tokens; multisets: DISTINCT multisets over token ids. phi~(a) = f(a) on A
// (Lemmas B.1, B.2), 0 on the other tokens, built by Lemma C.1. Sums of phi~ over distinct multisets are
// distinct integers (>= 1 apart), certified.
struct PhiTilde {
  TokenWeights weights;
  std::vector<Integer> phi;  // phi~ on every token (the labels given to Lemma C.1)
  C1Info c1;
};
C1Out lemmaB3_phi_tilde(NetBuilder& nb, const std::vector<Lin>& in, const std::vector<QVector>& tokens,
                        const std::vector<Multiset>& distinct_multisets, std::uint64_t seed, PhiTilde& info);

}  // namespace memcert::ks25
