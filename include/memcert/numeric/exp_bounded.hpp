#pragma once
// exp on the non-positive doubles with a proved error bound (no libm): the softmax of every rigorous
// attention forward pass.

namespace memcert {

// exp(x) for x <= 0 with a rigorous bound (own range reduction + Taylor polynomial, no libm):
// |result - exp(x)| <= kExpRelErr * exp(x) + kExpAbsErr. See exp_bounded.cpp for the error analysis.
inline constexpr double kExpRelErr = 0x1p-44;
inline constexpr double kExpAbsErr = 0x1p-1020;
double exp_nonpositive_bounded(double x);

}  // namespace memcert
