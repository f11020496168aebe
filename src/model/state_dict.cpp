// The state_dict container, dtype facts and the reader chosen by extension (state_dict.hpp).
#include "memcert/model/state_dict.hpp"

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

namespace memcert {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int8: return "int8";
    case DType::int16: return "int16";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::uint8: return "uint8";
    case DType::uint16: return "uint16";
    case DType::uint32: return "uint32";
    case DType::boolean: return "bool";
  }
  return "?";
}

std::size_t dtype_itemsize(DType t) {
  switch (t) {
    case DType::int8: case DType::uint8: case DType::boolean: return 1;
    case DType::float16: case DType::bfloat16: case DType::int16: case DType::uint16: return 2;
    case DType::float32: case DType::int32: case DType::uint32: return 4;
    case DType::float64: case DType::int64: return 8;
  }
  return 1;
}

bool dtype_is_float(DType t) {
  return t == DType::float16 || t == DType::bfloat16 || t == DType::float32 || t == DType::float64;
}

std::size_t Tensor::numel() const {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

bool StateDict::insert(std::string key, Tensor t) {
  if (find(key)) return false;
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(t));
  return true;
}

const Tensor* StateDict::find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

StateDict state_dict_read(const std::string& path, const StateDictLimits& limits) {
  const std::string ext = path_extension_lower(path);
  if (ext == ".pt" || ext == ".pth" || ext == ".ckpt" || ext == ".bin") return state_dict_read_pt(path, limits);
  if (ext == ".safetensors") return state_dict_read_safetensors(path, limits);
  if (ext == ".npz") return state_dict_read_npz(path, limits);
  throw input_error(path, "", "expected a model file .pt, .pth, .ckpt, .bin (torch.save), .safetensors or .npz");
}

}  // namespace memcert
