#pragma once
// A trained model's state_dict as stored in its file, read exactly and without executing anything
// (docs/FORMATS.md, "Model files"). Every float16, bfloat16, float32 and float64 value is kept as the
// dyadic rational it stores: widened exactly to a double (every such value is a double). Integer and
// bool buffers are kept as int64. NaN and infinities are read as stored (a NaN stays a NaN, its payload
// is not kept): whether they are acceptable is the business of whatever uses the weights.
//
// Every reader throws InputError (exit 2) with one line "<file>: <position>: <expectation>" on bad input,
// never echoing file contents beyond names of tensors, globals and opcodes; every size read from a file
// is checked against the file's size and against StateDictLimits before anything is allocated.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace memcert {

// The dtypes a state_dict tensor may have, as stored.
enum class DType { float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, boolean };

// "float32", "bfloat16", ..., "bool" (PyTorch's names without the "torch." prefix).
const char* dtype_name(DType t);
// Bytes per stored element.
std::size_t dtype_itemsize(DType t);
// Whether values are floating point (kept in Tensor::f64) rather than integral (Tensor::i64).
bool dtype_is_float(DType t);

// One tensor, materialized in C order (a non-contiguous view is copied element by element per stride).
struct Tensor {
  DType dtype = DType::float32;
  std::vector<std::size_t> shape;  // empty for a scalar (one element)
  std::vector<double> f64;         // the values when dtype_is_float(dtype), exactly
  std::vector<std::int64_t> i64;   // the values otherwise (bool as 0/1)
  std::size_t numel() const;       // product of the shape (1 for a scalar)
};

// key -> tensor in the file's order (the order of the pickled dict, of the safetensors header; .npz:
// sorted by key). Keys are unique.
class StateDict {
 public:
  // Appends; false (and nothing changed) when `key` is already present.
  bool insert(std::string key, Tensor t);
  // The tensor stored under `key`, or nullptr.
  const Tensor* find(const std::string& key) const;
  const std::vector<std::pair<std::string, Tensor>>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, Tensor>> entries_;
  std::map<std::string, std::size_t> index_;
};

// Bounds on what a model file may make the reader allocate.
struct StateDictLimits {
  // Total elements of all materialized tensors (each costs 8 bytes). A strided view may repeat storage
  // elements (stride 0), so this bounds the output, not the file.
  std::uint64_t max_elements = std::uint64_t{1} << 31;
  // Bytes of a .pt archive's pickle (data.pkl) and of a .safetensors JSON header.
  std::uint64_t max_header_bytes = 100'000'000;
  // When set, called once with every tensor's key, dtype and shape (values empty), in the file's order,
  // after the file's structure is read and before any tensor's values are read or allocated; it throws
  // (InputError) to refuse the file, so that a tensor the caller would refuse (an unexpected key, a shape
  // its architecture does not allow) costs nothing to refuse.
  std::function<void(const StateDict& headers)> screen;
};

// .pt / .pth / .ckpt / .bin written by torch.save (the zip format of PyTorch >= 1.6): `<prefix>/data.pkl`
// is run by a restricted unpickler that executes nothing. It knows a whitelist of opcodes (PROTO FRAME
// MARK STOP POP POP_MARK DUP, NONE NEWTRUE NEWFALSE, BININT BININT1 BININT2 LONG1 BINFLOAT, BINUNICODE
// SHORT_BINUNICODE BINUNICODE8 SHORT_BINSTRING BINBYTES SHORT_BINBYTES, EMPTY_TUPLE TUPLE TUPLE1-3,
// EMPTY_LIST LIST APPEND APPENDS, EMPTY_DICT DICT SETITEM SETITEMS, BINPUT LONG_BINPUT MEMOIZE BINGET
// LONG_BINGET, GLOBAL STACK_GLOBAL, REDUCE BUILD BINPERSID; a LONG1 integer beyond 64 bits is kept as an
// opaque value) and a whitelist of globals, each a value, never code: collections.OrderedDict (called
// with no arguments), torch._utils._rebuild_tensor_v2 / _rebuild_tensor / _rebuild_parameter, torch.Size,
// the storage types torch.{Half,BFloat16,Float,Double,Char,Short,Int,Long,Byte,Bool}Storage and the
// dtypes torch.float16 ... torch.bool (as values). Any other opcode or global is bad input naming it and
// its byte offset in data.pkl; BUILD may only set a dict's attributes (OrderedDict._metadata). Persistent
// ids must be ('storage', <storage type>, key, location, numel): member `<prefix>/data/<key>` holds
// exactly numel little-endian elements (an `<prefix>/byteorder` member, when present, must say
// "little"); a key names one storage type and size throughout. A tensor's offset, shape and strides
// (non-negative) are bounds-checked against its storage and the view is copied per stride; storages may
// be shared. The pickled object must be a dict of str (UTF-8) -> tensor, the state_dict (attributes such
// as `_metadata` are ignored), or a dict with a "state_dict" entry that is one (a PyTorch Lightning
// checkpoint: its other entries must consist of the whitelisted plain values and are ignored). Members
// must be stored (uncompressed), their CRC-32 right. The legacy (pre-1.6, non-zip) format and TorchScript
// archives are refused with a message saying so. data.pkl may hold at most limits.max_header_bytes bytes
// and 2^22 objects.
StateDict state_dict_read_pt(const std::string& path, const StateDictLimits& limits = {});
// The same for the bytes of a file in memory (`name` prefixes messages).
StateDict state_dict_parse_pt(const std::string& bytes, const std::string& name, const StateDictLimits& limits = {});

// .safetensors: an 8-byte little-endian header length N (at most limits.max_header_bytes), N bytes of a
// JSON object {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__"?: {str: str}}
// (trailing spaces allowed), then the data. dtype F16 BF16 F32 F64 I8 I16 I32 I64 U8 U16 U32 BOOL
// (little-endian, C order); end - begin = product(shape) x itemsize; the tensors' byte ranges are in
// bounds, do not overlap and cover the data exactly (as the safetensors library requires). Duplicate
// names, missing or unknown fields, other dtypes (U64, F8_*, ...) and bool bytes other than 0/1 are bad
// input.
StateDict state_dict_read_safetensors(const std::string& path, const StateDictLimits& limits = {});
StateDict state_dict_parse_safetensors(const std::string& bytes, const std::string& name,
                                       const StateDictLimits& limits = {});

// .npz with one array per key (numpy.savez(path, **state_dict)), read by the .npz reader (matrix_io.hpp,
// whose rules apply: NaN and infinities are bad input there). float32 members are float32, every other
// float dtype float64 (float16 widened), integer and bool members int64; keys in sorted order.
StateDict state_dict_read_npz(const std::string& path, const StateDictLimits& limits = {});

// By extension (case-insensitive): .pt .pth .ckpt .bin -> state_dict_read_pt, .safetensors,
// .npz; anything else is bad input naming the accepted extensions.
StateDict state_dict_read(const std::string& path, const StateDictLimits& limits = {});

}  // namespace memcert
