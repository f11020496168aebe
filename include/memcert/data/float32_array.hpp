#pragma once
// float32 values kept as stored: owned (a vector) or read in place from a file mapped read-only (no
// fresh memory to fill: on a 1.2 GB array, touching fresh pages costs seconds). Read-only and shared:
// copies share the storage.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "memcert/numeric/float32_le.hpp"

namespace memcert {

class Float32Array {
 public:
  Float32Array() = default;
  Float32Array(std::vector<float> owned);  // NOLINT: a vector is the owned form
  // `count` values at `bytes` (any alignment), kept alive by `owner` (e.g. the file mapping).
  Float32Array(std::shared_ptr<const void> owner, const unsigned char* bytes, std::size_t count);
  Float32Array(const Float32Array&) = default;
  Float32Array& operator=(const Float32Array&) = default;
  // A moved-from array is empty (as a moved-from vector), never a view of storage it no longer owns.
  Float32Array(Float32Array&& o) noexcept { *this = std::move(o); }
  Float32Array& operator=(Float32Array&& o) noexcept {
    owner_ = std::move(o.owner_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, false);
    return *this;
  }
  template <class It>
  void assign(It first, It last) {
    *this = Float32Array(std::vector<float>(first, last));
  }

  const Float32Le* data() const { return data_; }
  const Float32Le* begin() const { return data_; }
  const Float32Le* end() const { return data_ + size_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  float operator[](std::size_t i) const { return data_[i].value(); }
  // Whether the values are read in place from a mapped file (else owned).
  bool mapped() const { return mapped_; }

 private:
  std::shared_ptr<const void> owner_;
  const Float32Le* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace memcert
