#pragma once
// Sinusoidal positional encodings (Vaswani et al. 2017), float64, computed as models compute them:
//   div_j = exp(2j * (-ln(10000) / d)),  PE[pos, 2j] = sin(pos * div_j),  PE[pos, 2j+1] = cos(pos * div_j)
// (the PyTorch / annotated-Transformer formulation, evaluated in IEEE double with the C library's exp,
// sin and cos). Exact rank questions are then asked about the float64 values EXACTLY (dyadic rationals).
#include <cstddef>
#include <vector>

#include "memcert/linalg/matrix.hpp"

namespace memcert::proofs {

// Row-major n x d values (d >= 1; an odd d drops the last cosine column).
std::vector<double> sinusoidal_encoding(std::size_t n, std::size_t d);

// The same values as an exact rational matrix.
QMatrix sinusoidal_encoding_exact(std::size_t n, std::size_t d);

}  // namespace memcert::proofs
