#pragma once
// Positive definiteness of a symmetric rational matrix, decided rigorously and fast enough for Gram
// matrices of real data (k ~ 200 rows of float64 numbers).
#include <vector>

#include "kernel/exact.hpp"
#include "kernel/interval.hpp"

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

// Tier 1 on a symmetric matrix known only through enclosures of its entries: lower[i][j] (j <= i, so
// lower[i] has i + 1 entries) contains the exact a_ij = a_ji. The interval recurrence encloses the exact
// one of every symmetric matrix in the box, so +1 proves the exact matrix PD and -1 proves it is not;
// 0: undecided (the caller decides exactly).
int positive_definite_enclosed(const std::vector<std::vector<Interval>>& lower);

// sum of r^2 over every entry of R < mu, exactly (the sum enclosed first).
bool sum_of_squares_below(const QMat& R, const mpq_class& mu);

// C C^T - mu I positive definite (C of m rows of equal length), exactly: as positive_definite of the exact
// matrix, its Gram entries enclosed first so that the exact m^2 n products are formed only when the
// intervals cannot decide.
bool gram_minus_shift_definite(const QMat& C, const mpq_class& mu);

}  // namespace memcert_checker
