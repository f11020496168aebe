#pragma once
// The network every `memcert certify` architecture with one attention layer reduces to (mahdavi24-baseline,
// mha), and its certified evaluation (docs/MODELS.md): tokens 0..n of width d_in, token 0 the query and
// tokens 1..n the keys (no token attends to token 0),
//   x_j  = We t_j + be + pe_j                     (embedding; x_j = t_j without one)
//   q_h  = Wq_h^T x_0 + bq_h,  k_hj = Wk_h^T x_j + bk_h,  v_hj = Wv_h^T x_j + bv_h
//   a_h  = softmax_j (q_h . k_hj / sqrt(m)),  j = 1..n
//   out  = Wo^T [sum_j a_hj v_hj]_h + bo (+ x_0 with skip),  logits = Wr out + br (logits = out without Wr).
// Every weight and datum is a double taken exactly. Classification: margin = logit[y] - max_{c != y}
// logit[c]; regression: margin = tolerance - max_c |logit[c] - y_c| (verdicts.hpp).
//
// The ladder per example (attention_readout.cpp documents the error bounds): a double forward pass with a
// proved a-priori error bound decides when its margin enclosure excludes the threshold; otherwise the
// whole pass runs again in MPFR interval arithmetic (directed rounding) at 128, 256 and 512 bits
// (CertifyOptions::max_bits); an example none of them decides is undecided. A float32 emulation of the same
// graph gives the float32 margin estimate, and a bound valid for ANY evaluation order of PyTorch's float32
// graph bounds its distance from the exact margin.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memcert/model/verdicts.hpp"
#include "memcert/numeric/float32_le.hpp"
#include "memcert/numeric/rational.hpp"

namespace memcert {

struct AttentionReadout {
  std::size_t d_in = 0, D = 0;  // token width in the data; model width (D = d_in without embedding)
  std::size_t H = 0, dh = 0, dv = 0, d_o = 0, C = 0;
  bool embed = false;
  std::vector<double> We, be;   // D x d_in (nn.Linear layout), D (be may be empty: no bias)
  std::vector<double> pe;       // pe_rows x D, added to tokens 0..n (empty: none)
  std::size_t pe_rows = 0;
  std::vector<double> Wq, Wk;   // H x D x dh
  std::vector<double> bq, bk;   // H x dh (empty: none)
  std::vector<double> Wv, bv;   // H x D x dv, H x dv (bv may be empty)
  std::uint64_t scale_m = 1;    // scores are multiplied by 1 / sqrt(scale_m)
  std::vector<double> Wo, bo;   // (H dv) x d_o, d_o (bo may be empty)
  bool skip = false;            // out += x_0 (d_o == D)
  bool readout = false;         // logits = Wr out + br; else logits = out (C = d_o)
  std::vector<double> Wr, br;   // C x d_o, C (br may be empty)
};

// The examples in place (nothing copied): token 0 of example t at q32/q64 + t q_stride, key j (1..n) at
// k32/k64 + t k_stride + (j - 1) d. Exactly one of q32/q64 and of k32/k64 is set.
struct ReadoutExamples {
  std::size_t T = 0, n = 0, d = 0;
  const Float32Le* q32 = nullptr;  // float32 as stored (any alignment)
  const double* q64 = nullptr;
  std::size_t q_stride = 0;
  const Float32Le* k32 = nullptr;
  const double* k64 = nullptr;
  std::size_t k_stride = 0;
  bool classification = true;
  const std::int64_t* classes = nullptr;  // T, each in [0, C) (checked by the caller)
  const Rational* targets = nullptr;      // regression: T x C exact targets
  Rational tolerance;                     // regression: >= 0
  // The labels: class labels (classification) or exact targets with `tolerance` (CertifyOptions'
  // exact decimal; InputError unless a number >= 0).
  void set_labels(bool classify, const std::int64_t* class_labels, const Rational* exact_targets,
                  const std::string& tolerance_text);
};

// Checks the shapes against each other (std::invalid_argument: callers check their files first).
void attention_readout_check(const AttentionReadout& net);

// Certifies examples opts.first .. opts.first + count - 1 (verdicts.hpp; bits 53 / 128 / 256 / 512 / 0).
ModelVerdicts attention_readout_certify(const AttentionReadout& net, const ReadoutExamples& ex,
                                        const CertifyOptions& opts);

// The whole forward pass of one example in MPFR interval arithmetic at `bits`: the margin's enclosure
// [lo, hi] (rounded outward to doubles). For tests and the ladder's escalation.
void attention_readout_margin_mpfr(const AttentionReadout& net, const ReadoutExamples& ex, std::size_t t, long bits,
                                   double& lo, double& hi);

// The double filter alone on one example: the enclosure it proves (lo > hi when it proves nothing, e.g. an
// overflow). For tests.
void attention_readout_margin_double(const AttentionReadout& net, const ReadoutExamples& ex, std::size_t t, double& lo,
                                     double& hi);

}  // namespace memcert
