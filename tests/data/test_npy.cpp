// .npy parsing: every dtype, both byte orders, C and Fortran order, header versions 1-3, exactness of
// float input, and one-line errors for malformed files.
#include <cmath>
#include <fstream>
#include <limits>

#include "memcert/data/matrix_io.hpp"
#include "npy_fixtures.hpp"
#include "support/cpu_time.hpp"

using namespace memcert;
using fixtures::input_error_of;
using fixtures::npy;
using fixtures::raw_all;

TEST_CASE("npy float64 is read as the exact dyadic rational it stores", "[npy]") {
  std::vector<double> xs{0.1, -2.5, 1e-300, 3.0};
  NdArray a = npy_parse(npy("<f8", {2, 2}, raw_all(xs)), "x.npy");
  REQUIRE(a.shape == std::vector<std::size_t>{2, 2});
  REQUIRE_FALSE(a.integral);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(a.data[i] == rational_from_double(xs[i]));
  // 0.1 as stored is 3602879701896397 / 2^55, not 1/10.
  CHECK(a.data[0] != Rational(1, 10));
  CHECK(a.data[0] == Rational(Integer("3602879701896397"), Integer(1) << 55));
  CHECK(a.data[1] == Rational(-5, 2));
}

TEST_CASE("npy float32 widens exactly", "[npy]") {
  std::vector<float> xs{0.1f, -0.75f};
  NdArray a = npy_parse(npy("<f4", {2}, raw_all(xs)), "x.npy");
  CHECK(a.data[0] == rational_from_double(static_cast<double>(0.1f)));
  CHECK(a.data[0] != rational_from_double(0.1));
  CHECK(a.data[1] == Rational(-3, 4));
}

TEST_CASE("npy integer dtypes, including extremes", "[npy]") {
  std::vector<std::int64_t> i8{std::numeric_limits<std::int64_t>::min(), -1, 7, std::numeric_limits<std::int64_t>::max()};
  NdArray a = npy_parse(npy("<i8", {4}, raw_all(i8)), "x.npy");
  CHECK(a.integral);
  CHECK(a.data[0] == Rational(Integer("-9223372036854775808")));
  CHECK(a.data[1] == -1);
  CHECK(a.data[3] == Rational(Integer("9223372036854775807")));
  std::vector<std::int32_t> i4{-2147483647 - 1, 5};
  NdArray b = npy_parse(npy("<i4", {2}, raw_all(i4)), "x.npy");
  CHECK(b.data[0] == -2147483648L);
  CHECK(b.data[1] == 5);
  std::vector<std::uint64_t> u8{18446744073709551615ULL};
  CHECK(npy_parse(npy("<u8", {1}, raw_all(u8)), "x.npy").data[0] == Rational(Integer("18446744073709551615")));
}

TEST_CASE("npy big-endian dtypes", "[npy]") {
  std::vector<double> f{0.1, -7.0};
  NdArray a = npy_parse(npy(">f8", {2}, raw_all(f, true)), "x.npy");
  CHECK(a.data[0] == rational_from_double(0.1));
  CHECK(a.data[1] == -7);
  std::vector<std::int32_t> i{-3, 1 << 20};
  NdArray b = npy_parse(npy(">i4", {2}, raw_all(i, true)), "x.npy");
  CHECK(b.data[0] == -3);
  CHECK(b.data[1] == (1 << 20));
  std::vector<std::int64_t> l{-123456789012LL};
  CHECK(npy_parse(npy(">i8", {1}, raw_all(l, true)), "x.npy").data[0] == Rational(Integer("-123456789012")));
  std::vector<float> g{1.5f};
  CHECK(npy_parse(npy(">f4", {1}, raw_all(g, true)), "x.npy").data[0] == Rational(3, 2));
}

TEST_CASE("npy Fortran order is transposed into row-major", "[npy]") {
  // The 2 x 3 matrix [[1,2,3],[4,5,6]] stored column by column.
  std::vector<std::int64_t> colmajor{1, 4, 2, 5, 3, 6};
  NdArray a = npy_parse(npy("<i8", {2, 3}, raw_all(colmajor), true), "x.npy");
  for (int k = 0; k < 6; ++k) CHECK(a.data[k] == k + 1);
  // 3-d: element (i,j,k) of shape (2,3,2) has value 100i + 10j + k; Fortran offset i + 2j + 6k.
  std::vector<std::int32_t> f(12);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) f[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  NdArray b = npy_parse(npy("<i4", {2, 3, 2}, raw_all(f), true), "x.npy");
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) CHECK(b.data[(i * 3 + j) * 2 + k] == 100 * i + 10 * j + k);
}

TEST_CASE("npy header versions 2 and 3", "[npy]") {
  std::vector<double> xs{1.25, 2.0};
  for (int v : {2, 3}) {
    NdArray a = npy_parse(npy("<f8", {1, 2}, raw_all(xs), false, v), "x.npy");
    CHECK(a.shape == std::vector<std::size_t>{1, 2});
    CHECK(a.data[0] == Rational(5, 4));
  }
}

TEST_CASE("npy writer round-trips through the reader exactly", "[npy]") {
  std::vector<double> xs{0.1, -1e100, 5e-324, 0.0, 1.0 / 3.0, 42.0};
  NdArray a = npy_parse(npy_bytes_float64({3, 2}, xs), "w.npy");
  REQUIRE(a.shape == std::vector<std::size_t>{3, 2});
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(a.data[i] == rational_from_double(xs[i]));
  // Against the independent encoder: identical data section.
  std::string ours = npy_bytes_float64({3, 2}, xs), theirs = npy("<f8", {3, 2}, raw_all(xs));
  CHECK(ours.size() % 64 == theirs.size() % 64);
  CHECK(ours.substr(ours.size() - 48) == theirs.substr(theirs.size() - 48));
  CHECK(npy_parse(npy_bytes_float64({4}, {1, 2, 3, 4}), "w.npy").shape == std::vector<std::size_t>{4});
}

TEST_CASE("npy bad input: one line naming file and byte", "[npy][errors]") {
  std::vector<double> xs(100, 1.0);
  std::string good = npy("<f8", {10, 10}, raw_all(xs));
  std::size_t data_at = good.size() - 800;

  std::string m = input_error_of([&] { npy_parse(good.substr(0, data_at + 312), "x.npy"); });
  CHECK(m == "x.npy: byte " + std::to_string(data_at) + ": truncated data (expected 800 bytes, got 312)");

  m = input_error_of([&] { npy_parse("", "x.npy"); });
  CHECK(m.rfind("x.npy: byte 0: ", 0) == 0);
  CHECK(m.find("empty file") != std::string::npos);

  m = input_error_of([&] { npy_parse("PK\x03\x04garbage", "x.npy"); });
  CHECK(m.rfind("x.npy: byte 0: expected the .npy magic", 0) == 0);

  m = input_error_of([&] { npy_parse(good + "xx", "x.npy"); });
  CHECK(m.find("x.npy: byte " + std::to_string(good.size()) + ":") == 0);

  m = input_error_of([&] { npy_parse(npy("<c16", {1}, std::string(16, '\0')), "x.npy"); });
  CHECK(m.find("x.npy: byte 20:") == 0);  // the descr value
  CHECK(m.find("'<c16'") != std::string::npos);

  m = input_error_of([&] { npy_parse(npy("|O", {1}, std::string(8, '\0')), "x.npy"); });
  CHECK(m.find("'|O'") != std::string::npos);

  std::string header_cut = good.substr(0, 30);
  m = input_error_of([&] { npy_parse(header_cut, "x.npy"); });
  CHECK(m.find("x.npy: byte 10: truncated header") == 0);

  std::string bad_version = good;
  bad_version[6] = 9;
  m = input_error_of([&] { npy_parse(bad_version, "x.npy"); });
  CHECK(m.find("x.npy: byte 6:") == 0);

  std::string no_shape = "\x93NUMPY\x01";
  no_shape += '\0';
  std::string dict = "{'descr': '<f8', 'fortran_order': False, }";
  no_shape += fixtures::raw<std::uint16_t>(dict.size()) + dict;
  m = input_error_of([&] { npy_parse(no_shape, "x.npy"); });
  CHECK(m.find("'shape'") != std::string::npos);
}

TEST_CASE("npy NaN and infinity are bad input naming the element", "[npy][errors]") {
  std::vector<double> xs{1.0, 2.0, std::nan(""), 4.0};
  std::string m = input_error_of([&] { npy_parse(npy("<f8", {2, 2}, raw_all(xs)), "x.npy"); });
  CHECK(m == "x.npy: element [1][0]: expected a finite number, got nan");
  std::vector<float> ys{-std::numeric_limits<float>::infinity()};
  m = input_error_of([&] { npy_parse(npy("<f4", {1}, raw_all(ys)), "y.npy"); });
  CHECK(m == "y.npy: element [0]: expected a finite number, got -inf");
}

// A large .npy file (past the direct-read threshold) read from disk straight into the typed vector: the
// same values as parsing the whole file from memory, and the same one-line errors for trailing bytes and
// truncation.
TEST_CASE("npy_read_typed on large files equals npy_parse_typed of the bytes", "[npy]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("memcert_npy_big_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::int64_t> xs(300 * 500);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<std::int64_t>(i * 2654435761u % 2000003) - 1000001;
  std::vector<double> ds(xs.size());
  for (std::size_t i = 0; i < ds.size(); ++i) ds[i] = static_cast<double>(xs[i]) / 1024;
  for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"i.npy", npy("<i8", {300, 500}, raw_all(xs))},
                                    {"f.npy", npy("<f8", {300, 500}, raw_all(ds))}}) {
    const std::string path = (dir / name).string();
    REQUIRE(bytes.size() > (std::size_t(1) << 20));
    file_write_atomic(path, bytes);
    TypedArray direct = npy_read_typed(path), parsed = npy_parse_typed(bytes, path);
    CHECK(direct.shape == parsed.shape);
    CHECK(direct.storage == parsed.storage);
    CHECK(direct.i64 == parsed.i64);
    CHECK(direct.f64 == parsed.f64);
    file_write_atomic(path, bytes + "x");
    CHECK(input_error_of([&] { npy_read_typed(path); }) == input_error_of([&] { npy_parse_typed(bytes + "x", path); }));
    file_write_atomic(path, bytes.substr(0, bytes.size() - 8));
    CHECK(input_error_of([&] { npy_read_typed(path); }) ==
          input_error_of([&] { npy_parse_typed(bytes.substr(0, bytes.size() - 8), path); }));
  }
  std::filesystem::remove_all(dir);
}

// A .npy file above 2 GiB (sparse: no disk or memory used by its zeros) is read by its header, like any
// large file: the header's size is checked against the file's at once. It used to go through
// file_read_all, which read 2 GiB into memory and then refused the file for its size (a valid one too).
TEST_CASE("npy_read_typed: a file above 2 GiB is checked from its header, not read whole", "[npy][errors]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("memcert_npy_huge_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "huge.npy").string();
  const std::uintmax_t size = (std::uintmax_t(1) << 31) + 4096;
  const long rss_before = fixtures::peak_rss_kb();
  const double t0 = memcert_test::cpu_seconds();  // CPU time: the guard must not fail on a loaded machine
  // Trailing bytes after a (1,) float64 array.
  const std::string small = npy("<f8", {1}, raw_all(std::vector<double>{1.5}));
  std::ofstream(path, std::ios::binary) << small;
  std::filesystem::resize_file(path, size);
  std::string m = input_error_of([&] { npy_read_typed(path); });
  INFO(m);
  CHECK(m.find("huge.npy: byte " + std::to_string(small.size()) + ": expected the end of the file after 8 data bytes, got " +
               std::to_string(size - small.size()) + " more bytes") != std::string::npos);
  // A shape needing more than the file holds: truncated, before any allocation.
  const std::string big = npy("<f8", {std::size_t(1) << 29}, "");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << big;
  std::filesystem::resize_file(path, size);
  m = input_error_of([&] { npy_read_typed(path); });
  INFO(m);
  CHECK(m.find("truncated data (expected " + std::to_string(std::uint64_t(8) << 29) + " bytes, got " +
               std::to_string(size - big.size()) + ")") != std::string::npos);
  const double secs = memcert_test::cpu_seconds() - t0;
  CHECK(secs < 1.0);
  const long rss_after = fixtures::peak_rss_kb();
  if (rss_before > 0 && rss_after > 0) CHECK(rss_after - rss_before < 64 * 1024);
  std::filesystem::remove_all(dir);
}
