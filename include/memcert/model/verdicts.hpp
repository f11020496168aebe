#pragma once
// What `memcert certify` decides for each example of a trained model's data set (docs/MODELS.md), in one
// form for every architecture: a verdict, a rigorous enclosure of the example's margin, the precision that
// decided it, and how PyTorch's float32 evaluation of the same example relates to the exact one.
//
// The margin of an example: classification logit[y] - max_{c != y} logit[c] (correct iff > 0, wrong iff
// <= 0: a tie is not a correct prediction); regression tolerance - |f(x) - y| (correct iff >= 0, wrong iff
// < 0). A verdict other than undecided rests only on margin_lo / margin_hi, which enclose the exact margin
// of the stored weights (every float16/bfloat16/float32/float64 weight taken as the dyadic rational it is).
#include <cstddef>
#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace memcert {

enum class ExampleVerdict : unsigned char { correct, wrong, undecided };

struct ModelVerdicts {
  // One entry per example certified (the examples first .. first + count - 1 of CertifyOptions).
  std::vector<ExampleVerdict> verdict;
  std::vector<double> margin_lo, margin_hi;  // margin_lo <= exact margin <= margin_hi (outward-rounded)
  std::vector<short> bits;                   // 53: decided by the double filter; 128/256/512: MPFR; 0: undecided
  // The margin PyTorch's float32 forward pass computes (an estimate, from an emulation of its operations in
  // float32), and an upper bound on |float32 margin - exact margin| valid for any evaluation order of those
  // operations (unit roundoff 2^-24, fused or not). An example is a float32 disagreement when its float32
  // verdict may differ from the exact one: the exact verdict is undecided, or the bound does not separate
  // the float32 margin's sign from the exact margin's (docs/MODELS.md).
  std::vector<double> float32_margin, float32_error_bound;
  std::vector<unsigned char> float32_disagreement;  // 0/1
};

// `count` examples, every one undecided with the whole real line as its enclosure (and a float32
// disagreement): what a certify function starts from and overwrites as it decides.
inline ModelVerdicts model_verdicts_undecided(std::size_t count) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ModelVerdicts v;
  v.verdict.assign(count, ExampleVerdict::undecided);
  v.margin_lo.assign(count, -kInf);
  v.margin_hi.assign(count, kInf);
  v.bits.assign(count, 0);
  v.float32_margin.assign(count, 0.0);
  v.float32_error_bound.assign(count, kInf);
  v.float32_disagreement.assign(count, 1);
  return v;
}

struct CertifyOptions {
  std::size_t first = 0;                  // certify examples first .. first + count - 1
  std::size_t count = static_cast<std::size_t>(-1);  // (clipped to T)
  unsigned threads = 0;                   // 0: memcert's default (util/threads.hpp)
  int max_bits = 512;                     // the ladder's last MPFR precision (128, 256, 512)
  // Called now and then with the number of examples done (of `count`); may throw to stop (Ctrl-C, budget).
  std::function<void(std::size_t done, std::size_t total)> progress;
  // Regression: the tolerance as an exact decimal or p/q ("1e-3", "1/8"); "" for classification.
  std::string tolerance;
  // The examples these options select among T: [first, first + count) clipped to [0, T).
  std::size_t first_of(std::size_t T) const { return std::min(first, T); }
  std::size_t count_of(std::size_t T) const { return std::min(count, T - first_of(T)); }
};

}  // namespace memcert
