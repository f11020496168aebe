#pragma once
// The float64 sinusoidal positional encodings (Vaswani et al. 2017, section 3.5), recomputed by the
// checker instead of being read from a certificate: a claim about "the encodings" is only as good as the
// matrix it is checked on.
#include <cstddef>

#include "kernel/exact.hpp"

namespace memcert_checker {

// The n x d matrix P of the float64 encodings as exact dyadic rationals, defined as the IEEE 754
// binary64 evaluation with every operation correctly rounded to nearest:
//   k = RN(-RN(ln 10000) / d),  div_j = RN(exp(RN(2j * k))),  angle = RN(pos * div_j),
//   P[pos][2j] = RN(sin angle),  P[pos][2j+1] = RN(cos angle)  (the latter when 2j+1 < d).
// +, *, / are the platform's doubles (IEEE, no contraction); ln, exp, sin, cos are MPFR at 53 bits,
// which rounds correctly, so the result does not depend on the C library's last-bit accuracy.
QMat sinusoidal_encoding_float64(std::size_t n, std::size_t d);

}  // namespace memcert_checker
