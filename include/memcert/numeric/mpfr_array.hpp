#pragma once
// n MPFR numbers at one precision, initialised to +0 and cleared when the array goes out of scope: the
// working storage of the engine's multiprecision loops (raw mpfr_t, so each operation names its rounding).
#include <mpfr.h>

#include <cstddef>
#include <vector>

namespace memcert {

struct MpfrArray {
  std::vector<mpfr_t> v;
  MpfrArray(std::size_t n, mpfr_prec_t bits) : v(n) {
    for (auto& x : v) mpfr_init2(x, bits), mpfr_set_zero(x, 1);
  }
  ~MpfrArray() {
    for (auto& x : v) mpfr_clear(x);
  }
  MpfrArray(const MpfrArray&) = delete;
  MpfrArray& operator=(const MpfrArray&) = delete;
  mpfr_ptr operator[](std::size_t i) { return v[i]; }
  mpfr_srcptr operator[](std::size_t i) const { return v[i]; }
};

}  // namespace memcert
