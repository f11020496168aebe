// .npz state_dicts (state_dict.hpp, state_dict_read_npz): the .npz reader's typed arrays, one per key.
#include "memcert/data/matrix_io.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"
#include "../data/printable.hpp"
#include "tensor_decode.hpp"

namespace memcert {

StateDict state_dict_read_npz(const std::string& path, const StateDictLimits& limits) {
  if (limits.screen) {  // the members' .npy headers first: nothing is read past them before the screen
    StateDict headers;
    for (const NpzMemberHeader& h : npz_read_headers(path)) {
      Tensor t;
      t.dtype = h.kind != 'f' ? DType::int64 : h.itemsize == 2 ? DType::float16 : h.itemsize == 4 ? DType::float32 : DType::float64;
      t.shape = h.shape;
      headers.insert(h.key, std::move(t));
    }
    limits.screen(headers);
  }
  std::map<std::string, TypedArray> arrays = npz_read_typed(path, /*keep_float32=*/true);
  detail::ElementBudget budget(limits.max_elements);
  StateDict out;
  for (auto& [key, a] : arrays) {
    Tensor t;
    t.shape = a.shape;
    const std::string where = "array '" + detail::printable_excerpt(key, 80) + "'";
    budget.take(a.count(), path, where);
    if (a.storage == Storage::int64) {
      t.dtype = DType::int64;
      t.i64 = std::move(a.i64);
    } else if (a.storage == Storage::float64 && !a.f32.empty()) {
      t.dtype = DType::float32;
      t.f64.reserve(a.f32.size());
      for (std::size_t k = 0; k < a.f32.size(); ++k) t.f64.push_back(static_cast<double>(a.f32[k]));
    } else if (a.storage == Storage::float64) {
      t.dtype = DType::float64;  // float64, or float16 widened by the .npy reader
      t.f64 = std::move(a.f64);
    } else {
      throw input_error(path, where, "expected float or integer values representable as int64 or double");
    }
    out.insert(key, std::move(t));
  }
  return out;
}

}  // namespace memcert
