// .safetensors (state_dict.hpp, state_dict_read_safetensors): the header is parsed as JSON keeping the
// file's order, every entry's dtype, shape and byte range checked (sizes in 64-bit arithmetic with
// overflow checks) before any tensor is allocated, then each tensor's bytes are read and widened.
#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "../data/printable.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"
#include "model_bytes.hpp"
#include "tensor_decode.hpp"

namespace memcert {

namespace {

using detail::ModelBytes;
using ojson = nlohmann::ordered_json;

struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;
};

bool safetensors_dtype(const std::string& s, DType& t) {
  static const std::map<std::string, DType> types = {
      {"F16", DType::float16}, {"BF16", DType::bfloat16}, {"F32", DType::float32}, {"F64", DType::float64},
      {"I8", DType::int8},     {"I16", DType::int16},     {"I32", DType::int32},   {"I64", DType::int64},
      {"U8", DType::uint8},    {"U16", DType::uint16},    {"U32", DType::uint32},  {"BOOL", DType::boolean}};
  const auto it = types.find(s);
  if (it == types.end()) return false;
  t = it->second;
  return true;
}

std::uint64_t safetensors_u64(const ojson& v, const std::string& file, const std::string& where, const char* what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw input_error(file, where, std::string("expected ") + what + " (a non-negative integer)");
  return v.get<std::uint64_t>();
}

// The header's JSON, parsed with its duplicate top-level keys refused (the JSON library keeps the last).
ojson safetensors_parse_header(const std::string& text, const std::string& file) {
  std::set<std::string> names;
  std::string dup;
  const ojson::parser_callback_t cb = [&](int depth, ojson::parse_event_t ev, ojson& parsed) {
    if (ev == ojson::parse_event_t::key && depth == 1 && !names.insert(parsed.get<std::string>()).second && dup.empty())
      dup = parsed.get<std::string>();
    return true;
  };
  ojson h = ojson::parse(text, cb, /*allow_exceptions=*/false);
  if (h.is_discarded() || !h.is_object())
    throw input_error(file, "byte 8", "expected a JSON object as the safetensors header");
  if (!dup.empty())
    throw input_error(file, "header", "expected unique tensor names, got '" + detail::printable_excerpt(dup, 80) + "' twice");
  return h;
}

SafetensorsEntry safetensors_parse_entry(const std::string& name, const ojson& v, const std::string& file) {
  const std::string where = "header entry '" + detail::printable_excerpt(name, 80) + "'";
  if (!v.is_object() || v.size() != 3 || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
    throw input_error(file, where, "expected an object with exactly dtype, shape and data_offsets");
  SafetensorsEntry e;
  e.name = name;
  if (!v["dtype"].is_string() || !safetensors_dtype(v["dtype"].get<std::string>(), e.dtype))
    throw input_error(file, where, "expected dtype F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32 or BOOL");
  if (!v["shape"].is_array() || v["shape"].size() > 64)
    throw input_error(file, where, "expected shape as an array of at most 64 dimensions");
  for (const ojson& d : v["shape"]) e.shape.push_back(safetensors_u64(d, file, where, "a dimension"));
  const ojson& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2) throw input_error(file, where, "expected data_offsets [begin, end]");
  e.begin = safetensors_u64(off[0], file, where, "a begin offset");
  e.end = safetensors_u64(off[1], file, where, "an end offset");
  if (e.end < e.begin) throw input_error(file, where, "expected data_offsets with begin <= end");
  std::uint64_t n = 0;
  const std::uint64_t w = dtype_itemsize(e.dtype);
  if (!detail::shape_product(e.shape.data(), e.shape.size(), n) || n > (std::uint64_t{1} << 62) / w ||
      n * w != e.end - e.begin)
    throw input_error(file, where, "expected data_offsets spanning product(shape) x " + std::to_string(w) + " bytes, got " +
                                       std::to_string(e.end - e.begin));
  return e;
}

StateDict safetensors_read_bytes(const ModelBytes& b, const StateDictLimits& limits) {
  const std::uint64_t n = b.le(0, 8, "the 8-byte header length");
  if (n > limits.max_header_bytes || n > b.size() - 8)
    throw input_error(b.name(), "byte 0", "expected a header length of at most " +
                                              std::to_string(std::min<std::uint64_t>(limits.max_header_bytes, b.size() - 8)) +
                                              " bytes, got " + std::to_string(n));
  const std::string text = b.read_string(8, static_cast<std::size_t>(n), "the JSON header");
  if (text.empty() || text[0] != '{') throw input_error(b.name(), "byte 8", "expected the JSON header to start with '{'");
  const ojson h = safetensors_parse_header(text, b.name());
  const std::uint64_t data_at = 8 + n, data_size = b.size() - data_at;
  std::vector<SafetensorsEntry> entries;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) throw input_error(b.name(), "header", "expected __metadata__ as an object of strings");
      for (const auto& m : it.value())
        if (!m.is_string()) throw input_error(b.name(), "header", "expected __metadata__ as an object of strings");
      continue;
    }
    entries.push_back(safetensors_parse_entry(it.key(), it.value(), b.name()));
  }
  // The byte ranges, sorted, must tile [0, data_size) exactly: in bounds, no overlap, no hole.
  std::vector<const SafetensorsEntry*> sorted;
  for (const SafetensorsEntry& e : entries) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const SafetensorsEntry* x, const SafetensorsEntry* y) {
    return x->begin != y->begin ? x->begin < y->begin : x->end < y->end;
  });
  std::uint64_t covered = 0;
  for (const SafetensorsEntry* e : sorted) {
    const std::string where = "header entry '" + detail::printable_excerpt(e->name, 80) + "'";
    if (e->begin != covered)
      throw input_error(b.name(), where, "expected data_offsets starting at byte " + std::to_string(covered) +
                                             " of the data (no overlap, no gap), got " + std::to_string(e->begin));
    if (e->end > data_size)
      throw input_error(b.name(), where, "expected data_offsets inside the " + std::to_string(data_size) +
                                             " data bytes, got end " + std::to_string(e->end));
    covered = e->end;
  }
  if (covered != data_size)
    throw input_error(b.name(), "byte " + std::to_string(data_at + covered),
                      "expected the tensors to cover the data exactly, got " + std::to_string(data_size - covered) +
                          " bytes no tensor uses");
  if (limits.screen) {
    StateDict headers;
    for (const SafetensorsEntry& e : entries) {
      Tensor h;
      h.dtype = e.dtype;
      h.shape.assign(e.shape.begin(), e.shape.end());
      headers.insert(e.name, std::move(h));
    }
    limits.screen(headers);
  }
  detail::ElementBudget budget(limits.max_elements);
  StateDict out;
  for (const SafetensorsEntry& e : entries) {
    const std::string where = "tensor '" + detail::printable_excerpt(e.name, 80) + "'";
    Tensor t;
    t.dtype = e.dtype;
    t.shape.assign(e.shape.begin(), e.shape.end());
    budget.take(t.numel(), b.name(), where);
    detail::tensor_allocate(t);
    const std::string bytes = b.read_string(data_at + e.begin, static_cast<std::size_t>(e.end - e.begin), "tensor data");
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t bad = detail::tensor_decode_run(e.dtype, p, t.numel(), t);
    if (bad != t.numel())
      throw input_error(b.name(), where, "expected bool bytes 0 or 1, got another value at element " + std::to_string(bad));
    out.insert(e.name, std::move(t));
  }
  return out;
}

}  // namespace

StateDict state_dict_parse_safetensors(const std::string& bytes, const std::string& name, const StateDictLimits& limits) {
  return safetensors_read_bytes(ModelBytes(bytes, name), limits);
}

StateDict state_dict_read_safetensors(const std::string& path, const StateDictLimits& limits) {
  return safetensors_read_bytes(ModelBytes::open(path), limits);
}

}  // namespace memcert
