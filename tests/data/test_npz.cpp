// .npz reading (stored and deflated members, zip archives built by the test's own encoder) and the
// float64 .npz writer.
#include <cstring>
#include <limits>

#include "memcert/data/matrix_io.hpp"
#include "npy_fixtures.hpp"

using namespace memcert;
using fixtures::input_error_of;
using fixtures::npy;
using fixtures::raw_all;
using fixtures::write_file;
using fixtures::zip;

namespace {
std::vector<std::pair<std::string, std::string>> two_members() {
  return {{"a.npy", npy("<f8", {2, 2}, raw_all(std::vector<double>{0.1, 2, 3, 4}))},
          {"b.npy", npy(">i4", {3}, raw_all(std::vector<std::int32_t>{-1, 0, 1}, true))}};
}
}  // namespace

TEST_CASE("npz with stored members", "[npz]") {
  auto arrays = npz_read(write_file("stored.npz", zip(two_members())));
  REQUIRE(arrays.size() == 2);
  CHECK(arrays.at("a").shape == std::vector<std::size_t>{2, 2});
  CHECK(arrays.at("a").data[0] == rational_from_double(0.1));
  CHECK(arrays.at("b").data[0] == -1);
  CHECK(arrays.at("b").integral);
}

TEST_CASE("npz with deflated members (zlib raw deflate)", "[npz]") {
  std::vector<double> big(500);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i % 7) / 8.0;
  auto members = two_members();
  members.push_back({"big.npy", npy("<f8", {50, 10}, raw_all(big))});
  std::string bytes = zip(members, true);
  CHECK(bytes.size() < 4000);  // really compressed
  auto arrays = npz_read(write_file("deflated.npz", bytes));
  REQUIRE(arrays.size() == 3);
  CHECK(arrays.at("a").data[0] == rational_from_double(0.1));
  for (std::size_t i = 0; i < big.size(); ++i) REQUIRE(arrays.at("big").data[i] == Rational(static_cast<long>(i % 7)) / 8);
}

TEST_CASE("npz_write_float64 round-trips exactly and matches the stored-zip layout", "[npz]") {
  std::string path = (fixtures::scratch() / "w.npz").string();
  npz_write_float64(path, {{"contexts", {{2, 1, 3}, {0.1, 0.2, 0.3, -1, -2, -3}}}, {"queries", {{2, 3}, {1, 2, 3, 4, 5, 6}}}});
  auto arrays = npz_read(path);
  REQUIRE(arrays.size() == 2);
  CHECK(arrays.at("contexts").shape == std::vector<std::size_t>{2, 1, 3});
  CHECK(arrays.at("contexts").data[1] == rational_from_double(0.2));
  CHECK(arrays.at("queries").data[5] == 6);
}

TEST_CASE("npz bad input", "[npz][errors]") {
  std::string good = zip(two_members());

  std::string m = input_error_of([&] { npz_read(write_file("empty.npz", "")); });
  CHECK(m.find("empty.npz: byte 0:") == 0);
  CHECK(m.find("empty file") != std::string::npos);

  m = input_error_of([&] { npz_read(write_file("notzip.npz", std::string(100, 'x'))); });
  CHECK(m.find("notzip.npz: byte 0: expected a zip archive") == 0);

  // Cut inside the first member's data: the central directory is gone.
  m = input_error_of([&] { npz_read(write_file("cut.npz", good.substr(0, 150))); });
  CHECK(m.find("cut.npz: byte ") == 0);

  // Corrupt one data byte: the CRC check names the member.
  std::string corrupt = good;
  corrupt[good.find("\x93NUMPY") + 140] ^= 0x55;
  m = input_error_of([&] { npz_read(write_file("crc.npz", corrupt)); });
  CHECK(m.find("crc.npz: byte ") == 0);
  CHECK(m.find("member 'a.npy': expected CRC-32") != std::string::npos);

  // A member whose .npy is truncated (consistent zip, bad content): the message names the member.
  std::vector<std::pair<std::string, std::string>> bad{{"x.npy", npy("<f8", {4}, std::string(16, '\0'))}};
  m = input_error_of([&] { npz_read(write_file("member.npz", zip(bad))); });
  CHECK(m.find("member.npz: member x.npy: byte ") == 0);
  CHECK(m.find("truncated data (expected 32 bytes, got 16)") != std::string::npos);

  // Deflated member with a broken stream.
  std::string def = zip(two_members(), true);
  std::size_t first_data = 30 + 5;  // local header + "a.npy"
  for (std::size_t k = 0; k < 8; ++k) def[first_data + k] = static_cast<char>(0xff);
  m = input_error_of([&] { npz_read(write_file("inflate.npz", def)); });
  CHECK(m.find("inflate.npz: byte ") == 0);

  m = input_error_of([&] { npz_read((fixtures::scratch() / "missing.npz").string()); });
  CHECK(m.find("missing.npz: expected a readable file") != std::string::npos);
}

TEST_CASE("npz deflated member with a wrong uncompressed size", "[npz][errors]") {
  std::string content = npy("<f8", {2}, raw_all(std::vector<double>{1, 2}));
  std::string z = zip({{"a.npy", content}}, true);
  // Patch the central directory's uncompressed size (offset 24 in the entry) to one byte less / more.
  std::size_t cd = z.find(std::string("PK\x01\x02", 4));
  REQUIRE(cd != std::string::npos);
  for (long delta : {-1L, 1L, 1L << 28}) {
    std::string bad = z;
    std::uint32_t size = static_cast<std::uint32_t>(content.size() + delta);
    std::memcpy(&bad[cd + 24], &size, 4);
    std::string m = input_error_of([&] { npz_read(write_file("size.npz", bad)); });
    CHECK(m.find("size.npz: byte ") == 0);
    CHECK(m.find("member 'a.npy': expected ") != std::string::npos);
  }
}

// A large float32 member of a stored .npz is read in place from the file (mapped, at a misaligned byte
// offset as numpy.savez leaves it); checked against the same archive parsed from memory (read, not
// mapped) value by value, and its corruption found as on the read route: a changed byte by the CRC, a
// NaN past the first 16 MiB chunk by its element index.
TEST_CASE("npz float32 members read in place", "[npz]") {
  const std::size_t count = (std::size_t(1) << 22) + 777;  // > 16 MiB: mapped; not a whole number of chunks
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>(static_cast<double>(i % 1013) / 64.0 - 7.5);
  std::string raw(reinterpret_cast<const char*>(v.data()), count * 4);
  const std::string member = npy("<f4", {count}, raw);
  const std::string archive = zip({{"c.npy", member}});
  const std::string path = write_file("f32.npz", archive);
  auto mapped = npz_read_typed(path, true);
  auto read = npz_parse_typed(archive, "f32.npz");
  const TypedArray& a = mapped.at("c");
  REQUIRE(a.f32.mapped());
  REQUIRE(a.f32.size() == count);
  REQUIRE(reinterpret_cast<std::uintptr_t>(a.f32.data()) % 4 != 0);  // really misaligned: the case that needs Float32Le
  REQUIRE(read.at("c").f64.size() == count);  // the in-memory route widens (keep_float32 is off there)
  std::size_t differ = 0;
  for (std::size_t i = 0; i < count; ++i) differ += static_cast<double>(a.f32[i]) != read.at("c").f64[i];
  REQUIRE(differ == 0);
  // A value overwritten by a NaN without updating the CRC: reported as the member's corruption (the CRC
  // is checked before the values).
  std::string corrupt = archive;
  const std::size_t data_at = archive.find(member) + member.size() - 4 * 1000;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(corrupt.data() + data_at, &nan, 4);
  std::string m = input_error_of([&] { npz_read_typed(write_file("f32_crc.npz", corrupt), true); });
  CHECK(m.find("member 'c.npy': expected CRC-32") != std::string::npos);
  // A NaN at element count - 5 (in the last chunk), with a matching CRC: named by its index.
  std::vector<float> w = v;
  w[count - 5] = std::numeric_limits<float>::quiet_NaN();
  const std::string nan_archive = zip({{"c.npy", npy("<f4", {count}, std::string(reinterpret_cast<const char*>(w.data()), count * 4))}});
  m = input_error_of([&] { npz_read_typed(write_file("f32_nan.npz", nan_archive), true); });
  INFO(m);
  CHECK(m.find(ndindex_to_string({count}, count - 5) + ": expected a finite number, got nan") != std::string::npos);
}
