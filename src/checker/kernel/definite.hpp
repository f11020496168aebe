#pragma once
// Positive definiteness of a symmetric rational matrix, decided rigorously and fast enough for Gram
// matrices of real data (k ~ 200 rows of float64 numbers).
#include "kernel/exact.hpp"

namespace memcert_checker {

// True iff `a` is symmetric positive definite. Two tiers, both rigorous:
//  1. LDL^T evaluated in MPFR interval arithmetic (outward rounding). Every interval encloses the
//     exact intermediate of the same recurrence, so if every pivot interval is > 0 the exact pivots
//     are > 0 (PD); if the first pivot not shown > 0 is shown <= 0, the exact one is too (not PD).
//  2. Otherwise (an interval straddles 0: ill-conditioned or singular), the exact fraction-free
//     LDL^T of exact.hpp decides.
bool positive_definite(const QMat& a);

// Tier 1 alone: +1 proved PD, -1 proved not PD, 0 undecided at this precision. Exposed for tests.
int positive_definite_interval(const QMat& a, long precision_bits);

}  // namespace memcert_checker
