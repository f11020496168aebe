// torch.save archives (state_dict.hpp, state_dict_read_pt): the zip directory, data.pkl through the
// restricted unpickler, then each state_dict tensor copied out of its storage member per stride.
#include <limits>

#include "../data/printable.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"
#include "model_bytes.hpp"
#include "pickle_vm.hpp"
#include "tensor_decode.hpp"
#include "zip_stored.hpp"

namespace memcert {

namespace {

using detail::ModelBytes;
using detail::PickleResult;
using detail::PyKind;
using detail::PyObject;
using detail::PyTensor;
using detail::ZipMember;
using detail::ZipStored;

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), as a
// state_dict key must be to be printed (JSON output, messages).
bool pt_key_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || s.size() - i < len) return false;
    std::uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
    for (std::size_t k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) return false;
      cp = (cp << 6) | (d & 0x3fu);
    }
    static const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

// Whether a view's elements are consecutive in C order (strides of size-1 dimensions do not matter).
bool pt_c_contiguous(const PyTensor& t) {
  std::uint64_t expect = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 1 && t.stride[d] != expect) return false;
    expect *= t.shape[d];
  }
  return true;
}

class PtReader {
 public:
  PtReader(const ModelBytes& b, const StateDictLimits& limits)
      : b_(b), limits_(limits), budget_(limits.max_elements), zip_(open_zip(b)) {}

  StateDict read() {
    const std::string& first = zip_.members().front().name;
    const std::size_t slash = first.find('/');
    if (slash == std::string::npos) fail("byte 0", "expected torch.save's members under one directory (<name>/data.pkl)");
    prefix_ = first.substr(0, slash + 1);
    if (zip_.find(prefix_ + "constants.pkl"))
      fail("", "expected a state_dict saved by torch.save, got a TorchScript archive (torch.jit.save): save "
               "model.state_dict() instead");
    check_byteorder();
    const ZipMember* pkl = member(prefix_ + "data.pkl", "a member '" + printable(prefix_ + "data.pkl") + "'");
    if (pkl->size > limits_.max_header_bytes)
      fail("byte " + std::to_string(pkl->data_at), "expected data.pkl of at most " + std::to_string(limits_.max_header_bytes) +
                                                       " bytes, got " + std::to_string(pkl->size));
    zip_.verify(*pkl);
    std::string bytes(static_cast<std::size_t>(pkl->size), '\0');
    zip_.read(*pkl, 0, bytes.size(), bytes.data());
    r_ = detail::pickle_run(bytes, b_.name(), pkl->name);
    return state_dict(select(r_.root));
  }

 private:
  static ZipStored open_zip(const ModelBytes& b) {
    if (b.size() >= 2 && b.le(0, 1, "a first byte") == 0x80)
      throw input_error(b.name(), "byte 0", "expected a torch.save zip archive, got the legacy format (PyTorch < 1.6 or "
                                            "_use_new_zipfile_serialization=False), which is not read: re-save it with torch.save");
    if (b.size() < 4 || b.le(0, 4, "a zip signature") != 0x04034b50)
      throw input_error(b.name(), "byte 0", "expected a torch.save archive (a zip file starting with PK)");
    ZipStored z(b, "a torch.save archive");
    if (z.members().empty()) throw input_error(b.name(), "", "expected a torch.save archive, got an empty zip");
    return z;
  }
  static std::string printable(const std::string& s) { return detail::printable_excerpt(s, 80); }
  [[noreturn]] void fail(const std::string& where, const std::string& what) const { throw input_error(b_.name(), where, what); }
  const ZipMember* member(const std::string& name, const std::string& what) const {
    const ZipMember* m = zip_.find(name);
    if (!m) fail("", "expected " + what + ", got none");
    return m;
  }
  void check_byteorder() const {
    const ZipMember* m = zip_.find(prefix_ + "byteorder");
    if (!m) return;  // PyTorch before 2.1 writes none: little-endian
    zip_.verify(*m);
    std::string s(static_cast<std::size_t>(std::min<std::uint64_t>(m->size, 16)), '\0');
    zip_.read(*m, 0, s.size(), s.data());
    if (m->size > 16 || s != "little")
      fail("byte " + std::to_string(m->data_at), "expected byteorder 'little', got another byte order");
  }
  const PyObject& obj(std::uint32_t i) const { return r_.arena[i]; }

  // The state_dict inside the pickled object: the object itself, or its "state_dict" entry (a Lightning
  // checkpoint).
  const PyObject& select(std::uint32_t root) const {
    const PyObject& d = obj(root);
    if (d.kind != PyKind::dict)
      fail("", std::string("expected a state_dict (a dict of tensors) as the pickled object, got ") + py_kind_name(d.kind));
    const PyObject* sd = nullptr;
    for (std::size_t k = 0; k + 1 < d.items.size(); k += 2)
      if (obj(d.items[k]).kind == PyKind::string && obj(d.items[k]).s == "state_dict") sd = &obj(d.items[k + 1]);
    if (!sd) return d;
    if (sd->kind != PyKind::dict)
      fail("entry 'state_dict'", std::string("expected a dict of tensors, got ") + py_kind_name(sd->kind));
    return *sd;
  }

  // Every key, dtype and shape from the pickle first (limits_.screen sees them before any storage member
  // is read), then each tensor materialized.
  StateDict state_dict(const PyObject& d) {
    StateDict headers;
    std::vector<const PyTensor*> views;
    for (std::size_t k = 0; k + 1 < d.items.size(); k += 2) {
      const PyObject& key = obj(d.items[k]);
      if (key.kind != PyKind::string) fail("", std::string("expected state_dict keys to be str, got ") + py_kind_name(key.kind));
      if (!pt_key_utf8(key.s)) fail("", "expected state_dict keys in UTF-8, got '" + printable(key.s) + "'");
      const std::string where = "tensor '" + printable(key.s) + "'";
      const PyObject& v = obj(d.items[k + 1]);
      if (v.kind != PyKind::tensor) fail(where, std::string("expected a tensor, got ") + py_kind_name(v.kind));
      const PyTensor& t = r_.tensors[static_cast<std::size_t>(v.i)];
      Tensor h;
      h.dtype = obj(t.storage).dtype;
      h.shape.assign(t.shape.begin(), t.shape.end());
      if (!headers.insert(key.s, std::move(h))) fail(where, "expected unique state_dict keys, got this one twice");
      views.push_back(&t);
    }
    if (limits_.screen) limits_.screen(headers);
    StateDict out;
    for (std::size_t i = 0; i < views.size(); ++i) {
      const std::string& key = headers.entries()[i].first;
      out.insert(key, materialize(*views[i], "tensor '" + printable(key) + "'"));
    }
    return out;
  }

  Tensor materialize(const PyTensor& t, const std::string& where) {
    const PyObject& s = obj(t.storage);
    const std::size_t w = dtype_itemsize(s.dtype);
    const ZipMember* m = member(prefix_ + "data/" + s.s, "storage member '" + printable(prefix_ + "data/" + s.s) + "' of " + where);
    const auto numel_storage = static_cast<std::uint64_t>(s.i);
    if (m->size % w != 0 || m->size / w != numel_storage)
      fail(where, "expected its storage of " + std::to_string(numel_storage) + " " + dtype_name(s.dtype) + " elements in " +
                      std::to_string(m->size) + " bytes");
    std::uint64_t n = 0;
    if (!detail::shape_product(t.shape.data(), t.shape.size(), n)) fail(where, "expected a shape whose product fits 63 bits");
    budget_.take(n, b_.name(), where);
    Tensor out;
    out.dtype = s.dtype;
    out.shape.assign(t.shape.begin(), t.shape.end());
    detail::tensor_allocate(out);
    if (n == 0) return out;
    // The last element the view reaches: offset + sum (size - 1) x stride, inside the storage.
    std::uint64_t last = t.offset;
    for (std::size_t k = 0; k < t.shape.size(); ++k) {
      const std::uint64_t span = t.shape[k] - 1;
      if (t.stride[k] != 0 && span > (std::numeric_limits<std::uint64_t>::max() - last) / t.stride[k])
        fail(where, "expected a view inside its storage, got offset and strides beyond 64 bits");
      last += span * t.stride[k];
    }
    if (last >= numel_storage)
      fail(where, "expected a view inside its storage of " + std::to_string(numel_storage) + " elements, got one reaching element " +
                      std::to_string(last));
    zip_.verify(*m);
    std::string bytes(static_cast<std::size_t>((last - t.offset + 1) * w), '\0');
    zip_.read(*m, t.offset * w, bytes.size(), bytes.data());
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    if (pt_c_contiguous(t)) {  // the common case: one pass, no index arithmetic
      const std::size_t bad = detail::tensor_decode_run(s.dtype, p, static_cast<std::size_t>(n), out);
      if (bad != n) fail(where, "expected bool bytes 0 or 1, got another value at element " + std::to_string(bad));
      return out;
    }
    // C-order walk of the view: idx counts per dimension, pos the element (relative to the offset).
    const std::size_t rank = t.shape.size();
    std::vector<std::uint64_t> idx(rank, 0);
    std::uint64_t pos = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (!detail::tensor_decode_element(s.dtype, p, static_cast<std::size_t>(pos), out, k))
        fail(where, "expected bool bytes 0 or 1, got another value at element " + std::to_string(k));
      for (std::size_t d = rank; d-- > 0;) {
        pos += t.stride[d];
        if (++idx[d] < t.shape[d]) break;
        pos -= t.stride[d] * t.shape[d];
        idx[d] = 0;
      }
    }
    return out;
  }

  const ModelBytes& b_;
  const StateDictLimits& limits_;
  detail::ElementBudget budget_;
  ZipStored zip_;
  std::string prefix_;
  PickleResult r_;
};

}  // namespace

StateDict state_dict_parse_pt(const std::string& bytes, const std::string& name, const StateDictLimits& limits) {
  const ModelBytes b(bytes, name);
  return PtReader(b, limits).read();
}

StateDict state_dict_read_pt(const std::string& path, const StateDictLimits& limits) {
  const ModelBytes b = ModelBytes::open(path);
  return PtReader(b, limits).read();
}

}  // namespace memcert
