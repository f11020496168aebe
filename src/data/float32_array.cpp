#include "memcert/data/float32_array.hpp"

namespace memcert {

Float32Array::Float32Array(std::vector<float> owned) {
  auto v = std::make_shared<const std::vector<float>>(std::move(owned));
  // A float's bytes read as unsigned char: always allowed.
  data_ = reinterpret_cast<const Float32Le*>(v->data());
  size_ = v->size();
  owner_ = std::move(v);
}

Float32Array::Float32Array(std::shared_ptr<const void> owner, const unsigned char* bytes, std::size_t count)
    : owner_(std::move(owner)), data_(reinterpret_cast<const Float32Le*>(bytes)), size_(count), mapped_(true) {}

}  // namespace memcert
