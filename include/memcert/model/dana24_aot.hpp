#pragma once
// `dana24-aot`: the attention-only transformer (optionally with GELU MLPs) of Dana, Pydi and Chevaleyre,
// as their models.py (`Transformer`, `AoT`) defines it, loaded from its state_dict and certified example by
// example (verdicts.hpp).
//
// Forward pass of one sequence x_0 .. x_{S-1} (token ids), as Transformer.forward computes it:
//   res_i = word_emb[x_i]                                              (N x d table, rows by token id)
//   per layer l:  c_i = linear_compress(res_i) + pos_emb[i]            (d != d_head; else res_i + pos_emb[i])
//                 a_i = sum over the layer's parallel blocks p of MHA_p(c)_i
//                 res_i = linear_decompress(a_i) + res_i               (d != d_head; else a_i + res_i)
//                 res_i = W2 gelu(W1 res_i + b1) + res_i               (when the model has MLPs; exact GELU)
//   logits = unemb res_{S-1}; the prediction is the arg-max, the target `next`.
// MHA (torch.nn.MultiheadAttention, bias=False): [q; k; v] = in_proj_weight c_i, `heads` sub-heads of
// d_head / heads components each, scores q_i.k_j / sqrt(d_head / heads) for j <= i (causal), softmax, the
// weighted sum of the v_j, concatenated, times out_proj.weight^T.
//
// The positions computed are those the last position's logits depend on: every position through the
// layers before the last, and in the last layer the keys/values of every position but the query,
// attention output, residual and MLP of the last position only.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memcert/model/state_dict.hpp"
#include "memcert/model/verdicts.hpp"

namespace memcert {

struct Dana24Aot {
  std::size_t N = 0;         // vocabulary (word_emb.weight / unemb.weight rows)
  std::size_t d = 0;         // residual width
  std::size_t d_head = 0;    // attention width (pos_emb.weight columns)
  std::size_t S_max = 0;     // pos_emb.weight rows (the authors' context_window)
  std::size_t layers = 0;    // attn_seq.<l>
  std::size_t parallel = 0;  // attn_seq.<l>.<p> per layer
  std::size_t heads = 1;     // sub-heads per MultiheadAttention (--heads)
  std::size_t width = 0;     // MLP hidden width, 0 without MLPs
  std::size_t max_len = 0;   // longest sequence accepted: attn_mask's size when stored (the authors'
                             // forward needs S = context_window - 1), else S_max
  bool has_mask = false;     // attn_mask stored: sequences must have exactly max_len tokens
  bool compress = false;     // d != d_head: linear_compress / linear_decompress are applied
  // Row-major, as stored (exact doubles).
  std::vector<double> word_emb;                       // N x d
  std::vector<double> pos_emb;                        // S_max x d_head
  std::vector<std::vector<double>> in_proj, out_proj;  // [l * parallel + p]: 3 d_head x d_head, d_head x d_head
  std::vector<double> compress_w, decompress_w;       // d_head x d, d x d_head (empty unless compress)
  std::vector<std::vector<double>> mlp_w1, mlp_b1, mlp_w2;  // [l]: width x d, width, d x width
  std::vector<double> unemb;                          // N x d
  std::string file;                                   // for messages
};

// Infers N, d, d_head, S_max, layers, parallel blocks and MLP width from the keys and checks them: a
// missing, unexpected or mis-shaped tensor, a non-float or non-finite tensor, an attn_mask other than the
// causal one, heads not dividing d_head: InputError "<file>: <key>: expected ...". linear_compress /
// linear_decompress are required when d != d_head; the authors' class always stores them, so when
// d == d_head they may be present (square, finite) and are unused.
Dana24Aot dana24_aot_load(const StateDict& sd, std::size_t heads, const std::string& file);
// dana24_aot_load's checks of keys, dtypes and shapes on a state_dict's headers alone
// (StateDictLimits::screen; heads 0: the heads are not checked).
void dana24_aot_screen(const StateDict& headers, std::size_t heads, const std::string& file);

struct Dana24AotData {
  std::size_t T = 0, S = 0;
  std::vector<std::int64_t> sequences;  // T x S, row-major
  std::vector<std::int64_t> next;       // T
  std::string file;                     // for messages
};

// .npz with integer arrays `sequences` (T, S) and `next` (T,), T >= 1, S >= 1; anything else is InputError
// naming the member. Token ids are checked against the model by dana24_aot_certify.
Dana24AotData dana24_aot_read_data(const std::string& path);

// Every token id in [0, N) and S <= m.max_len (S == m.max_len when the model stores attn_mask: the
// authors' forward passes it to MultiheadAttention, which refuses any other length), else InputError
// naming the position (before any work).
void dana24_aot_check_data(const Dana24Aot& m, const Dana24AotData& data);

// The verdicts of examples opt.first .. opt.first + opt.count - 1 (clipped to T). Ladder per example: a
// double forward pass in midpoint-radius form whose radii bound the rounding error rigorously (gamma_n
// bounds for every dot product, outward-rounded radii, exp and erf correctly rounded by MPFR), then MPFR
// intervals at 128, 256, 512 bits (up to opt.max_bits); undecided when none separates the margin from 0.
// The margin of class c against the target y is computed as (unemb[y] - unemb[c]) . h, so two identical
// unembedding rows give an exact 0 (a tie: certified wrong).
//
// float32 fields: the forward pass PyTorch computes, emulated in float32, and a bound on |float32 margin -
// exact margin| valid for any evaluation order, under the model that every float32 +, *, /, sqrt is
// correctly rounded (unit roundoff u = 2^-24, subnormal results within 2^-150 absolute) and float32 exp and
// erf are within 2 ulps (relative 4u, or 2^-149 absolute when subnormal); weights stored in a wider type
// count with their rounding to float32. An example is a float32 disagreement when its exact verdict is
// undecided, or correct with margin_lo - bound <= 0, or wrong with margin_hi + bound > 0.
ModelVerdicts dana24_aot_certify(const Dana24Aot& m, const Dana24AotData& data, const CertifyOptions& opt);

}  // namespace memcert
