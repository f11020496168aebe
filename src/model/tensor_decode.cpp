// Exact widening of stored elements (tensor_decode.hpp).
#include "tensor_decode.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "memcert/util/error.hpp"

namespace memcert::detail {

double float16_bits_to_double(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0x1f) v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0) v = std::ldexp(static_cast<double>(frac), -24);  // subnormal: frac x 2^-24
  else v = std::ldexp(static_cast<double>(frac | 0x400), exp - 25);    // (1024 + frac) x 2^(exp - 15 - 10)
  return sign ? -v : v;
}

double bfloat16_bits_to_double(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;  // bfloat16 is float32's upper half
  float f;
  std::memcpy(&f, &bits, 4);
  return static_cast<double>(f);
}

namespace {

std::uint64_t tensor_le(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t k = n; k-- > 0;) v = (v << 8) | p[k];
  return v;
}

}  // namespace

bool tensor_decode_element(DType t, const unsigned char* p, std::size_t i, Tensor& out, std::size_t k) {
  const std::size_t w = dtype_itemsize(t);
  const std::uint64_t u = tensor_le(p + i * w, w);
  switch (t) {
    case DType::float16: out.f64[k] = float16_bits_to_double(static_cast<std::uint16_t>(u)); return true;
    case DType::bfloat16: out.f64[k] = bfloat16_bits_to_double(static_cast<std::uint16_t>(u)); return true;
    case DType::float32: {
      const auto b = static_cast<std::uint32_t>(u);
      float f;
      std::memcpy(&f, &b, 4);
      out.f64[k] = static_cast<double>(f);
      return true;
    }
    case DType::float64: std::memcpy(&out.f64[k], &u, 8); return true;
    case DType::int8: out.i64[k] = static_cast<std::int8_t>(u); return true;
    case DType::int16: out.i64[k] = static_cast<std::int16_t>(u); return true;
    case DType::int32: out.i64[k] = static_cast<std::int32_t>(u); return true;
    case DType::int64: out.i64[k] = static_cast<std::int64_t>(u); return true;
    case DType::uint8: out.i64[k] = static_cast<std::int64_t>(u); return true;
    case DType::uint16: out.i64[k] = static_cast<std::int64_t>(u); return true;
    case DType::uint32: out.i64[k] = static_cast<std::int64_t>(u); return true;
    case DType::boolean: out.i64[k] = static_cast<std::int64_t>(u); return u <= 1;
  }
  return false;
}

namespace {

template <class Decode>
void tensor_decode_loop(const unsigned char* p, std::size_t w, std::size_t count, Decode decode) {
  for (std::size_t k = 0; k < count; ++k) decode(k, tensor_le(p + k * w, w));
}

}  // namespace

std::size_t tensor_decode_run(DType t, const unsigned char* p, std::size_t count, Tensor& out) {
  const std::size_t w = dtype_itemsize(t);
  double* f = out.f64.data();
  std::int64_t* i = out.i64.data();
  switch (t) {
    case DType::float16:
      tensor_decode_loop(p, w, count, [&](std::size_t k, std::uint64_t u) { f[k] = float16_bits_to_double(static_cast<std::uint16_t>(u)); });
      return count;
    case DType::bfloat16:
      tensor_decode_loop(p, w, count, [&](std::size_t k, std::uint64_t u) { f[k] = bfloat16_bits_to_double(static_cast<std::uint16_t>(u)); });
      return count;
    case DType::float32:
      tensor_decode_loop(p, w, count, [&](std::size_t k, std::uint64_t u) {
        const auto b = static_cast<std::uint32_t>(u);
        float x;
        std::memcpy(&x, &b, 4);
        f[k] = static_cast<double>(x);
      });
      return count;
    case DType::float64:
      tensor_decode_loop(p, w, count, [&](std::size_t k, std::uint64_t u) { std::memcpy(&f[k], &u, 8); });
      return count;
    case DType::boolean:
      for (std::size_t k = 0; k < count; ++k) {
        if (p[k] > 1) return k;
        i[k] = p[k];
      }
      return count;
    default:
      for (std::size_t k = 0; k < count; ++k) (void)tensor_decode_element(t, p, k, out, k);
      return count;
  }
}

void tensor_allocate(Tensor& out) {
  if (dtype_is_float(out.dtype)) out.f64.assign(out.numel(), 0.0);
  else out.i64.assign(out.numel(), 0);
}

void ElementBudget::take(std::uint64_t n, const std::string& file, const std::string& where) {
  if (n > left_)
    throw input_error(file, where,
                      "expected at most " + std::to_string(max_) + " tensor elements in all (the reader's memory bound), got " +
                          std::to_string(max_ - left_) + " + " + std::to_string(n));
  left_ -= n;
}

bool shape_product(const std::uint64_t* dims, std::size_t rank, std::uint64_t& out) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 63;
  std::uint64_t p = 1;
  bool zero = false;
  for (std::size_t k = 0; k < rank; ++k) zero = zero || dims[k] == 0;
  if (zero) {
    out = 0;
    return true;
  }
  for (std::size_t k = 0; k < rank; ++k) {
    if (dims[k] > kMax / p) return false;
    p *= dims[k];
  }
  out = p;
  return true;
}

}  // namespace memcert::detail
