// The state_dict readers on hand-built files: exact values of strided and shared views, and hostile
// input (forbidden globals and opcodes, views beyond their storage, huge declared sizes, deep nesting,
// truncations, every single-byte corruption) refused with an InputError and nothing else.
// tests/model/torch_files.py checks the same readers against files written by PyTorch itself.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"

using namespace memcert;

namespace {

std::uint32_t crc32_of(const std::string& s) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string le(std::uint64_t v, int n) {
  std::string s;
  for (int k = 0; k < n; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
  return s;
}

// A zip archive of stored members (what torch.save writes, without its alignment padding); zip64: sizes,
// offsets and counts in zip64 extra fields and end records (as for archives past 4 GiB).
std::string zip_of(const std::vector<std::pair<std::string, std::string>>& members, bool zip64 = false) {
  const std::uint64_t ff = 0xffffffff;
  std::string out, dir;
  for (const auto& [name, data] : members) {
    const std::uint32_t crc = crc32_of(data);
    const std::uint64_t size32 = zip64 ? ff : data.size();
    const std::string extra = zip64 ? le(1, 2) + le(24, 2) + le(data.size(), 8) + le(data.size(), 8) + le(out.size(), 8) : "";
    const std::string common = le(20, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(crc, 4) + le(size32, 4) +
                               le(size32, 4) + le(name.size(), 2);
    dir += le(0x02014b50, 4) + le(45, 2) + common + le(extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
           le(zip64 ? ff : out.size(), 4) + name + extra;
    out += le(0x04034b50, 4) + common + le(0, 2) + name + data;
  }
  const std::size_t dir_at = out.size();
  out += dir;
  if (zip64) {
    const std::size_t end64_at = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(members.size(), 8) +
           le(members.size(), 8) + le(dir.size(), 8) + le(dir_at, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(end64_at, 8) + le(1, 4);
    return out + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(0xffff, 2) + le(0xffff, 2) + le(ff, 4) + le(ff, 4) + le(0, 2);
  }
  out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(members.size(), 2) + le(members.size(), 2) + le(dir.size(), 4) +
         le(dir_at, 4) + le(0, 2);
  return out;
}

// Pickle pieces (protocol 2, as torch.save writes them).
std::string str(const std::string& s) { return std::string("X") + le(s.size(), 4) + s; }
std::string num(std::int64_t v) {
  if (v >= INT32_MIN && v <= INT32_MAX) return std::string("J") + le(static_cast<std::uint64_t>(v), 4);
  return std::string("\x8a\x08") + le(static_cast<std::uint64_t>(v), 8);  // LONG1
}
std::string tup(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::int64_t x : v) s += num(x);
  return s + "t";
}
const std::string kOrderedDict = "ccollections\nOrderedDict\n)R";
std::string storage(const std::string& type, const std::string& key, std::int64_t numel) {
  return std::string("(") + str("storage") + "ctorch\n" + type + "\n" + str(key) + str("cpu") + num(numel) + "tQ";
}
std::string tensor(const std::string& type, const std::string& key, std::int64_t numel, std::int64_t offset,
                   const std::vector<std::int64_t>& size, const std::vector<std::int64_t>& stride) {
  return std::string("ctorch._utils\n_rebuild_tensor_v2\n(") + storage(type, key, numel) + num(offset) + tup(size) + tup(stride) +
         "\x89" + kOrderedDict + "tR";
}
// {key: value, ...} as torch.save pickles a state_dict: OrderedDict() then SETITEMS.
std::string ordered_dict(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s = kOrderedDict + "(";
  for (const auto& [k, v] : items) s += str(k) + v;
  return s + "u";
}
std::string pickle(const std::string& body) { return std::string("\x80\x02", 2) + body + "."; }

std::string floats(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::string archive(const std::string& pkl, const std::vector<std::pair<std::string, std::string>>& storages,
                    bool zip64 = false) {
  std::vector<std::pair<std::string, std::string>> m = {{"m/data.pkl", pkl}};
  for (const auto& [k, v] : storages) m.emplace_back("m/data/" + k, v);
  m.emplace_back("m/version", "3\n");
  return zip_of(m, zip64);
}

// One storage "0" of six float32 1..6 with the views of a 2 x 3 matrix: itself, its transpose (shared
// storage, non-contiguous), a slice at an offset, a stride-0 expansion.
std::string views_archive(bool zip64 = false) {
  const std::string pkl = pickle(ordered_dict({
      {"a", tensor("FloatStorage", "0", 6, 0, {2, 3}, {3, 1})},
      {"t", tensor("FloatStorage", "0", 6, 0, {3, 2}, {1, 3})},
      {"s", tensor("FloatStorage", "0", 6, 4, {2}, {1})},
      {"e", tensor("FloatStorage", "0", 6, 2, {2, 3}, {0, 1})},
  }));
  return archive(pkl, {{"0", floats({1, 2, 3, 4, 5, 6})}}, zip64);
}

std::string single(const std::string& type, std::int64_t numel, std::int64_t offset, const std::vector<std::int64_t>& size,
                   const std::vector<std::int64_t>& stride, const std::string& data) {
  return archive(pickle(ordered_dict({{"w", tensor(type, "0", numel, offset, size, stride)}})), {{"0", data}});
}

std::string refusal(const std::string& bytes, const StateDictLimits& limits = {}) {
  try {
    (void)state_dict_parse_pt(bytes, "m.pt", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("pt: strided, shared and offset views are copied exactly per stride", "[model][pt]") {
  const StateDict sd = state_dict_parse_pt(views_archive(), "m.pt");
  REQUIRE(sd.size() == 4);
  CHECK(sd.entries()[0].first == "a");  // the pickled order
  CHECK(sd.entries()[3].first == "e");
  CHECK(sd.find("a")->f64 == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(sd.find("t")->shape == std::vector<std::size_t>{3, 2});
  CHECK(sd.find("t")->f64 == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(sd.find("s")->f64 == std::vector<double>{5, 6});
  CHECK(sd.find("e")->f64 == std::vector<double>{3, 4, 5, 3, 4, 5});
  CHECK(sd.find("a")->dtype == DType::float32);
  CHECK(sd.find("missing") == nullptr);
  // The same archive with zip64 records (sizes and offsets in extra fields) reads the same.
  const StateDict sd64 = state_dict_parse_pt(views_archive(true), "m.pt");
  REQUIRE(sd64.size() == 4);
  CHECK(sd64.find("t")->f64 == std::vector<double>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("pt: every storage type widens exactly", "[model][pt]") {
  // float16: 1, 2^-24 (smallest subnormal), 65504 (largest), -inf, NaN; bfloat16: 1, -2^-133.
  const StateDict h = state_dict_parse_pt(single("HalfStorage", 5, 0, {5}, {1}, le(0x3c00, 2) + le(1, 2) + le(0x7bff, 2) +
                                                                                   le(0xfc00, 2) + le(0x7e00, 2)),
                                          "m.pt");
  const auto& f = h.find("w")->f64;
  CHECK(h.find("w")->dtype == DType::float16);
  CHECK(f[0] == 1.0);
  CHECK(f[1] == std::ldexp(1.0, -24));
  CHECK(f[2] == 65504.0);
  CHECK((std::isinf(f[3]) && f[3] < 0));
  CHECK(std::isnan(f[4]));  // NaN is read as stored: rejecting it is the forward pass's business
  const StateDict b = state_dict_parse_pt(single("BFloat16Storage", 2, 0, {2}, {1}, le(0x3f80, 2) + le(0x8001, 2)), "m.pt");
  CHECK(b.find("w")->f64 == std::vector<double>{1.0, -std::ldexp(1.0, -133)});
  const StateDict l = state_dict_parse_pt(single("LongStorage", 2, 0, {2}, {1}, le(0x8000000000000000ull, 8) + le(7, 8)), "m.pt");
  CHECK(l.find("w")->i64 == std::vector<std::int64_t>{INT64_MIN, 7});
  const StateDict u = state_dict_parse_pt(single("ByteStorage", 2, 0, {2}, {1}, "\xff\x01"), "m.pt");
  CHECK(u.find("w")->i64 == std::vector<std::int64_t>{255, 1});
  const StateDict d = state_dict_parse_pt(single("DoubleStorage", 1, 0, {}, {}, le(0x3ff8000000000000ull, 8)), "m.pt");
  CHECK(d.find("w")->shape.empty());
  CHECK(d.find("w")->f64 == std::vector<double>{1.5});
}

TEST_CASE("pt: a Lightning checkpoint yields its state_dict", "[model][pt]") {
  const std::string pkl = pickle("}(" + str("epoch") + num(3) + str("lr") + "G" + std::string("\x3f\x50\x62\x4d\xd2\xf1\xa9\xfc", 8) +
                                 str("state_dict") + ordered_dict({{"w", tensor("FloatStorage", "0", 2, 0, {2}, {1})}}) +
                                 str("optimizer_states") + "](}" + str("step") + num(5) + "sN\x88\x89" + "e" + "u");
  const StateDict sd = state_dict_parse_pt(archive(pkl, {{"0", floats({0.5f, -2})}}), "m.ckpt");
  REQUIRE(sd.size() == 1);
  CHECK(sd.find("w")->f64 == std::vector<double>{0.5, -2});
}

TEST_CASE("pt: forbidden globals and opcodes are refused by name and offset, nothing run", "[model][pt][hostile]") {
  const std::string evil = pickle("cos\nsystem\n(" + str("touch pwned") + "tR");
  const std::string e = refusal(archive(evil, {}));
  CHECK(contains(e, "m/data.pkl byte 2:"));
  CHECK(contains(e, "'os.system'"));
  CHECK(contains(refusal(archive(pickle("cbuiltins\neval\n"), {})), "'builtins.eval'"));
  CHECK(contains(refusal(archive(pickle(str("os") + str("system") + "\x93"), {})), "'os.system'"));  // STACK_GLOBAL
  // INST, OBJ, NEWOBJ, PERSID, EXT1, LONG4: opcodes that build objects or reach code.
  for (const std::string& op : {std::string("i"), std::string("o"), std::string("\x81"), std::string("P"),
                                std::string("\x82"), std::string("\x8b")}) {
    const std::string r = refusal(archive(pickle(")" + op), {}));
    CHECK(contains(r, "byte 3: expected an opcode a state_dict pickle uses"));
  }
  CHECK(contains(refusal(archive(pickle("i"), {})), "(INST;"));
  // An allowed global called with the wrong meaning: a storage type is not callable, OrderedDict takes no items.
  CHECK(contains(refusal(archive(pickle("ctorch\nFloatStorage\n)R"), {})), "expected a callable global"));
  CHECK(contains(refusal(archive(pickle("ccollections\nOrderedDict\n(]t"
                                        "R"),
                                 {})),
                 "without arguments"));
  // BUILD is only a dict's attributes (OrderedDict._metadata).
  CHECK(contains(refusal(archive(pickle("]}b"), {})), "BUILD"));
}

TEST_CASE("pt: views beyond their storage and storage size mismatches are refused", "[model][pt][hostile]") {
  const std::string six = floats({1, 2, 3, 4, 5, 6});
  CHECK(contains(refusal(single("FloatStorage", 6, 1, {2, 3}, {3, 1}, six)), "reaching element 6"));
  CHECK(contains(refusal(single("FloatStorage", 6, 0, {3, 2}, {1, 4}, six)), "reaching element 6"));
  CHECK(contains(refusal(single("FloatStorage", 6, 6, {1}, {1}, six)), "inside its storage"));
  CHECK(contains(refusal(single("FloatStorage", 7, 0, {6}, {1}, six)), "storage of 7 float32 elements in 24 bytes"));
  CHECK(contains(refusal(single("DoubleStorage", 6, 0, {6}, {1}, six)), "elements in 24 bytes"));
  CHECK(contains(refusal(single("FloatStorage", 6, 0, {2, 3}, {3}, six)), "as many strides"));
  CHECK(contains(refusal(single("BoolStorage", 2, 0, {2}, {1}, std::string("\x01\x02", 2))), "bool bytes 0 or 1"));
  // Offsets and strides whose sum overflows 64 bits.
  CHECK(contains(refusal(single("FloatStorage", 6, 0, {5, 2}, {std::int64_t{1} << 62, std::int64_t{1} << 62}, six)),
                 "beyond 64 bits"));
  CHECK(contains(refusal(single("FloatStorage", 6, 0, {2}, {-1}, six)), "non-negative int"));
  // Missing storage member; same key with two types.
  CHECK(contains(refusal(archive(pickle(ordered_dict({{"w", tensor("FloatStorage", "9", 1, 0, {1}, {1})}})), {})),
                 "expected storage member 'm/data/9'"));
  const std::string two = pickle(ordered_dict({{"a", tensor("FloatStorage", "0", 6, 0, {1}, {1})},
                                               {"b", tensor("IntStorage", "0", 6, 0, {1}, {1})}}));
  CHECK(contains(refusal(archive(two, {{"0", six}})), "one type and size"));
}

TEST_CASE("pt: huge declared sizes are refused before anything is allocated", "[model][pt][hostile]") {
  // A string of 4 GiB, a memo reference never stored, a shape of 2^80 elements, a stride-0 view of
  // 2^40 elements (above the element bound), a data.pkl above the header bound.
  CHECK(contains(refusal(archive(std::string("\x80\x02X\xff\xff\xff\xff", 7), {})), "string of 4294967295 bytes"));
  CHECK(contains(refusal(archive(pickle("j\xff\xff\xff\x7f"), {})), "memo entry 2147483647"));
  const std::string one = floats({1});
  CHECK(contains(refusal(single("FloatStorage", 1, 0, {1 << 30, 1 << 30, 1 << 20}, {0, 0, 0}, one)), "fits 63 bits"));
  CHECK(contains(refusal(single("FloatStorage", 1, 0, {1 << 20, 1 << 20}, {0, 0}, one)), "tensor elements in all"));
  StateDictLimits small;
  small.max_elements = 10;
  CHECK(contains(refusal(views_archive(), small), "at most 10 tensor elements"));
  small = {};
  small.max_header_bytes = 16;
  CHECK(contains(refusal(views_archive(), small), "data.pkl of at most 16 bytes"));
}

TEST_CASE("pt: deep nesting and cycles cost no recursion", "[model][pt][hostile]") {
  // A million nested tuples, a million open MARKs, a list containing itself: plain InputErrors.
  CHECK(contains(refusal(archive(pickle("N" + std::string(1000000, '\x85')), {})), "got a tuple"));
  CHECK(contains(refusal(archive(std::string("\x80\x02", 2) + std::string(1000000, '(') + ".", {})), "got none"));
  CHECK(contains(refusal(archive(pickle(std::string("]q\x00h\x00" "a", 6)), {})), "got a list"));
  // A dict that maps to itself where a state_dict's tensors should be.
  CHECK(contains(refusal(archive(pickle(std::string("}q\x00", 3) + str("w") + std::string("h\x00s", 3)), {})), "tensor 'w': expected a tensor, got a dict"));
}

TEST_CASE("pt: a directory declaring more than 2^20 members is refused before it is read", "[model][pt][hostile]") {
  const std::uint64_t n = (std::uint64_t{1} << 20) + 1, dir_size = 46 * n;
  std::string z = le(0x04034b50, 4) + std::string(dir_size, '\0');
  const std::size_t end64_at = z.size();
  z += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(n, 8) + le(n, 8) + le(dir_size, 8) +
       le(4, 8);
  z += le(0x07064b50, 4) + le(0, 4) + le(end64_at, 8) + le(1, 4);
  z += le(0x06054b50, 4) + le(0, 4) + le(0xffff, 2) + le(0xffff, 2) + le(0xffffffff, 4) + le(0xffffffff, 4) + le(0, 2);
  CHECK(contains(refusal(z), "at most 1048576 members, got 1048577"));
}

TEST_CASE("pt: the archive's own structure", "[model][pt][hostile]") {
  CHECK(contains(refusal(""), "expected a torch.save archive"));
  CHECK(contains(refusal(std::string("\x80\x02\x8a\x0a", 4)), "legacy format"));
  CHECK(contains(refusal(zip_of({{"m/constants.pkl", ""}, {"m/data.pkl", pickle("}")}})), "TorchScript"));
  CHECK(contains(refusal(zip_of({{"data.pkl", pickle("}")}})), "under one directory"));
  CHECK(contains(refusal(zip_of({{"m/version", "3"}})), "expected a member 'm/data.pkl'"));
  CHECK(contains(refusal(zip_of({{"m/data.pkl", pickle("}")}, {"m/byteorder", "big"}})), "byteorder 'little'"));
  CHECK(state_dict_parse_pt(zip_of({{"m/data.pkl", pickle("}")}, {"m/byteorder", "little"}}), "m.pt").size() == 0);
  CHECK(contains(refusal(archive(pickle(ordered_dict({{"w", num(1)}})), {})), "tensor 'w': expected a tensor, got an int"));
  CHECK(contains(refusal(archive(pickle(std::string("}") + num(1) + num(2) + "s"), {})), "keys to be str"));
  CHECK(contains(refusal(archive(pickle(ordered_dict({{"\xff\xfe", tensor("FloatStorage", "0", 1, 0, {1}, {1})}})),
                                 {{"0", floats({1})}})),
                 "keys in UTF-8, got '\\xff\\xfe'"));
  CHECK(contains(refusal(archive(pickle("]"), {})), "got a list"));
  CHECK(contains(refusal(archive(pickle(std::string("}") + str("state_dict") + "]s"), {})), "entry 'state_dict': expected a dict"));
  CHECK(contains(refusal(archive(std::string("\x80\x02}", 3), {})), "ending with STOP"));
}

TEST_CASE("pt: every truncation and every single-byte change is read or refused, never anything else",
          "[model][pt][hostile]") {
  const std::string good = views_archive();
  for (std::size_t cut = 0; cut < good.size(); ++cut) CHECK(refusal(good.substr(0, cut)) != "(accepted)");
  const std::string good64 = views_archive(true);
  for (std::size_t cut = 0; cut < good64.size(); ++cut) CHECK(refusal(good64.substr(0, cut)) != "(accepted)");
  std::size_t accepted = 0;
  for (std::size_t at = 0; at < good.size(); ++at)
    for (unsigned char x : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ x);
      try {
        (void)state_dict_parse_pt(bad, "m.pt");
        ++accepted;  // e.g. a byte of a name: still a valid archive
      } catch (const InputError&) {
      }
    }
  CHECK(accepted < good.size());
}

// ---------------------------------------------------------------------------------------------------
namespace {

std::string safetensors(const std::string& header, const std::string& data) {
  return le(header.size(), 8) + header + data;
}

std::string st_refusal(const std::string& bytes) {
  try {
    (void)state_dict_parse_safetensors(bytes, "m.safetensors");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("safetensors: tensors in the header's order, exact", "[model][safetensors]") {
  const std::string h = R"({"__metadata__":{"format":"pt"},"z":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("a":{"dtype":"BF16","shape":[1,1],"data_offsets":[8,10]},"m":{"dtype":"BOOL","shape":[2],"data_offsets":[10,12]}}  )";
  const StateDict sd = state_dict_parse_safetensors(safetensors(h, floats({0.25f, -1}) + le(0xc040, 2) + std::string("\x01\x00", 2)), "m.safetensors");
  REQUIRE(sd.size() == 3);
  CHECK(sd.entries()[0].first == "z");
  CHECK(sd.find("z")->f64 == std::vector<double>{0.25, -1});
  CHECK(sd.find("a")->f64 == std::vector<double>{-3});
  CHECK(sd.find("a")->shape == std::vector<std::size_t>{1, 1});
  CHECK(sd.find("m")->i64 == std::vector<std::int64_t>{1, 0});
}

TEST_CASE("screen: every key, dtype and shape before any value, and its refusal costs nothing", "[model][hostile]") {
  // A .pt whose second tensor is a stride-0 view of 2^28 float32 over one stored element (2 GiB once
  // materialized) and a safetensors file of two tensors. The screen sees every header, in the file's order,
  // with no values, before anything is materialized: with an element bound of 2^20 the view would be
  // refused by the bound while being materialized, so the screen's own message proves it ran first.
  const std::string pt = archive(pickle(ordered_dict({{"w", tensor("FloatStorage", "0", 1, 0, {1}, {1})},
                                                     {"extra", tensor("FloatStorage", "0", 1, 0, {1 << 28}, {0})}})),
                                 {{"0", floats({1})}});
  const std::string st = safetensors(R"({"b":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
                                     R"("a":{"dtype":"I32","shape":[2,1],"data_offsets":[8,16]}})",
                                     std::string(8, '\0') + le(7, 4) + le(9, 4));
  StateDictLimits limits;
  limits.max_elements = std::uint64_t{1} << 20;
  CHECK(contains(refusal(pt, limits), "tensor elements in all"));  // without a screen: the bound, mid-read
  std::vector<std::string> seen;
  limits.screen = [&](const StateDict& headers) {
    for (const auto& [key, t] : headers.entries()) {
      CHECK(t.f64.empty());
      CHECK(t.i64.empty());
      std::string shape;
      for (std::size_t d : t.shape) shape += std::to_string(d) + ",";
      seen.push_back(key + ":" + dtype_name(t.dtype) + ":" + shape);
    }
    for (const auto& [key, t] : headers.entries())
      if (key == "extra") throw input_error("m.pt", key, "unexpected tensor");
  };
  CHECK(refusal(pt, limits) == "m.pt: extra: unexpected tensor");
  CHECK(seen == std::vector<std::string>{"w:float32:1,", "extra:float32:268435456,"});
  seen.clear();
  const StateDict sd = state_dict_parse_safetensors(st, "m.safetensors", limits);
  CHECK(seen == std::vector<std::string>{"b:float64:1,", "a:int32:2,1,"});
  CHECK(sd.find("a")->i64 == std::vector<std::int64_t>{7, 9});
  // A screen that accepts: the same tensors as without it.
  seen.clear();
  limits.max_elements = std::uint64_t{1} << 31;
  const StateDict v = state_dict_parse_pt(views_archive(), "m.pt", limits);
  CHECK(seen.size() == 4);
  CHECK(v.find("t")->f64 == state_dict_parse_pt(views_archive(), "m.pt").find("t")->f64);
}

TEST_CASE("safetensors: offsets, sizes and the header are validated", "[model][safetensors][hostile]") {
  const std::string d8 = floats({1, 2});
  auto one = [](const std::string& entry) { return std::string("{\"w\":") + entry + "}"; };
  CHECK(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), d8)) == "(accepted)");
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), d8)), "product(shape) x 4"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), d8 + "xx")), "2 bytes no tensor uses"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), d8)), "inside the 8 data bytes"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})"), d8)), "starting at byte 0"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})"), d8)), "begin <= end"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"U64","shape":[1],"data_offsets":[0,8]})"), d8)), "expected dtype"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"), d8)), "non-negative"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1})"), d8)), "exactly dtype"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"BOOL","shape":[8],"data_offsets":[0,8]})"), d8)), "bool bytes"));
  // Shape products past 64 bits, and a product that wraps to the declared size.
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F32","shape":[4294967296,4294967296,2],"data_offsets":[0,8]})"), d8)),
                 "product(shape)"));
  CHECK(contains(st_refusal(safetensors(one(R"({"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,8]})"), d8)),
                 "product(shape)"));
  // Two tensors sharing bytes; the same name twice.
  CHECK(contains(st_refusal(safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                        R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", d8)),
                 "no overlap"));
  CHECK(contains(st_refusal(safetensors(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                        R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", d8)),
                 "'a' twice"));
  CHECK(contains(st_refusal(le(0xffffffffffffull, 8) + "{}"), "header length of at most"));
  CHECK(contains(st_refusal("\x02\x00"), "8-byte header length"));
  CHECK(contains(st_refusal(safetensors("[1]", "")), "start with '{'"));
  CHECK(contains(st_refusal(safetensors("{\"a\":", "")), "JSON object"));
  CHECK(contains(st_refusal(safetensors(R"({"__metadata__":{"a":1}})", "")), "__metadata__"));
  CHECK(st_refusal(safetensors("{}", "")) == "(accepted)");
}

TEST_CASE("state_dict_read: chosen by extension", "[model]") {
  try {
    (void)state_dict_read("weights.onnx");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), ".safetensors"));
  }
  CHECK_THROWS_AS(state_dict_read("/nonexistent/m.pt"), InputError);
  CHECK_THROWS_AS(state_dict_read("/nonexistent/m.safetensors"), InputError);
  CHECK_THROWS_AS(state_dict_read("/nonexistent/m.npz"), InputError);
}
