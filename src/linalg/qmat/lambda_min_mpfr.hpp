#pragma once
// The multiprecision estimate of lambda_min behind enclosure.cpp's certified mu (internal to memcert_core;
// the tests call it to compare it with an independent evaluation).
#include "memcert/linalg/matrix.hpp"

namespace memcert::detail {

// Precision of the estimate: boost::multiprecision::mpfr_float_backend<80> (80 decimal digits).
inline constexpr unsigned kLambdaMinMpfrDigits10 = 80;

// An estimate (not a bound) of the smallest eigenvalue of the symmetric matrix g (lower triangle read), for
// Gram matrices too ill-conditioned for double to even locate it: Eigen's LLT over
// boost::multiprecision::mpfr_float (267 bits, round to nearest), then 60 steps of inverse power iteration
// through the factor. 0 when the factorization breaks down (g not numerically positive definite).
Rational lambda_min_estimate_mpfr(const QMatrix& g);

}  // namespace memcert::detail
