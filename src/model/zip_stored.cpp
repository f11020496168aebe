// Walking a zip archive of stored members (zip_stored.hpp). Layout: local headers with the data, then
// the central directory (one 46-byte record per member), then the end record (22 bytes and a comment of
// at most 65535), preceded by the zip64 locator and end record when counts or offsets overflow 32 bits.
#include "zip_stored.hpp"

#include <zlib.h>

#include <algorithm>

#include "../data/printable.hpp"
#include "memcert/util/error.hpp"

namespace memcert::detail {

namespace {

constexpr std::uint32_t kZipLocalSig = 0x04034b50, kZipCentralSig = 0x02014b50, kZipEndSig = 0x06054b50;
constexpr std::uint32_t kZip64EndRecordSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
// Members an archive may have (a torch.save archive has one per storage, plus three): the directory's
// size in memory stays bounded whatever the file declares.
constexpr std::uint64_t kZipMaxMembers = std::uint64_t{1} << 20;

[[noreturn]] void zip_fail(const ModelBytes& b, std::uint64_t at, const std::string& what) {
  throw input_error(b.name(), "byte " + std::to_string(at), what);
}

struct ZipDirectory {
  std::uint64_t entries = 0, offset = 0, size = 0;
};

ZipDirectory zip_find_directory(const ModelBytes& b, const std::string& what) {
  if (b.size() < 22) zip_fail(b, 0, "expected " + what + " (a zip archive), got " + std::to_string(b.size()) + " bytes");
  // The end record: the last 22 bytes plus a comment of at most 65535 bytes, read in one piece.
  const std::uint64_t tail_at = b.size() >= 22 + 65535 ? b.size() - 22 - 65535 : 0;
  const std::string tail = b.read_string(tail_at, static_cast<std::size_t>(b.size() - tail_at), "the end record");
  auto u = [&](std::size_t at, int width) {
    std::uint64_t v = 0;
    for (int k = width; k-- > 0;) v = (v << 8) | static_cast<unsigned char>(tail[at + static_cast<std::size_t>(k)]);
    return v;
  };
  std::size_t at = tail.size() - 22;
  for (;; --at) {
    if (u(at, 4) == kZipEndSig && at + 22 + u(at + 20, 2) == tail.size()) break;
    if (at == 0) zip_fail(b, 0, "expected " + what + " (a zip archive): no end-of-central-directory record found");
  }
  const std::uint64_t end_at = tail_at + at;
  ZipDirectory d{u(at + 10, 2), u(at + 16, 4), u(at + 12, 4)};
  if (d.entries == 0xffff || d.offset == 0xffffffff || d.size == 0xffffffff) {
    if (end_at < 20 || b.le(end_at - 20, 4, "a zip64 locator") != kZip64LocatorSig)
      zip_fail(b, end_at, "expected a zip64 end-of-central-directory locator");
    const std::uint64_t z = b.le(end_at - 12, 8, "a zip64 end record offset");
    if (b.le(z, 4, "a zip64 end record") != kZip64EndRecordSig) zip_fail(b, z, "expected a zip64 end-of-central-directory record");
    d.entries = b.le(z + 32, 8, "the zip64 entry count");
    d.size = b.le(z + 40, 8, "the zip64 directory size");
    d.offset = b.le(z + 48, 8, "the zip64 directory offset");
  }
  if (d.offset > b.size() || b.size() - d.offset < d.size)
    zip_fail(b, end_at, "expected a central directory inside the file");
  if (d.entries > d.size / 46) zip_fail(b, end_at, "expected an entry count that fits the central directory");
  if (d.entries > kZipMaxMembers)
    zip_fail(b, end_at, "expected at most " + std::to_string(kZipMaxMembers) + " members, got " + std::to_string(d.entries));
  return d;
}

// The zip64 extended-information field of a central record's extra bytes updates the 32-bit values that
// are 0xffffffff, in order: size, compressed size, local header offset.
void zip_apply_zip64(const std::string& extra, std::uint64_t& usize, std::uint64_t& csize, std::uint64_t& local,
                 const ModelBytes& b, std::uint64_t at) {
  for (std::size_t p = 0; p + 4 <= extra.size();) {
    auto u16 = [&](std::size_t q) {
      return static_cast<unsigned>(static_cast<unsigned char>(extra[q])) |
             static_cast<unsigned>(static_cast<unsigned char>(extra[q + 1])) << 8;
    };
    const unsigned id = u16(p), len = u16(p + 2);
    if (p + 4 + len > extra.size()) zip_fail(b, at, "expected zip extra fields inside their record");
    if (id == 1) {
      std::size_t q = p + 4;
      for (std::uint64_t* v : {&usize, &csize, &local}) {
        if (*v != 0xffffffff) continue;
        if (q + 8 > p + 4 + len) zip_fail(b, at, "expected a complete zip64 extra field");
        std::uint64_t x = 0;
        for (int k = 8; k-- > 0;) x = (x << 8) | static_cast<unsigned char>(extra[q + static_cast<std::size_t>(k)]);
        *v = x;
        q += 8;
      }
    }
    p += 4 + len;
  }
}

}  // namespace

ZipStored::ZipStored(const ModelBytes& b, const std::string& what) : bytes_(b) {
  const ZipDirectory d = zip_find_directory(b, what);
  members_.reserve(static_cast<std::size_t>(d.entries));
  std::uint64_t at = d.offset;
  const std::uint64_t end = d.offset + d.size;
  for (std::uint64_t i = 0; i < d.entries; ++i) {
    if (end - at < 46 || b.le(at, 4, "a central directory record") != kZipCentralSig)
      zip_fail(b, at, "expected central directory record " + std::to_string(i));
    const std::uint64_t flags = b.le(at + 8, 2, "flags"), method = b.le(at + 10, 2, "the method");
    const auto crc = static_cast<std::uint32_t>(b.le(at + 16, 4, "the CRC"));
    std::uint64_t csize = b.le(at + 20, 4, "the compressed size"), usize = b.le(at + 24, 4, "the size");
    const std::uint64_t nlen = b.le(at + 28, 2, "the name length"), xlen = b.le(at + 30, 2, "the extra length"),
                        clen = b.le(at + 32, 2, "the comment length");
    std::uint64_t local = b.le(at + 42, 4, "the local header offset");
    if (end - at - 46 < nlen + xlen + clen) zip_fail(b, at, "expected a central directory record inside the directory");
    std::string name = b.read_string(at + 46, static_cast<std::size_t>(nlen), "a member name");
    zip_apply_zip64(b.read_string(at + 46 + nlen, static_cast<std::size_t>(xlen), "extra fields"), usize, csize, local, b, at);
    if (flags & 1) zip_fail(b, at, "expected unencrypted members, got an encrypted one");
    if (!index_.emplace(name, members_.size()).second) zip_fail(b, at, "expected unique member names, got '" + printable_excerpt(name, 80) + "' twice");
    // The member's data follow its local header (30 bytes, its own name and extra lengths).
    if (local > b.size() || b.size() - local < 30 || b.le(local, 4, "a local header") != kZipLocalSig)
      zip_fail(b, local, "expected the local header of member '" + printable_excerpt(name, 80) + "'");
    const std::uint64_t data_at = local + 30 + b.le(local + 26, 2, "a name length") + b.le(local + 28, 2, "an extra length");
    if (data_at > b.size() || b.size() - data_at < csize)
      zip_fail(b, local, "expected member '" + printable_excerpt(name, 80) + "' (" + std::to_string(csize) +
                         " bytes) inside the file");
    const bool stored = method == 0;
    if (stored && csize != usize)
      zip_fail(b, at, "expected a stored member's sizes to agree for '" + printable_excerpt(name, 80) + "'");
    members_.push_back({std::move(name), data_at, stored ? usize : csize, crc, stored});
    at += 46 + nlen + xlen + clen;
  }
  verified_.assign(members_.size(), false);
}

const ZipMember* ZipStored::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &members_[it->second];
}

void ZipStored::verify(const ZipMember& m) const {
  const auto k = static_cast<std::size_t>(&m - members_.data());
  if (verified_[k]) return;
  if (!m.stored)
    zip_fail(bytes_, m.data_at, "expected member '" + printable_excerpt(m.name, 80) +
                                "' stored uncompressed (as torch.save writes it), got a compressed member");
  std::string buf;
  uLong crc = ::crc32(0L, Z_NULL, 0);
  for (std::uint64_t done = 0; done < m.size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(m.size - done, 1u << 20));
    buf.resize(n);
    bytes_.read(m.data_at + done, n, buf.data(), "member data");
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n));
    done += n;
  }
  if (static_cast<std::uint32_t>(crc) != m.crc)
    zip_fail(bytes_, m.data_at, "expected member '" + printable_excerpt(m.name, 80) + "' to match its CRC-32, got a corrupt member");
  verified_[k] = true;
}

void ZipStored::read(const ZipMember& m, std::uint64_t at, std::size_t n, void* dst) const {
  if (at > m.size || m.size - at < n)
    zip_fail(bytes_, m.data_at, "expected " + std::to_string(n) + " bytes at offset " + std::to_string(at) + " of member '" +
                                printable_excerpt(m.name, 80) + "' (" + std::to_string(m.size) + " bytes)");
  bytes_.read(m.data_at + at, n, dst, "member data");
}

}  // namespace memcert::detail
