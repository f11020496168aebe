// .npy format (numpy's NEP 1, versions 1.0 / 2.0 / 3.0): parsing into typed exact storage (int64 / float64,
// rationals only for uint64 values above 2^63 - 1) and float64 writing.
//   bytes 0-5 "\x93NUMPY", 6 major, 7 minor, then the header length (uint16 LE for v1, uint32 LE for v2/v3),
//   then a Python dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } padded with
//   spaces and '\n', then the raw data.
// Floats are taken EXACTLY as the dyadic rationals they store; NaN and infinities are bad input.
#include <sys/stat.h>
#include <zlib.h>

#include <fstream>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/threads.hpp"
#include "memcert/util/parallel.hpp"
#include "printable.hpp"

namespace memcert {

namespace {

const char kMagic[] = "\x93NUMPY";
// float32 arrays from this size on are read in place when the source can map them (NpyByteMapper).
constexpr std::size_t kMapMinBytes = std::size_t(1) << 24;
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kMaxHeaderLen = std::size_t(1) << 20;

struct NpyHeader {
  char kind = 0;         // 'f' float, 'i' signed integer, 'u' unsigned integer, 'b' bool
  std::size_t size = 0;  // bytes per element
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

// A tiny reader for the Python literal numpy writes as the header: a dict with string keys whose values
// are strings, True/False, or tuples of non-negative integers.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name, std::size_t base)
      : s_(text), name_(name), base_(base) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') { ++i_; break; }
      std::size_t key_at = i_;
      std::string key = string_literal();
      expect(':');
      skip_ws();
      if (key == "descr") {
        std::size_t at = i_;
        descr(string_literal(), at, h);
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        have_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        have_shape = true;
      } else {
        fail(key_at, "expected header key 'descr', 'fortran_order' or 'shape', got '" + detail::printable_excerpt(key) + "'");
      }
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      if (peek() == '}') { ++i_; break; }
      fail(i_, "expected ',' or '}' in the header dictionary, got " + got());
    }
    if (!have_descr || !have_order || !have_shape)
      fail(i_, std::string("expected header keys 'descr', 'fortran_order' and 'shape', missing '") +
                   (!have_descr ? "descr" : !have_order ? "fortran_order" : "shape") + "'");
    return h;
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw input_error(name_, "byte " + std::to_string(base_ + at), what);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  std::string got() const {
    if (i_ >= s_.size()) return "the end of the header";
    std::string out(1, '\'');
    out += detail::printable_excerpt(std::string_view(s_).substr(i_, 1));
    out += '\'';
    return out;
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(i_, std::string("expected '") + c + "' in the header, got " + got());
    ++i_;
  }
  std::string string_literal() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') fail(i_, "expected a quoted string in the header, got " + got());
    std::size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) ++i_;
    if (i_ >= s_.size()) fail(start, "expected a closing quote in the header, got the end of the header");
    return s_.substr(start, i_++ - start);
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) { i_ += 4; return true; }
    if (s_.compare(i_, 5, "False") == 0) { i_ += 5; return false; }
    fail(i_, "expected True or False for 'fortran_order', got " + got());
  }
  std::vector<std::size_t> tuple() {
    std::vector<std::size_t> out;
    expect('(');
    for (;;) {
      skip_ws();
      if (peek() == ')') { ++i_; return out; }
      std::size_t start = i_;
      std::uint64_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (v > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) fail(start, "expected a dimension below 2^64");
        v = v * 10 + static_cast<std::uint64_t>(s_[i_++] - '0');
      }
      if (i_ == start) fail(i_, "expected a non-negative integer dimension in 'shape', got " + got());
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      out.push_back(static_cast<std::size_t>(v));
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      if (peek() == ')') { ++i_; return out; }
      fail(i_, "expected ',' or ')' in 'shape', got " + got());
    }
  }
  void descr(const std::string& d, std::size_t at, NpyHeader& h) const {
    const std::string supported =
        "a numeric dtype ('<f8', '<f4', '<f2', '<i8', '<i4', '<i2', '|i1', '<u8', '<u4', '<u2', '|u1', '|b1' "
        "or big-endian '>...')";
    if (d.size() < 3) fail(at, "expected " + supported + ", got '" + detail::printable_excerpt(d) + "'");
    char order = d[0];
    if (order == '<' || order == '|') h.big_endian = false;
    else if (order == '>') h.big_endian = true;
    else if (order == '=') h.big_endian = (std::endian::native == std::endian::big);
    else fail(at, "expected " + supported + ", got '" + detail::printable_excerpt(d) + "'");
    h.kind = d[1];
    std::string sz = d.substr(2);
    h.size = (sz == "1") ? 1 : (sz == "2") ? 2 : (sz == "4") ? 4 : (sz == "8") ? 8 : 0;
    bool ok = (h.kind == 'f' && (h.size == 2 || h.size == 4 || h.size == 8)) ||
              ((h.kind == 'i' || h.kind == 'u') && h.size != 0) || (h.kind == 'b' && h.size == 1);
    if (!ok) fail(at, "expected " + supported + ", got '" + detail::printable_excerpt(d) + "'");
  }

  const std::string& s_;
  const std::string& name_;
  std::size_t base_;
  std::size_t i_ = 0;
};

std::uint64_t load_uint(const unsigned char* p, std::size_t size, bool big_endian) {
  std::uint64_t v = 0;
  for (std::size_t k = 0; k < size; ++k) {
    std::size_t byte = big_endian ? k : size - 1 - k;
    v = (v << 8) | p[byte];
  }
  return v;
}

// IEEE binary16 -> double, exactly (every half is a dyadic rational a double holds). Infinities and NaN
// come out as such for the caller to reject.
double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0x1f) v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0) v = std::ldexp(static_cast<double>(man), -24);            // subnormal: man * 2^-24
  else v = std::ldexp(static_cast<double>(man + 1024), exp - 25);             // (1024 + man) * 2^(exp-25)
  return sign ? -v : v;
}

// The exact value of one float element as a double (float16/float32 widen exactly). `shape`/`flat` name
// the element in the error for NaN / infinity.
double float_element(std::uint64_t bits, std::size_t size, const std::string& name,
                     const std::vector<std::size_t>& shape, std::size_t flat) {
  double x = size == 8   ? std::bit_cast<double>(bits)
             : size == 4 ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)))
                         : half_to_double(static_cast<std::uint16_t>(bits));
  if (!std::isfinite(x))
    throw input_error(name, "element " + ndindex_to_string(shape, flat),
                      std::string("expected a finite number, got ") + (std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf"));
  return x;
}

// Integer element as int64 (sign-extended from h.size bytes; bool is 0/1). False for a uint64 value
// above 2^63 - 1 (the caller then stores the array as rationals).
bool integer_element(std::uint64_t bits, const NpyHeader& h, std::int64_t& out) {
  if (h.kind == 'b') { out = bits != 0 ? 1 : 0; return true; }
  if (h.kind == 'u') {
    if (bits > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(bits);
    return true;
  }
  unsigned shift = static_cast<unsigned>(64 - 8 * h.size);
  out = static_cast<std::int64_t>(bits << shift) >> shift;
  return true;
}

Rational u64_to_rational(std::uint64_t bits) {
  Integer z;
  mpz_import(z.get_mpz_t(), 1, 1, sizeof bits, 0, 0, &bits);
  return Rational(z);
}

}  // namespace

std::string ndindex_to_string(const std::vector<std::size_t>& shape, std::size_t flat) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    std::size_t s = shape[k] == 0 ? 1 : shape[k];
    idx[k] = flat % s;
    flat /= s;
  }
  std::string out;
  for (std::size_t i : idx) {
    out += '[';
    out += std::to_string(i);
    out += ']';
  }
  return out.empty() ? "[]" : out;
}

namespace {

// Decodes `count` elements at `base` in any layout the header allows (byte order, Fortran order, widths)
// into out (storage and shape set by the caller's header), the general and slower path.
void npy_decode_general(const unsigned char* base, const NpyHeader& h, std::size_t count, const std::string& name,
                        TypedArray& out) {
  // Element with C-order flat index c is stored at position f (Fortran order: first index fastest).
  std::vector<std::size_t> idx(h.shape.size(), 0);
  for (std::size_t c = 0; c < count; ++c) {
    std::size_t f = c;
    if (h.fortran_order) {
      f = 0;
      std::size_t stride = 1;
      for (std::size_t k = 0; k < idx.size(); ++k) { f += idx[k] * stride; stride *= h.shape[k]; }
      for (std::size_t k = idx.size(); k-- > 0;) {  // advance the C-order multi-index
        if (++idx[k] < h.shape[k]) break;
        idx[k] = 0;
      }
    }
    std::uint64_t bits = load_uint(base + f * h.size, h.size, h.big_endian);
    if (out.storage == Storage::float64) {
      out.f64[c] = float_element(bits, h.size, name, out.shape, c);
    } else if (out.storage == Storage::int64) {
      if (!integer_element(bits, h, out.i64[c])) {  // uint64 beyond int64: the whole array as rationals
        out.q.resize(count);
        for (std::size_t k = 0; k < c; ++k) out.q[k] = Rational(static_cast<long>(out.i64[k]));
        out.i64.clear();
        out.i64.shrink_to_fit();
        out.storage = Storage::rational;
        out.q[c] = u64_to_rational(bits);
      }
    } else {
      out.q[c] = u64_to_rational(bits);
    }
  }
}

// The first non-finite value of the n floats at v (float or double) as npy's error, if any.
template <class F>
void check_finite(const F* v, std::size_t n, const std::string& name, const std::vector<std::size_t>& shape) {
  for (std::size_t c = 0; c < n; ++c)
    if (!std::isfinite(static_cast<double>(v[c]))) {
      if constexpr (sizeof(F) == 8) float_element(std::bit_cast<std::uint64_t>(v[c]), 8, name, shape, c);
      else float_element(std::bit_cast<std::uint32_t>(v[c]), 4, name, shape, c);
    }
}

// The CRC-32 (continuing `crc`) of the `n` bytes at p, and the index of the first non-finite of the n / 4
// float32 values there (n / 4 when all are finite), in parallel chunks joined by crc32_combine: one pass
// over an array read in place.
std::pair<uLong, std::size_t> crc_and_first_nonfinite_f32(uLong crc, const unsigned char* p, std::size_t n) {
  constexpr std::size_t kChunk = std::size_t(1) << 24;  // bytes, a multiple of 4
  const std::size_t chunks = (n + kChunk - 1) / kChunk, count = n / 4;
  std::vector<uLong> crcs(chunks);
  std::vector<std::size_t> first(chunks, count);
  parallel_for(chunks, fast_threads(), [&](std::size_t c) {
    const std::size_t at = c * kChunk, len = std::min(kChunk, n - at);
    crcs[c] = crc32(0L, p + at, static_cast<uInt>(len));  // len <= kChunk
    const Float32Le* v = reinterpret_cast<const Float32Le*>(p + at);
    for (std::size_t k = 0; k < len / 4; ++k)
      if (!std::isfinite(v[k].value())) {
        first[c] = at / 4 + k;
        break;
      }
  });
  std::size_t bad = count;
  for (std::size_t c = 0; c < chunks; ++c) {
    crc = crc32_combine(crc, crcs[c], static_cast<z_off_t>(std::min(kChunk, n - c * kChunk)));
    bad = std::min(bad, first[c]);
  }
  return {crc, bad};
}

}  // namespace

std::uint32_t crc32_of(std::uint32_t crc, const unsigned char* p, std::size_t n, std::size_t max_piece,
                       const std::function<std::uint32_t(const unsigned char*, std::size_t)>& piece) {
  if (max_piece == 0) throw std::invalid_argument("crc32_of: max_piece must be positive");
  max_piece = std::min<std::size_t>(max_piece, std::numeric_limits<uInt>::max());
  // From 64 MiB on, pieces of at most 16 MiB run in parallel.
  constexpr std::size_t kParallelMin = std::size_t(1) << 26, kParallelPiece = std::size_t(1) << 24;
  const bool parallel = n >= kParallelMin;
  const std::size_t len = parallel ? std::min(max_piece, kParallelPiece) : max_piece;
  const std::size_t pieces = (n + len - 1) / len;
  std::vector<uLong> crcs(pieces);
  auto one = [&](std::size_t k) {
    const unsigned char* at = p + k * len;
    const std::size_t m = std::min(len, n - k * len);
    crcs[k] = piece ? piece(at, m) : crc32(0L, at, static_cast<uInt>(m));
  };
  if (parallel) parallel_for(pieces, fast_threads(), one);
  else for (std::size_t k = 0; k < pieces; ++k) one(k);
  uLong out = crc;
  for (std::size_t k = 0; k < pieces; ++k)
    out = crc32_combine(out, crcs[k], static_cast<z_off_t>(std::min(len, n - k * len)));
  return static_cast<std::uint32_t>(out);
}

TypedArray npy_read_typed(std::size_t size, const NpyByteReader& read, const std::string& name, bool keep_float32,
                          const std::function<void(std::uint32_t)>& crc_check, const NpyByteMapper& map,
                          bool crc_before_header_errors, const NpyHeaderCheck& header_check) {
  // CRC-32 of every byte read so far, in order (the reads below go front to back).
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t crc_done = 0;
  auto read_crc = [&](std::size_t at, std::size_t n, char* dst) {
    read(at, n, dst);
    if (crc_check && at == crc_done) {
      crc = crc32_of(static_cast<std::uint32_t>(crc), reinterpret_cast<const unsigned char*>(dst), n);
      crc_done += n;
    }
  };
  // The CRC of the member (reading what was not read yet through a bounded buffer), handed to crc_check:
  // a corrupt member reports its CRC before any error its corrupt bytes would cause.
  auto finish_crc = [&] {
    if (!crc_check) return;
    std::vector<char> buf(std::min<std::size_t>(size - crc_done, std::size_t(1) << 24));
    while (crc_done < size) read_crc(crc_done, std::min(buf.size(), size - crc_done), buf.data());
    crc_check(static_cast<std::uint32_t>(crc));
  };
  std::string head;
  NpyHeader h;
  std::size_t count = 1, data_at = 0;
  try {
    if (size == 0) throw input_error(name, "byte 0", "expected a .npy file, got an empty file");
    head.resize(std::min<std::size_t>(size, 12));
    read_crc(0, head.size(), head.data());
    if (head.size() < kMagicLen || head.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
      throw input_error(name, "byte 0", "expected the .npy magic string \\x93NUMPY, got something else");
    if (size < 10) throw input_error(name, "byte " + std::to_string(size), "truncated header");
    auto u = [&](std::size_t i) { return static_cast<unsigned char>(head[i]); };
    unsigned major = u(6);
    std::size_t header_len = 0, header_at = 0;
    if (major == 1) {
      header_len = u(8) | (std::size_t(u(9)) << 8);
      header_at = 10;
    } else if (major == 2 || major == 3) {
      if (size < 12) throw input_error(name, "byte " + std::to_string(size), "truncated header");
      header_len = u(8) | (std::size_t(u(9)) << 8) | (std::size_t(u(10)) << 16) | (std::size_t(u(11)) << 24);
      header_at = 12;
    } else {
      throw input_error(name, "byte 6", "expected .npy format version 1, 2 or 3, got " + std::to_string(major));
    }
    if (size - header_at < header_len)
      throw input_error(name, "byte " + std::to_string(header_at),
                        "truncated header (expected " + std::to_string(header_len) + " bytes, got " +
                            std::to_string(size - header_at) + ")");
    // numpy writes headers of a few hundred bytes (and its reader refuses more than 10000 by default): a
    // larger declared length is not allocated.
    if (header_len > kMaxHeaderLen)
      throw input_error(name, "byte 8", "expected a header of at most " + std::to_string(kMaxHeaderLen) + " bytes, got " +
                                            std::to_string(header_len));
    const std::size_t had = head.size();
    head.resize(header_at + header_len);
    if (head.size() > had) read_crc(had, head.size() - had, head.data() + had);
    std::string header_text = head.substr(header_at, header_len);
    h = HeaderParser(header_text, name, header_at).parse();
    for (std::size_t s : h.shape) {
      if (s != 0 && count > std::numeric_limits<std::size_t>::max() / s / 8)
        throw input_error(name, "byte " + std::to_string(header_at), "expected a shape of addressable size");
      count *= s;
    }
    data_at = header_at + header_len;
    std::size_t need = count * h.size, have = size - data_at;
    if (have < need)
      throw input_error(name, "byte " + std::to_string(data_at),
                        "truncated data (expected " + std::to_string(need) + " bytes, got " + std::to_string(have) + ")");
    if (have > need)
      throw input_error(name, "byte " + std::to_string(data_at + need),
                        "expected the end of the file after " + std::to_string(need) + " data bytes, got " +
                            std::to_string(have - need) + " more bytes");
    if (header_check) header_check(h.shape, h.kind, h.size);
  } catch (const InputError&) {
    if (crc_before_header_errors) finish_crc();
    throw;
  }

  TypedArray out;
  out.shape = h.shape;
  out.storage = h.kind == 'f' ? Storage::float64 : Storage::int64;
  if (h.kind == 'f') out.stored_float_bytes = static_cast<unsigned>(h.size);
  // The common layouts (little-endian C order, 8-byte int64 / float64, and float32 kept as float32) are
  // read straight into the array's storage; floats are checked finite after the CRC.
  const bool native = std::endian::native == std::endian::little && !h.big_endian && !h.fortran_order;
  if (native && h.size == 8 && (h.kind == 'i' || h.kind == 'f')) {
    char* dst = nullptr;
    if (h.kind == 'i') out.i64.resize(count), dst = reinterpret_cast<char*>(out.i64.data());
    else out.f64.resize(count), dst = reinterpret_cast<char*>(out.f64.data());
    read_crc(data_at, count * 8, dst);
    finish_crc();
    if (h.kind == 'f') check_finite(out.f64.data(), count, name, out.shape);
    return out;
  }
  if (native && h.kind == 'f' && h.size == 4 && keep_float32) {
    // In place when the source can map its bytes (a large stored member of a regular file), else read.
    std::shared_ptr<const unsigned char> in_place;
    if (map && count * 4 >= kMapMinBytes && (!crc_check || crc_done == data_at)) in_place = map(data_at, count * 4);
    if (!in_place) {
      std::vector<float> v(count);
      read_crc(data_at, count * 4, reinterpret_cast<char*>(v.data()));
      finish_crc();
      out.f32 = std::move(v);
      check_finite(out.f32.data(), count, name, out.shape);
      return out;
    }
    const auto [whole, bad] = crc_and_first_nonfinite_f32(crc, in_place.get(), count * 4);
    crc = whole, crc_done = data_at + count * 4;
    finish_crc();
    out.f32 = Float32Array(in_place, in_place.get(), count);
    if (bad < count) float_element(std::bit_cast<std::uint32_t>(out.f32.data()[bad]), 4, name, out.shape, bad);  // throws
    return out;
  }
  std::string data(count * h.size, '\0');
  read_crc(data_at, data.size(), data.data());
  finish_crc();
  if (out.storage == Storage::float64) out.f64.resize(count);
  else out.i64.resize(count);
  npy_decode_general(reinterpret_cast<const unsigned char*>(data.data()), h, count, name, out);
  return out;
}

TypedArray npy_parse_typed(const std::string& bytes, const std::string& name) {
  return npy_read_typed(bytes.size(), [&](std::size_t at, std::size_t n, char* dst) { std::memcpy(dst, bytes.data() + at, n); },
                        name, false, {});
}

TypedArray npy_read_typed(const std::string& path) {
  struct stat st {};
  constexpr std::uint64_t kDirectMin = std::uint64_t{1} << 20;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) < kDirectMin)
    return npy_parse_typed(file_read_all(path), path);
  // A large regular file (of any size: file_read_all's 2 GiB limit does not apply) is read piecewise: the
  // header first, checked against the file's size before anything is allocated, then the values straight
  // into the typed vector (no second copy of the file in memory; fresh pages are costly). A short read
  // (the file changed) is bad input.
  std::ifstream in(path, std::ios::binary);
  if (!in) return npy_parse_typed(file_read_all(path), path);
  auto read = [&](std::size_t at, std::size_t n, char* dst) {
    in.clear();
    in.seekg(static_cast<std::streamoff>(at));
    in.read(dst, static_cast<std::streamsize>(n));
    if (static_cast<std::size_t>(in.gcount()) != n)
      throw input_error(path, "byte " + std::to_string(at), "expected a file that does not change while it is read");
  };
  return npy_read_typed(static_cast<std::size_t>(st.st_size), read, path, /*keep_float32=*/false, {});
}

std::size_t TypedArray::count() const {
  return storage == Storage::int64 ? i64.size() : storage == Storage::float64 ? f64.size() + f32.size() : q.size();
}

NdArray ndarray_from_typed(const TypedArray& a) {
  NdArray out;
  out.shape = a.shape;
  out.integral = a.storage != Storage::float64;
  if (a.storage == Storage::rational) {
    out.data = a.q;
    return out;
  }
  out.data.resize(a.count());
  for (std::size_t k = 0; k < out.data.size(); ++k)
    out.data[k] = a.storage == Storage::int64 ? Rational(static_cast<long>(a.i64[k]))
                  : a.f32.empty()             ? rational_from_double(a.f64[k])
                                              : rational_from_double(a.f32[k]);
  return out;
}

NdArray npy_parse(const std::string& bytes, const std::string& name) {
  return ndarray_from_typed(npy_parse_typed(bytes, name));
}

NdArray npy_read(const std::string& path) { return npy_parse(file_read_all(path), path); }

std::string npy_bytes_int(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& data, int bytes) {
  std::string out = npy_bytes_float64(shape, std::vector<double>(data.size(), 0.0));
  const std::size_t head = out.size() - 8 * data.size();
  std::string header = out.substr(0, head);
  const std::string descr = std::string("'<i") + char('0' + bytes) + "'";
  header.replace(header.find("'<f8'"), 5, descr);
  header.resize(head);
  std::string body;
  body.reserve(data.size() * std::size_t(bytes));
  for (std::int64_t v : data)
    for (int b = 0; b < bytes; ++b) body += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * b)) & 0xff);
  return header + body;
}

std::string npy_header_float64(const std::vector<std::size_t>& shape) {
  std::string shape_text = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    shape_text += std::to_string(shape[k]);
    if (shape.size() == 1) shape_text += ",";  // numpy writes "(3,)" for 1-d and "(3, 4)" otherwise
    else if (k + 1 < shape.size()) shape_text += ", ";
  }
  shape_text += ")";
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape_text + ", }";
  std::size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  return out;
}

std::string npy_bytes_float64(const std::vector<std::size_t>& shape, const std::vector<double>& data) {
  std::size_t count = 1;
  for (std::size_t s : shape) count *= s;
  if (count != data.size()) throw std::invalid_argument("npy_bytes_float64: shape does not match data size");
  std::string out = npy_header_float64(shape);
  for (double x : data) {
    std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    for (int b = 0; b < 8; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

}  // namespace memcert
