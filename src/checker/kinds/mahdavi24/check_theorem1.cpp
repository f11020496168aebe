// kind "theorem1", claim "mahdavi24/theorem-1": the written multi-head attention weights memorize the
// certificate's T examples (docs/THEORY.md sections 1, 3, 4 "Step 2", and 7). Re-derived from scratch:
//  1. exact logits a_h = E W_K^h (W_Q^h)^T e for every example and head (integer arithmetic over one
//     common denominator per matrix, GMP);
//  2. softmax enclosures alpha_h = x / sum(x), x_k = exp(a_k - max a) with MPFR directed rounding, and
//     p_h = E^T alpha_h enclosed entrywise in double midpoint-radius arithmetic with a rigorous bound
//     (float_kernels.hpp, mix_enclosure): row t of Z is [p_1; ...; p_H] in [centre +- radius];
//  3. rank(Z) >= T for EVERY matrix of the enclosure: G = fl(C C^T) of the double centres with the
//     rigorous bound |fl(G) - C C^T| <= gamma_m |C||C|^T; mu just above ||R||_F^2; G - mu I proved
//     positive definite by Rump's floating-point test (BIT 2006; docs/THEORY.md section 7 constants, first
//     term doubled as a margin), so sigma_T(C) > ||R||_F >= ||R||_2 and Weyl gives rank >= T;
//  4. the whole forward pass o_h = W_V^T p_h, o = W_O^T [o_h] (+ e with skip), y_hat = W_D^T o in
//     MPFR intervals: every real label y within 2^-20 max(1, |y|) (the checker's rule, never the
//     certificate's), or a certified arg-max with positive margin for class labels;
//  5. the trace's target logits for each head's group equal the recomputed exact logits (Claim 1);
//     Lemma 3's conditions, gap and spread, Lemma 4's scale c and Lemma 5's direct criterion per head, with
//     the sigma_lower it uses re-certified: Rump's test on the Gram matrix of that step's Z_inf (heads
//     1..h-1 as computed, head h in its saturation limit) shifted by (sigma_lower + ||R||_F)^2.
// Only IEEE round-to-nearest double +, -, *, /, sqrt (no FMA contraction: the build disables it),
// GMP and MPFR are trusted. Reading the contexts and heads, and steps 1, 2 and 4 (example by example, each
// thread with its own scratch) run on checker_threads() threads, as do the Gram product and the Cholesky
// factorization of step 3; the first failure in index order is reported, so the verdict and its message
// do not depend on the number of threads or on scheduling.
#include <algorithm>
// The stages and what each re-derives: kinds/mahdavi24/theorem1_stages.hpp.
#include <string>

#include "kernel/float_kernels.hpp"
#include "kinds/mahdavi24/theorem1_stages.hpp"

namespace memcert_checker {

namespace {

using namespace theorem1;

// The stages in order; the first failure decides.
bool check_theorem1_body(const Value& cert, std::string& why, unsigned threads, DataDigestJob& job) {
  Theorem1 k;
  return read_theorem1_sizes(cert, k, why) && read_theorem1_data(cert, k, job, threads, why) &&
         read_theorem1_weights(cert, k, threads, why) && read_theorem1_trace(cert, k, why) &&
         check_forward_pass(k, threads, why) && check_lemma5_sigma(k, threads, why) && check_rank_Z(k, threads, why);
}

bool check_theorem1_on(const Value& cert, std::string& why, unsigned threads) {
  DataDigestJob job;
  const bool ok = check_theorem1_body(cert, why, threads, job);
  if (job.running.valid()) {
    const std::string mine = job.running.get();
    std::string digest_why;
    if (!digest_matches(job.arrays, job.T, mine, job.expected, digest_why)) {
      why = digest_why;
      return false;
    }
  }
  return ok;
}

}  // namespace

bool check_theorem1(const Value& cert, std::string& why) { return check_theorem1_on(cert, why, checker_threads()); }

}  // namespace memcert_checker
