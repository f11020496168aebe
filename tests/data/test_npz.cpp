// .npz reading (stored and deflated members, zip archives built by the test's own encoder) and the
// float64 .npz writer.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "memcert/data/matrix_io.hpp"
#include "npy_fixtures.hpp"
#include "support/cpu_time.hpp"

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

TEST_CASE("npz_write_float64_stream writes npz_write_float64's bytes, and nothing on failure", "[npz]") {
  const auto dir = fixtures::scratch();
  const std::string a = (dir / "stream_a.npz").string(), b = (dir / "stream_b.npz").string();
  std::vector<double> big(100003);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i % 97) / 8 - 3;
  const std::vector<double> lab{0, 1, 2, -0.0, 1e300};
  npz_write_float64(a, {{"sequences", {{100003}, big}}, {"labels", {{5}, lab}}, {"a", {{1, 0}, {}}}});
  // Members in another order, values in uneven pieces (one value, then 1000, ...).
  npz_write_float64_stream(b, {{"sequences", {100003}, [&](const auto& put) {
                                  std::size_t at = 0, step = 1;
                                  while (at < big.size()) {
                                    const std::size_t n = std::min(step, big.size() - at);
                                    put(big.data() + at, n);
                                    at += n;
                                    step = step * 10 + 3;
                                  }
                                }},
                               {"labels", {5}, [&](const auto& put) { put(lab.data(), lab.size()); }},
                               {"a", {1, 0}, [](const auto&) {}}});
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  const std::string ta((std::istreambuf_iterator<char>(fa)), {}), tb((std::istreambuf_iterator<char>(fb)), {});
  REQUIRE(ta.size() > 800000);
  CHECK(ta == tb);
  CHECK(npz_read(b).at("sequences").data[98] == Rational(1, 8) - 3);
  // Too few or too many values, or an error from the producer: an exception, the old file untouched and
  // no temporary file left.
  auto left_alone = [&] {
    std::ifstream f(b, std::ios::binary);
    const std::string t((std::istreambuf_iterator<char>(f)), {});
    CHECK(t == ta);
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().filename().string().rfind("stream_b.npz", 0) == 0) ++files;
    CHECK(files == 1);
  };
  CHECK_THROWS_AS(npz_write_float64_stream(b, {{"x", {3}, [&](const auto& put) { put(lab.data(), 2); }}}), std::logic_error);
  left_alone();
  CHECK_THROWS_AS(npz_write_float64_stream(b, {{"x", {3}, [&](const auto& put) { put(lab.data(), 4); }}}), std::logic_error);
  left_alone();
  CHECK_THROWS_AS(npz_write_float64_stream(b, {{"x", {3}, [](const auto&) { throw std::runtime_error("no"); }}}),
                  std::runtime_error);
  left_alone();
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
  // Patch the uncompressed size in the central directory (offset 24 in the entry) and the local header
  // (offset 22) to one byte less / more.
  std::size_t cd = z.find(std::string("PK\x01\x02", 4));
  REQUIRE(cd != std::string::npos);
  for (long delta : {-1L, 1L, 1L << 28}) {
    std::string bad = z;
    std::uint32_t size = static_cast<std::uint32_t>(content.size() + delta);
    std::memcpy(&bad[cd + 24], &size, 4);
    std::memcpy(&bad[22], &size, 4);
    std::string m = input_error_of([&] { npz_read(write_file("size.npz", bad)); });
    INFO(m);
    if (delta == -1) CHECK(m.find("truncated data (expected 16 bytes, got 15)") != std::string::npos);
    else if (delta == 1) CHECK(m.find("expected the end of the file after 16 data bytes, got 1 more bytes") != std::string::npos);
    else CHECK(m.find("member 'a.npy': expected an uncompressed size consistent with ") != std::string::npos);
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

namespace {
// A deflated member: `prefix` followed by `zeros` zero bytes, compressed as a stream (the content is
// never held whole); with the CRC-32 and size of the whole content.
struct Packed {
  std::string bytes;
  std::uint32_t crc = 0;
  std::uint64_t size = 0;
};
Packed deflate_prefix_and_zeros(const std::string& prefix, std::uint64_t zeros) {
  Packed p;
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);  // fast
  const std::string zero(std::size_t(1) << 20, '\0');
  std::string out(std::size_t(1) << 16, '\0');
  uLong crc = crc32(0L, Z_NULL, 0);
  auto feed = [&](const std::string& in, std::size_t n, bool last) {
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(n);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(in.data()), static_cast<uInt>(n));
    p.size += n;
    int rc;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(out.data());
      zs.avail_out = static_cast<uInt>(out.size());
      rc = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
      p.bytes.append(out.data(), out.size() - zs.avail_out);
    } while (zs.avail_out == 0 || (last && rc != Z_STREAM_END));
  };
  feed(prefix, prefix.size(), zeros == 0);
  for (std::uint64_t left = zeros; left > 0;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, zero.size()));
    left -= n;
    feed(zero, n, left == 0);
  }
  deflateEnd(&zs);
  p.crc = static_cast<std::uint32_t>(crc);
  return p;
}
// A one-member zip archive whose headers (local and central) declare CRC `crc` and uncompressed size
// `usize` for the compressed bytes `packed` (method 8).
std::string zip_deflated_member(const std::string& name, const std::string& packed, std::uint32_t crc, std::uint32_t usize) {
  using fixtures::raw;
  const auto csize = static_cast<std::uint32_t>(packed.size());
  std::string body = raw<std::uint32_t>(0x04034b50) + raw<std::uint16_t>(20) + raw<std::uint16_t>(0) + raw<std::uint16_t>(8) +
                     raw<std::uint16_t>(0) + raw<std::uint16_t>(0x21) + raw(crc) + raw(csize) + raw(usize) +
                     raw<std::uint16_t>(static_cast<std::uint16_t>(name.size())) + raw<std::uint16_t>(0) + name + packed;
  std::string dir = raw<std::uint32_t>(0x02014b50) + raw<std::uint16_t>(20) + raw<std::uint16_t>(20) + raw<std::uint16_t>(0) +
                    raw<std::uint16_t>(8) + raw<std::uint16_t>(0) + raw<std::uint16_t>(0x21) + raw(crc) + raw(csize) + raw(usize) +
                    raw<std::uint16_t>(static_cast<std::uint16_t>(name.size())) + raw<std::uint16_t>(0) + raw<std::uint16_t>(0) +
                    raw<std::uint16_t>(0) + raw<std::uint16_t>(0) + raw<std::uint32_t>(0) + raw<std::uint32_t>(0) + name;
  std::string end = raw<std::uint32_t>(0x06054b50) + raw<std::uint16_t>(0) + raw<std::uint16_t>(0) + raw<std::uint16_t>(1) +
                    raw<std::uint16_t>(1) + raw(static_cast<std::uint32_t>(dir.size())) +
                    raw(static_cast<std::uint32_t>(body.size())) + raw<std::uint16_t>(0);
  return body + dir + end;
}
}  // namespace

// A zip bomb: the .npy header says 13 x 4 x 7 float64 (2912 data bytes), the member inflates to 1 GiB
// (of zeros, a few MB compressed). Whether the zip headers declare the true size (which disagrees with
// the .npy header) or the .npy's (which the stream then overruns), the member is refused after
// inflating at most its header and declared size: in well under the time and memory inflating 1 GiB takes.
TEST_CASE("npz zip bomb: a deflated member larger than its .npy header says", "[npz][errors]") {
  const std::string head = npy("<f8", {13, 4, 7}, "");
  const std::uint64_t bomb = std::uint64_t(1) << 30;
  const Packed p = deflate_prefix_and_zeros(head, bomb - head.size());
  REQUIRE(p.size == bomb);
  REQUIRE(p.bytes.size() < (std::size_t(8) << 20));  // small on disk
  const long rss_before = fixtures::peak_rss_kb();
  // Headers declaring the true size (consistent with the compressed size, not with the .npy header).
  double t0 = memcert_test::cpu_seconds();  // CPU time: the guard must not fail on a loaded machine
  std::string m = input_error_of([&] {
    npz_read_typed(write_file("bomb.npz", zip_deflated_member("a.npy", p.bytes, p.crc, static_cast<std::uint32_t>(bomb))));
  });
  double secs = memcert_test::cpu_seconds() - t0;
  INFO(m);
  CHECK(m.find("bomb.npz: member a.npy: byte ") == 0);
  CHECK(m.find("expected the end of the file after 2912 data bytes") != std::string::npos);
  CHECK(secs < 0.5);
  // Headers declaring the .npy's size: the stream runs past it and is stopped one byte later.
  t0 = memcert_test::cpu_seconds();
  m = input_error_of([&] {
    npz_read_typed(write_file("bomb2.npz", zip_deflated_member("a.npy", p.bytes, p.crc, static_cast<std::uint32_t>(head.size() + 2912))));
  });
  secs = memcert_test::cpu_seconds() - t0;
  INFO(m);
  CHECK(m.find("bomb2.npz: byte ") == 0);
  CHECK(m.find("member 'a.npy': expected a valid deflate stream of " + std::to_string(head.size() + 2912) +
               " bytes, got more data") != std::string::npos);
  CHECK(secs < 0.5);
  // Neither attempt held the inflated gigabyte (nor anything near it).
  const long rss_after = fixtures::peak_rss_kb();
  if (rss_before > 0 && rss_after > 0) CHECK(rss_after - rss_before < 64 * 1024);
}

// A deflated member whose stream ends early, or is followed by more data than the zip headers declare,
// and a local header that disagrees with the central directory.
TEST_CASE("npz deflated member: stream length and header agreement", "[npz][errors]") {
  const std::string content = npy("<f8", {2}, raw_all(std::vector<double>{1, 2}));
  const std::string packed = fixtures::deflate_raw(content);
  const auto crc = static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(content.data()), static_cast<uInt>(content.size())));
  // The declared sizes agree with the .npy header; the stream is cut before its end.
  std::string m = input_error_of([&] {
    npz_read(write_file("short.npz", zip_deflated_member("a.npy", packed.substr(0, packed.size() / 2), crc,
                                                           static_cast<std::uint32_t>(content.size()))));
  });
  CHECK(m.find("short.npz: byte ") == 0);
  CHECK(m.find("member 'a.npy': expected a valid deflate stream of " + std::to_string(content.size()) + " bytes, got ") !=
        std::string::npos);
  // The intact archive reads; a wrong CRC in both headers is the member's corruption.
  CHECK(npz_read(write_file("ok.npz", zip_deflated_member("a.npy", packed, crc, static_cast<std::uint32_t>(content.size()))))
            .at("a")
            .data[1] == 2);
  m = input_error_of([&] {
    npz_read(write_file("crc2.npz", zip_deflated_member("a.npy", packed, crc ^ 1, static_cast<std::uint32_t>(content.size()))));
  });
  CHECK(m.find("member 'a.npy': expected CRC-32 " + std::to_string(crc ^ 1)) != std::string::npos);
  // Local header and central directory disagree on the uncompressed size.
  std::string z = zip_deflated_member("a.npy", packed, crc, static_cast<std::uint32_t>(content.size()));
  const std::uint32_t other = static_cast<std::uint32_t>(content.size() + 8);
  std::memcpy(&z[22], &other, 4);
  m = input_error_of([&] { npz_read(write_file("local.npz", z)); });
  CHECK(m.find("local.npz: byte 0: member 'a.npy': expected the local header's CRC-32 and sizes to match") == 0);
}

namespace {
// CRC-32 (IEEE 802.3, reflected, as zip and zlib define it) bit by bit: independent of zlib.
std::uint32_t crc32_bitwise(const unsigned char* p, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}
}  // namespace

// The CRC of a member is computed in pieces (zlib's length is 32 bits, so one call over a member above
// 4 GiB would cover only its size mod 2^32): with small injected piece limits, every piece stays within
// the limit, the pieces cover the bytes once, and the joined CRC equals the bitwise CRC of the whole.
TEST_CASE("crc32_of: pieces within the limit, joined CRC exact", "[npz][crc]") {
  std::vector<unsigned char> bytes(100003);
  std::uint64_t x = 88172645463325252ULL;
  for (auto& b : bytes) x ^= x << 13, x ^= x >> 7, x ^= x << 17, b = static_cast<unsigned char>(x >> 24);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(4096), bytes.size()})
    for (std::size_t max_piece : {std::size_t(1), std::size_t(3), std::size_t(4096), std::size_t(65537), std::size_t(1) << 30}) {
      if (max_piece == 1 && n > 4096) continue;
      std::size_t pieces = 0, covered = 0, largest = 0;
      const std::uint32_t got = crc32_of(0, bytes.data(), n, max_piece, [&](const unsigned char* at, std::size_t len) {
        REQUIRE(at == bytes.data() + covered);
        ++pieces, covered += len, largest = std::max(largest, len);
        return crc32_bitwise(at, len);
      });
      INFO("n " << n << ", max_piece " << max_piece);
      CHECK(got == crc32_bitwise(bytes.data(), n));
      CHECK(largest <= max_piece);
      CHECK(covered == n);
      CHECK(pieces == (n + max_piece - 1) / max_piece);
      // Continuing a CRC: the CRC of a prefix, then the rest, equals the whole.
      const std::size_t half = n / 2;
      CHECK(crc32_of(crc32_of(0, bytes.data(), half, max_piece), bytes.data() + half, n - half, max_piece) ==
            crc32_bitwise(bytes.data(), n));
    }
  // The parallel route (64 MiB and more): zlib's pieces joined, against zlib's one call over the whole.
  std::vector<unsigned char> big((std::size_t(1) << 26) + 12345);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  const auto whole = static_cast<std::uint32_t>(crc32(0L, big.data(), static_cast<uInt>(big.size())));
  CHECK(crc32_of(0, big.data(), big.size()) == whole);
  CHECK(crc32_of(0, big.data(), big.size(), (std::size_t(3) << 20) + 1) == whole);
}
