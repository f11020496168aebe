#pragma once
// Exact arithmetic for the checker: rationals read from decimal strings, integer row scaling, exact
// determinants and the exact positive-definiteness test. GMP (gmpxx) only.
#include <gmpxx.h>

#include <cstddef>
#include <string>
#include <vector>

namespace memcert_checker {

using QRow = std::vector<mpq_class>;
using QMat = std::vector<QRow>;  // row-major, rectangular (callers check the shape)
using ZRow = std::vector<mpz_class>;
using ZMat = std::vector<ZRow>;

// Reads an exact rational: "-3", "7/12", "0.125", "1e-3", "+2.5E4". Decimals are read exactly (never
// through a double). Rejects empty strings, spaces, a zero or signed denominator, "inf"/"nan", and
// exponents beyond +-kMaxExponent (bounds the size of what a short string can make us build).
bool parse_rational(const std::string& s, mpq_class& out, std::string& error);
inline constexpr long kMaxExponent = 10000;

// Reads a non-negative decimal integer that fits in 64 bits ("18446744073709551557"); no sign, no
// leading '+', at most 20 digits.
bool parse_u64(const std::string& s, unsigned long long& out);

// Multiplies `row` by the lcm of its denominators (the smallest positive integer making it
// integral). Multiplying a row by a non-zero scalar changes neither the rank nor which row subsets
// are independent, so rank questions about a rational matrix become questions about integers.
// `factor`, when given, receives the lcm.
// a x, exactly (x has a's column count).
QRow qmat_mul_vec(const QMat& a, const QRow& x);

ZRow scale_row_to_integers(const QRow& row, mpz_class* factor = nullptr);
ZMat scale_rows_to_integers(const QMat& a);

// Exact determinant of a square integer matrix by fraction-free (Bareiss) elimination: every
// intermediate is itself a minor, so numbers stay bounded by the Hadamard bound.
mpz_class det_bareiss(ZMat a);

// True iff the square rational matrix `a` is symmetric and positive definite, decided exactly by the
// LDL^T factorization without pivoting: A is positive definite iff every pivot d_j > 0. Computed in
// fraction-free (Bareiss) form, where d_j = Delta_j / Delta_{j-1} is a ratio of consecutive leading
// principal minors, so this is also Sylvester's criterion.
bool positive_definite_ldlt(const QMat& a);

}  // namespace memcert_checker
