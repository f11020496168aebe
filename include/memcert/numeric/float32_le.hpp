#pragma once
// A float32 value as stored in a .npy file: four little-endian bytes at ANY byte alignment. Why: the
// data of a stored .npz member start wherever the zip headers end (numpy.savez puts a float32 array at
// byte 190), so an array read in place from the file cannot be a `const float*` (a misaligned float
// access is undefined, and vectorisers assume alignment). Reads go through memcpy, which compilers turn
// into plain (unaligned) loads and vectorise.
#include <bit>
#include <cstring>

namespace memcert {

struct Float32Le {
  unsigned char bytes[4];
  float value() const {
    static_assert(std::endian::native == std::endian::little, "Float32Le reads little-endian bytes natively");
    float f;
    std::memcpy(&f, bytes, 4);
    return f;
  }
  operator float() const { return value(); }  // NOLINT: reads like the float it stores
};
static_assert(sizeof(Float32Le) == 4 && alignof(Float32Le) == 1);

}  // namespace memcert
