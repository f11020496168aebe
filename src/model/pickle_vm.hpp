#pragma once
// A restricted unpickler for torch.save's data.pkl: it builds plain values (None, bool, int, float, str,
// bytes, tuple, list, dict), references to the archive's storages and tensor views of them, and nothing
// else. Only whitelisted opcodes and globals are known (state_dict.hpp lists them); a global is a value
// (a name), never imported or called: REDUCE applied to one of the few known rebuild functions builds
// the corresponding value here, any other call is bad input. Objects live in an arena and refer to each
// other by index, so shared and even cyclic structures (memo) cost nothing and nothing recurses.
#include <cstdint>
#include <string>
#include <vector>

#include "memcert/model/state_dict.hpp"

namespace memcert::detail {

enum class PyKind : std::uint8_t { none, boolean, integer, big_integer, floating, string, bytes, tuple, list, dict,
                                   global, storage, tensor };

struct PyObject {
  PyKind kind = PyKind::none;
  bool ordered = false;        // dict: made by collections.OrderedDict()
  DType dtype = DType::uint8;  // storage: its element type
  std::int64_t i = 0;          // boolean, integer; storage: numel; tensor: index into PickleResult::tensors
  double f = 0;                // floating
  std::string s;               // string, bytes; global: "module.name"; storage: its key
  std::vector<std::uint32_t> items;  // tuple, list: elements; dict: key, value, key, value, ...
};

// A view of a storage, as _rebuild_tensor_v2(storage, offset, size, stride, ...) describes it.
struct PyTensor {
  std::uint32_t storage = 0;  // arena index of a PyKind::storage
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> shape, stride;
};

struct PickleResult {
  std::vector<PyObject> arena;
  std::vector<PyTensor> tensors;
  std::uint32_t root = 0;  // what STOP returned
};

// Runs `pkl`, the archive member `member` of `file`: InputError "<file>: <member> byte N: ..." on any
// opcode, global or structure outside the whitelist.
PickleResult pickle_run(const std::string& pkl, const std::string& file, const std::string& member);

// A short name of a kind for messages ("a tuple", "a str", ...).
const char* py_kind_name(PyKind k);

}  // namespace memcert::detail
