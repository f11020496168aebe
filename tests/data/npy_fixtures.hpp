#pragma once
// Test-only encoders, written independently of src/data: .npy bytes for any dtype/version/order, and
// zip archives (stored, or deflated through zlib's deflate) for .npz. Plus a scratch directory and a
// helper capturing InputError messages.
#include <zlib.h>

#include "catch.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "memcert/util/error.hpp"

namespace fixtures {

// Raw little- or big-endian bytes of a trivially copyable value.
template <class T>
std::string raw(T x, bool big_endian = false) {
  std::string b(sizeof(T), '\0');
  std::memcpy(b.data(), &x, sizeof(T));
  if (big_endian) std::reverse(b.begin(), b.end());
  return b;
}
template <class T>
std::string raw_all(const std::vector<T>& xs, bool big_endian = false) {
  std::string b;
  for (const T& x : xs) b += raw(x, big_endian);
  return b;
}

inline std::string shape_literal(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) s += std::to_string(shape[k]) + (shape.size() == 1 ? "," : k + 1 < shape.size() ? ", " : "");
  return s + ")";
}

// A .npy file: magic, version, header length, the dict header padded to 64 bytes, `data` verbatim.
inline std::string npy(const std::string& descr, const std::vector<std::size_t>& shape, const std::string& data,
                       bool fortran = false, int version = 1) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape_literal(shape) + ", }";
  std::size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  if (version == 1) out += raw(static_cast<std::uint16_t>(dict.size()));
  else out += raw(static_cast<std::uint32_t>(dict.size()));
  return out + dict + data;
}

inline std::string deflate_raw(const std::string& in) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, in.size()) + 16, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A zip archive of (name, content) members; `deflated` picks method 8 instead of 0.
inline std::string zip(const std::vector<std::pair<std::string, std::string>>& members, bool deflated = false) {
  std::string body, dir;
  for (const auto& [name, content] : members) {
    std::string packed = deflated ? deflate_raw(content) : content;
    auto crc = static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(content.data()),
                                                static_cast<uInt>(content.size())));
    auto offset = static_cast<std::uint32_t>(body.size());
    std::uint16_t method = deflated ? 8 : 0;
    body += raw<std::uint32_t>(0x04034b50) + raw<std::uint16_t>(20) + raw<std::uint16_t>(0) + raw(method) +
            raw<std::uint16_t>(0) + raw<std::uint16_t>(0x21) + raw(crc) + raw<std::uint32_t>(packed.size()) +
            raw<std::uint32_t>(content.size()) + raw<std::uint16_t>(name.size()) + raw<std::uint16_t>(0) + name + packed;
    dir += raw<std::uint32_t>(0x02014b50) + raw<std::uint16_t>(20) + raw<std::uint16_t>(20) + raw<std::uint16_t>(0) +
           raw(method) + raw<std::uint16_t>(0) + raw<std::uint16_t>(0x21) + raw(crc) +
           raw<std::uint32_t>(packed.size()) + raw<std::uint32_t>(content.size()) + raw<std::uint16_t>(name.size()) +
           raw<std::uint16_t>(0) + raw<std::uint16_t>(0) + raw<std::uint16_t>(0) + raw<std::uint16_t>(0) +
           raw<std::uint32_t>(0) + raw(offset) + name;
  }
  std::string end = raw<std::uint32_t>(0x06054b50) + raw<std::uint16_t>(0) + raw<std::uint16_t>(0) +
                    raw<std::uint16_t>(members.size()) + raw<std::uint16_t>(members.size()) +
                    raw<std::uint32_t>(dir.size()) + raw<std::uint32_t>(body.size()) + raw<std::uint16_t>(0);
  return body + dir + end;
}

// A fresh scratch directory per test process.
// The process's peak resident memory in kB (VmHWM), or -1: the bounded-memory readers' tests compare it
// before and after a hostile input.
inline long peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

inline std::filesystem::path scratch() {
  static std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("memcert_test_data_" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_file(const std::string& name, const std::string& bytes) {
  std::string path = (scratch() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The InputError message `f` throws, with the scratch directory prefix removed from paths; fails the
// test when `f` throws nothing or something else.
inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const memcert::InputError& e) {
    std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);  // one line
    std::string prefix = scratch().string() + "/";
    for (std::size_t at; (at = m.find(prefix)) != std::string::npos;) m.erase(at, prefix.size());
    return m;
  }
  FAIL("expected memcert::InputError");
  return "";
}

}  // namespace fixtures
