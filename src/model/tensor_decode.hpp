#pragma once
// Stored elements -> exact values: little-endian bytes of a DType widened exactly (float16 and bfloat16
// through their bit patterns, float32 and float64 as they are; integers sign- or zero-extended to
// int64). And the element budget every reader charges before it allocates a tensor.
#include <cstddef>
#include <cstdint>
#include <string>

#include "memcert/model/state_dict.hpp"

namespace memcert::detail {

// The float16 / bfloat16 with bits `h` as the double it equals (NaN stays NaN, infinities infinite).
double float16_bits_to_double(std::uint16_t h);
double bfloat16_bits_to_double(std::uint16_t h);

// Element `i` of little-endian data `p` of dtype `t` stored into t's slot of `out` at index `k` (f64 or
// i64, already sized). False when the bytes are not a value of the dtype (a bool byte other than 0, 1).
bool tensor_decode_element(DType t, const unsigned char* p, std::size_t i, Tensor& out, std::size_t k);

// Elements 0..count-1 of `p` into out's slots 0..count-1 (one loop per dtype: the contiguous case).
// Returns count, or the index of the first element that is not a value of the dtype.
std::size_t tensor_decode_run(DType t, const unsigned char* p, std::size_t count, Tensor& out);

// Sizes out.f64 or out.i64 for out.numel() elements (the dtype and shape already set).
void tensor_allocate(Tensor& out);

// Elements still allowed by StateDictLimits::max_elements; take() throws InputError naming `where`
// when a tensor would exceed them.
class ElementBudget {
 public:
  explicit ElementBudget(std::uint64_t max) : left_(max), max_(max) {}
  void take(std::uint64_t n, const std::string& file, const std::string& where);

 private:
  std::uint64_t left_, max_;
};

// The product of `shape`, or false when it exceeds 2^63 (then `out` is unchanged).
bool shape_product(const std::uint64_t* dims, std::size_t rank, std::uint64_t& out);

}  // namespace memcert::detail
