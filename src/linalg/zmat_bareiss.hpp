#pragma once
// Fraction-free (Bareiss) elimination on integer matrices: every intermediate entry is a minor of the
// input, so sizes stay polynomial and every division is exact.
#include <optional>

#include "memcert/linalg/matrix.hpp"

namespace memcert::detail {

// Determinant of a square integer matrix (row pivoting).
Integer zmat_det_bareiss(ZMatrix a);

// Solves A X = B for square non-singular integer A; nullopt when A is singular. Exact.
std::optional<QMatrix> zmat_solve_bareiss(ZMatrix a, ZMatrix b);

// Leading principal minors' signs: true iff all Bareiss pivots without pivoting are > 0 (then the
// k-th pivot IS the k-th leading principal minor). `minors` receives them (up to the first <= 0).
bool zmat_leading_minors_positive(ZMatrix a, std::vector<Integer>* minors);

}  // namespace memcert::detail
