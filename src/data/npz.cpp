// .npz = a zip archive of .npy members (numpy.savez / savez_compressed). The reader walks the central
// directory (zip64 records included), accepts stored (method 0) and deflated (method 8, zlib raw inflate)
// members and checks each member's CRC-32. The writer emits stored members only.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include "memcert/data/matrix_io.hpp"
#include "printable.hpp"

namespace memcert {

namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr std::uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;

// The archive's bytes: a string in memory, or a regular file read piecewise (pread) so that a large
// stored member goes from the file straight into the array's storage.
class ByteSource {
 public:
  explicit ByteSource(const std::string& bytes) : bytes_(&bytes), size_(bytes.size()) {}
  ByteSource(int fd, std::size_t size, const std::string& name) : fd_(fd), size_(size), name_(&name) {}
  std::size_t size() const { return size_; }
  // Bytes [at, at + n) of a file mapped read-only (private, so nothing writes through it), or nullptr for
  // a source in memory or when mmap fails. The file must not shrink while the mapping is in use (the
  // pages past its new end would fault), as with numpy.load(mmap_mode="r").
  std::shared_ptr<const unsigned char> map(std::uint64_t at, std::size_t n) const {
    if (bytes_ || n == 0) return nullptr;
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t base_at = at / page * page, len = at - base_at + n;
    void* base = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd_, static_cast<off_t>(base_at));
    if (base == MAP_FAILED) return nullptr;
    std::shared_ptr<void> mapping(base, [len](void* b) { ::munmap(b, len); });
    return std::shared_ptr<const unsigned char>(mapping, static_cast<const unsigned char*>(base) + (at - base_at));
  }
  // Bytes [at, at + n) into dst; the caller has checked at + n <= size().
  void read(std::uint64_t at, std::size_t n, char* dst) const {
    if (bytes_) {
      std::memcpy(dst, bytes_->data() + at, n);
      return;
    }
    for (std::size_t done = 0; done < n;) {
      const ::ssize_t got = ::pread(fd_, dst + done, n - done, static_cast<off_t>(at + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) throw input_error(*name_, "byte " + std::to_string(at + done), "expected a readable file, got a read error");
      done += static_cast<std::size_t>(got);
    }
  }

 private:
  const std::string* bytes_ = nullptr;
  int fd_ = -1;
  std::size_t size_ = 0;
  const std::string* name_ = nullptr;
};

class ByteReader {
 public:
  ByteReader(const ByteSource& src, const std::string& name) : src_(src), name_(name) {}
  std::uint64_t le(std::uint64_t at, std::size_t size, const char* what) const {
    if (at > src_.size() || src_.size() - at < size)
      throw input_error(name_, "byte " + std::to_string(at), std::string("truncated zip archive (expected ") + what + ")");
    const unsigned char* p = window(at, size);
    std::uint64_t v = 0;
    for (std::size_t k = size; k-- > 0;) v = (v << 8) | p[k];
    return v;
  }
  // Bytes [at, at + n) (in range: checked by the caller).
  std::string str(std::uint64_t at, std::size_t n) const {
    std::string out(n, '\0');
    src_.read(at, n, out.data());
    return out;
  }
  [[noreturn]] void fail(std::uint64_t at, const std::string& what) const {
    throw input_error(name_, "byte " + std::to_string(at), what);
  }
  std::size_t size() const { return src_.size(); }
  const ByteSource& source() const { return src_; }

 private:
  // A cached window of the archive around `at` (the directory walks read a few bytes at a time, forwards
  // and, for the end record, backwards).
  const unsigned char* window(std::uint64_t at, std::size_t size) const {
    constexpr std::uint64_t kHalf = 32768;
    if (at < win_at_ || at + size > win_at_ + win_.size()) {
      win_at_ = at > kHalf ? at - kHalf : 0;
      win_.resize(std::min<std::uint64_t>(2 * kHalf, src_.size() - win_at_));
      src_.read(win_at_, win_.size(), win_.data());
    }
    return reinterpret_cast<const unsigned char*>(win_.data() + (at - win_at_));
  }
  const ByteSource& src_;
  const std::string& name_;
  mutable std::string win_;
  mutable std::uint64_t win_at_ = 0;
};

struct Directory {
  std::uint64_t entries = 0, offset = 0;
};

Directory find_central_directory(const ByteReader& r) {
  if (r.size() == 0) r.fail(0, "expected a zip archive (.npz), got an empty file");
  if (r.size() < 22) r.fail(0, "expected a zip archive (.npz), got " + std::to_string(r.size()) + " bytes");
  // The end record is the last 22 bytes plus a comment of at most 65535 bytes.
  std::size_t lowest = r.size() >= 22 + 65535 ? r.size() - 22 - 65535 : 0;
  std::size_t at = r.size() - 22;
  for (;; --at) {
    if (r.le(at, 4, "end record") == kEndSig && at + 22 + r.le(at + 20, 2, "comment length") == r.size()) break;
    if (at == lowest) r.fail(0, "expected a zip archive (.npz): no end-of-central-directory record found");
  }
  Directory d{r.le(at + 10, 2, "entry count"), r.le(at + 16, 4, "directory offset")};
  if (d.entries == 0xffff || d.offset == 0xffffffff) {
    if (at < 20 || r.le(at - 20, 4, "zip64 locator") != kZip64LocatorSig)
      r.fail(at, "expected a zip64 end-of-central-directory locator");
    std::uint64_t z = r.le(at - 12, 8, "zip64 end record offset");
    if (r.le(z, 4, "zip64 end record") != kZip64EndSig) r.fail(z, "expected a zip64 end-of-central-directory record");
    d.entries = r.le(z + 32, 8, "zip64 entry count");
    d.offset = r.le(z + 48, 8, "zip64 directory offset");
  }
  return d;
}

// A deflated member inflated as it is read (raw deflate, zlib): the compressed bytes are taken from the
// archive in pieces of 1 MiB and the output goes straight into the caller's buffer, so nothing beyond the
// member's declared uncompressed size `usize` is ever produced or held. Reads go front to back
// (npy_read_typed's order); finish() then checks that the stream ends exactly at usize (asking for one
// byte more), so a member that inflates past its declared size is refused as soon as it does.
class MemberInflater {
 public:
  MemberInflater(const ByteReader& r, std::uint64_t data_at, std::uint64_t csize, std::uint64_t usize,
                 const std::string& member)
      : r_(r), data_at_(data_at), csize_(csize), usize_(usize), member_(member) {
    // Deflate expands at most ~1032:1; a larger claimed size is a corrupt header, not a reason to inflate.
    if (usize / 1032 > csize + 1)
      fail("expected an uncompressed size consistent with " + std::to_string(csize) + " compressed bytes, got " +
           std::to_string(usize));
    if (inflateInit2(&zs_, -15) != Z_OK) throw std::runtime_error("zlib inflateInit2 failed");
  }
  ~MemberInflater() { inflateEnd(&zs_); }
  MemberInflater(const MemberInflater&) = delete;
  MemberInflater& operator=(const MemberInflater&) = delete;

  // Bytes [at, at + n) of the member into dst: at is where the previous read ended, at + n <= usize.
  void read(std::size_t at, std::size_t n, char* dst) {
    if (at != out_done_ || n > usize_ - out_done_) throw std::logic_error("MemberInflater: reads must go front to back");
    for (std::size_t done = 0; done < n;) {
      if (ended_) stream_short();
      const std::size_t want = std::min<std::size_t>(n - done, std::size_t(1) << 30);  // zlib counts in 32 bits
      const std::size_t got = step(dst + done, want);
      done += got;
      out_done_ += got;
    }
  }
  // After all usize bytes were read: the deflate stream must end there.
  void finish() {
    char extra = 0;
    while (!ended_)
      if (step(&extra, 1) != 0) fail("expected a valid deflate stream of " + std::to_string(usize_) + " bytes, got more data");
  }

 private:
  // One inflate call into [dst, dst + want): the bytes it produced (0 only when the stream ended).
  std::size_t step(char* dst, std::size_t want) {
    for (;;) {
      if (zs_.avail_in == 0 && in_done_ < csize_) {
        const std::size_t m = static_cast<std::size_t>(std::min<std::uint64_t>(csize_ - in_done_, kInPiece));
        in_.resize(m);
        r_.source().read(data_at_ + in_done_, m, in_.data());
        in_done_ += m;
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(m);
      }
      zs_.next_out = reinterpret_cast<Bytef*>(dst);
      zs_.avail_out = static_cast<uInt>(want);
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      const std::size_t got = want - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
        return got;
      }
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR)
        fail("expected a valid deflate stream of " + std::to_string(usize_) + " bytes, got corrupt data");
      if (got > 0) return got;
      if (zs_.avail_in == 0 && in_done_ == csize_) stream_short();  // no progress and no input left
      if (rc == Z_BUF_ERROR && zs_.avail_in != 0)
        fail("expected a valid deflate stream of " + std::to_string(usize_) + " bytes, got corrupt data");
    }
  }
  [[noreturn]] void stream_short() const {
    fail("expected a valid deflate stream of " + std::to_string(usize_) + " bytes, got " + std::to_string(out_done_) +
         " bytes");
  }
  [[noreturn]] void fail(const std::string& what) const { r_.fail(data_at_, "member '" + member_ + "': " + what); }

  static constexpr std::size_t kInPiece = std::size_t(1) << 20;
  const ByteReader& r_;
  std::uint64_t data_at_, csize_, usize_;
  const std::string& member_;
  z_stream zs_{};
  std::string in_;
  std::uint64_t in_done_ = 0, out_done_ = 0;
  bool ended_ = false;
};

void put_le(std::string& s, std::uint64_t v, int size) {
  for (int k = 0; k < size; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
}

// One member as the central directory and its local header describe it.
struct NpzEntry {
  std::uint64_t at = 0, method = 0, crc = 0, csize = 0, usize = 0, data_at = 0;
  std::string key, shown;
};

// The members of the archive read through `r` (npz_parse_typed's contract; keep_float32 as in
// npy_read_typed; select as in npz_read_typed). The whole directory is walked first, every member's
// name offered to select.want, before any member's data are read.
// Thrown by the header check of npz_members_typed's header-only pass once a member's header is seen.
struct NpzHeaderSeen {};

std::map<std::string, TypedArray> npz_members_typed(const ByteReader& r, const std::string& path, bool keep_float32,
                                                    const NpzSelect& select = {},
                                                    std::vector<NpzMemberHeader>* headers_only = nullptr) {
  Directory dir = find_central_directory(r);
  std::vector<NpzEntry> entries;
  std::set<std::string> keys;
  std::uint64_t at = dir.offset;
  for (std::uint64_t e = 0; e < dir.entries; ++e) {
    if (r.le(at, 4, "central directory entry") != kCentralSig) r.fail(at, "expected a central directory entry");
    std::uint64_t flags = r.le(at + 8, 2, "flags"), method = r.le(at + 10, 2, "method");
    std::uint64_t crc = r.le(at + 16, 4, "CRC-32");
    std::uint64_t csize = r.le(at + 20, 4, "size"), usize = r.le(at + 24, 4, "size");
    std::uint64_t nlen = r.le(at + 28, 2, "name length"), xlen = r.le(at + 30, 2, "extra length");
    std::uint64_t clen = r.le(at + 32, 2, "comment length"), local = r.le(at + 42, 4, "local offset");
    if (at + 46 + nlen > r.size()) r.fail(at, "truncated zip archive (expected a member name)");
    std::string member = r.str(at + 46, nlen);
    std::string shown = detail::printable_excerpt(member, 80);  // for messages
    // zip64 extended information: present fields replace the 0xffffffff placeholders, in this order.
    for (std::uint64_t x = at + 46 + nlen; x + 4 <= at + 46 + nlen + xlen;) {
      std::uint64_t id = r.le(x, 2, "extra id"), len = r.le(x + 2, 2, "extra length");
      if (id == 0x0001) {
        std::uint64_t f = x + 4;
        if (usize == 0xffffffff) { usize = r.le(f, 8, "zip64 size"); f += 8; }
        if (csize == 0xffffffff) { csize = r.le(f, 8, "zip64 size"); f += 8; }
        if (local == 0xffffffff) { local = r.le(f, 8, "zip64 offset"); f += 8; }
      }
      x += 4 + len;
    }
    if (flags & 1) r.fail(at, "member '" + shown + "': expected an unencrypted member, got an encrypted one");
    if (method != 0 && method != 8)
      r.fail(at, "member '" + shown + "': expected compression method 0 (stored) or 8 (deflate), got " +
                     std::to_string(method));
    if (r.le(local, 4, "local header") != kLocalSig) r.fail(local, "member '" + shown + "': expected a local file header");
    // The local header repeats the CRC and sizes (unless bit 3 defers them to a data descriptor; zip64
    // writers such as numpy.savez put 0xffffffff there): when it states them, they must agree.
    if (!(flags & 8)) {
      const std::uint64_t lcrc = r.le(local + 14, 4, "CRC-32"), lcsize = r.le(local + 18, 4, "size"),
                          lusize = r.le(local + 22, 4, "size");
      if (lcrc != crc || (lcsize != 0xffffffff && lcsize != csize) || (lusize != 0xffffffff && lusize != usize))
        r.fail(local, "member '" + shown + "': expected the local header's CRC-32 and sizes to match the central "
                      "directory's (" + std::to_string(crc) + ", " + std::to_string(csize) + ", " + std::to_string(usize) +
                      "), got " + std::to_string(lcrc) + ", " + std::to_string(lcsize) + ", " + std::to_string(lusize));
    }
    std::uint64_t data_at = local + 30 + r.le(local + 26, 2, "name length") + r.le(local + 28, 2, "extra length");
    if (data_at > r.size() || r.size() - data_at < csize)
      r.fail(data_at, "member '" + shown + "': truncated data (expected " + std::to_string(csize) + " bytes, got " +
                          std::to_string(data_at > r.size() ? 0 : r.size() - data_at) + ")");
    std::string key = member;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    if (!keys.insert(key).second) r.fail(at, "expected distinct member names, got '" + shown + "' twice");
    entries.push_back({at, method, crc, csize, usize, data_at, std::move(key), std::move(shown)});
    at += 46 + nlen + xlen + clen;
  }
  // Which members are read: decided from the names alone, before any member's data.
  std::vector<char> wanted(entries.size(), 1);
  if (select.want)
    for (std::size_t i = 0; i < entries.size(); ++i) wanted[i] = select.want(entries[i].key) ? 1 : 0;
  std::map<std::string, TypedArray> out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!wanted[i]) continue;
    const NpzEntry& m = entries[i];
    const std::string& key = m.key;
    const std::string& shown = m.shown;
    const std::uint64_t data_at = m.data_at, csize = m.csize, usize = m.usize;
    const std::string npy_name = path + ": member " + shown;
    auto crc_check = [&](std::uint32_t actual) {
      if (actual != m.crc) r.fail(data_at, "member '" + shown + "': expected CRC-32 " + std::to_string(m.crc) + ", got " + std::to_string(actual));
    };
    NpyHeaderCheck header_check;
    if (headers_only)
      header_check = [&](const std::vector<std::size_t>& shape, char kind, std::size_t itemsize) {
        headers_only->push_back({key, shape, kind, itemsize});
        throw NpzHeaderSeen{};
      };
    else if (select.header)
      header_check = [&](const std::vector<std::size_t>& shape, char kind, std::size_t) { select.header(key, shape, kind); };
    try {
      if (m.method == 0) {
        // Stored: the .npy is read piecewise from the archive, straight into the array (its CRC on the way).
        if (csize != usize)  // refused without reading the member
          r.fail(m.at, "member '" + shown + "': expected equal sizes for a stored member, got " + std::to_string(csize) +
                           " stored and " + std::to_string(usize) + " declared");
        const ByteSource& src = r.source();
        out.emplace(key, npy_read_typed(
                             csize, [&](std::size_t off, std::size_t n, char* dst) { src.read(data_at + off, n, dst); },
                             npy_name, keep_float32, crc_check,
                             [&](std::size_t off, std::size_t n) { return src.map(data_at + off, n); },
                             /*crc_before_header_errors=*/true, header_check));
      } else {
        // Deflated: inflated as read, bounded by the declared size. The .npy header comes first and must
        // declare exactly that size (checked before anything past the header is inflated); the stream must
        // end there, and the CRC is checked before the values.
        if (usize > std::numeric_limits<std::size_t>::max()) r.fail(m.at, "member '" + shown + "': expected an addressable size");
        MemberInflater inflater(r, data_at, csize, usize, shown);
        out.emplace(key, npy_read_typed(
                             static_cast<std::size_t>(usize),
                             [&](std::size_t off, std::size_t n, char* dst) { inflater.read(off, n, dst); }, npy_name,
                             keep_float32,
                             [&](std::uint32_t actual) {
                               inflater.finish();
                               crc_check(actual);
                             },
                             {}, /*crc_before_header_errors=*/false, header_check));
      }
    } catch (const NpzHeaderSeen&) {  // the header-only pass: on to the next member
    }
  }
  return out;
}

}  // namespace

std::map<std::string, NdArray> npz_read(const std::string& path) {
  std::map<std::string, NdArray> out;
  for (auto& [key, a] : npz_read_typed(path)) out.emplace(key, ndarray_from_typed(a));
  return out;
}

namespace {
// `f` applied to a ByteReader over the file at `path`: a regular file read piecewise, anything else (a
// pipe) through file_read_all's bounded read.
template <class F>
auto npz_with_reader(const std::string& path, F f) {
  struct stat st {};
  const int fd = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) {
    const std::string bytes = file_read_all(path);
    ByteSource src(bytes);
    return f(ByteReader(src, path));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string bytes = file_read_all(path);
    ByteSource src(bytes);
    return f(ByteReader(src, path));
  }
  ByteSource src(fd, static_cast<std::size_t>(st.st_size), path);
  return f(ByteReader(src, path));
}
}  // namespace

std::map<std::string, TypedArray> npz_read_typed(const std::string& path, bool keep_float32, const NpzSelect& select) {
  return npz_with_reader(path, [&](const ByteReader& r) { return npz_members_typed(r, path, keep_float32, select); });
}

std::vector<NpzMemberHeader> npz_read_headers(const std::string& path) { return npz_read_headers(path, NpzSelect{}); }

std::vector<NpzMemberHeader> npz_read_headers(const std::string& path, const NpzSelect& select) {
  return npz_with_reader(path, [&](const ByteReader& r) {
    std::vector<NpzMemberHeader> out;
    npz_members_typed(r, path, false, NpzSelect{select.want, {}}, &out);
    return out;
  });
}

std::map<std::string, NdArray> npz_parse(const std::string& bytes, const std::string& path) {
  std::map<std::string, NdArray> out;
  for (auto& [key, a] : npz_parse_typed(bytes, path)) out.emplace(key, ndarray_from_typed(a));
  return out;
}

std::map<std::string, TypedArray> npz_parse_typed(const std::string& bytes, const std::string& path) {
  ByteSource src(bytes);
  return npz_members_typed(ByteReader(src, path), path, false);
}

void npz_write_float64(const std::string& path,
                       const std::map<std::string, std::pair<std::vector<std::size_t>, std::vector<double>>>& arrays) {
  std::map<std::string, std::string> members;
  for (const auto& [key, arr] : arrays) members[key] = npy_bytes_float64(arr.first, arr.second);
  npz_write_members(path, members);
}

void npz_write_members(const std::string& path, const std::map<std::string, std::string>& members) {
  const auto& arrays = members;
  std::string zip, central;
  for (const auto& [key, content] : arrays) {
    std::string name = key + ".npy";
    std::uint64_t crc = crc32_of(0, reinterpret_cast<const unsigned char*>(content.data()), content.size());
    std::uint64_t offset = zip.size();
    if (offset >= 0xffffffffULL || content.size() >= 0xffffffffULL)
      throw std::length_error("npz_write_float64: archives above 4 GiB are not supported");
    // Local header: version 20, no flags, stored, DOS time 0 / date 1980-01-01.
    put_le(zip, kLocalSig, 4); put_le(zip, 20, 2); put_le(zip, 0, 2); put_le(zip, 0, 2);
    put_le(zip, 0, 2); put_le(zip, 0x21, 2); put_le(zip, crc, 4);
    put_le(zip, content.size(), 4); put_le(zip, content.size(), 4);
    put_le(zip, name.size(), 2); put_le(zip, 0, 2);
    zip += name;
    zip += content;
    put_le(central, kCentralSig, 4); put_le(central, 20, 2); put_le(central, 20, 2); put_le(central, 0, 2);
    put_le(central, 0, 2); put_le(central, 0, 2); put_le(central, 0x21, 2); put_le(central, crc, 4);
    put_le(central, content.size(), 4); put_le(central, content.size(), 4);
    put_le(central, name.size(), 2); put_le(central, 0, 2); put_le(central, 0, 2);
    put_le(central, 0, 2); put_le(central, 0, 2); put_le(central, 0, 4); put_le(central, offset, 4);
    central += name;
  }
  std::uint64_t cd_offset = zip.size();
  zip += central;
  put_le(zip, kEndSig, 4); put_le(zip, 0, 2); put_le(zip, 0, 2);
  put_le(zip, arrays.size(), 2); put_le(zip, arrays.size(), 2);
  put_le(zip, central.size(), 4); put_le(zip, cd_offset, 4); put_le(zip, 0, 2);
  file_write_atomic(path, zip);
}

void npz_write_float64_stream(const std::string& path, std::vector<NpzFloat64Stream> members) {
  std::vector<NpzStream> out;
  out.reserve(members.size());
  for (NpzFloat64Stream& m : members) {
    auto fill = std::make_shared<decltype(m.fill)>(std::move(m.fill));
    out.push_back({std::move(m.name), std::move(m.shape), "<f8", [fill](const auto& put) {
                     std::string piece;
                     (*fill)([&](const double* v, std::size_t n) {
                       piece.resize(8 * n);
                       for (std::size_t i = 0; i < n; ++i) {
                         const std::uint64_t bits = std::bit_cast<std::uint64_t>(v[i]);
                         for (int b = 0; b < 8; ++b)
                           piece[8 * i + static_cast<std::size_t>(b)] = static_cast<char>((bits >> (8 * b)) & 0xff);
                       }
                       put(piece.data(), n);
                     });
                   }});
  }
  npz_write_stream(path, std::move(out));
}

void npz_write_stream(const std::string& path, std::vector<NpzStream> members) {
  // npz_write_float64's archive: members in name order, local header, .npy bytes, central directory.
  for (const NpzStream& m : members)
    if (m.descr.size() != 3 || m.descr[0] != '<' || std::string("fiu").find(m.descr[1]) == std::string::npos ||
        std::string("1248").find(m.descr[2]) == std::string::npos)
      throw std::logic_error("npz_write_stream: expected a little-endian dtype such as <f8, got " + m.descr);
  std::sort(members.begin(), members.end(), [](const NpzStream& a, const NpzStream& b) { return a.name < b.name; });
  // The archive is patched in place (CRCs after the data), so it needs a file, not a device or pipe.
  if (output_is_stream(path)) throw input_error(path, "", "expected a file to write the .npz archive to, got a device or pipe");
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(errno));
  struct Guard {  // closes and removes the temporary file unless it was renamed into place
    int fd;
    std::string name;
    bool done = false;
    ~Guard() {
      if (done) return;
      if (fd >= 0) ::close(fd);
      ::unlink(name.c_str());
    }
  } guard{fd, tmpl};
  auto fail = [&](int err) {
    throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(err));
  };
  std::string buf;
  std::uint64_t pos = 0;  // bytes of the archive so far (written or in buf)
  auto flush = [&]() {
    const char* p = buf.data();
    std::size_t left = buf.size();
    while (left > 0) {
      const ssize_t w = ::write(fd, p, left);
      if (w < 0) {
        if (errno == EINTR) continue;
        fail(errno);
      }
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    buf.clear();
  };
  constexpr std::size_t kBuf = std::size_t(1) << 20;
  auto emit = [&](const char* p, std::size_t n) {
    buf.append(p, n);
    pos += n;
    if (buf.size() >= kBuf) flush();
  };
  std::string central, head;
  for (const NpzStream& m : members) {
    const std::string name = m.name + ".npy";
    std::string npy = npy_header_float64(m.shape);
    npy.replace(npy.find("'<f8'") + 1, 3, m.descr);  // the same length: the header's padding is unchanged
    const std::uint64_t itemsize = static_cast<std::uint64_t>(m.descr[2] - '0');
    std::uint64_t count = 1;
    for (std::size_t s : m.shape) count *= s;
    const std::uint64_t size = npy.size() + itemsize * count, offset = pos;
    if (offset >= 0xffffffffULL || size >= 0xffffffffULL)
      throw std::length_error("npz_write_float64: archives above 4 GiB are not supported");
    head.clear();
    put_le(head, kLocalSig, 4); put_le(head, 20, 2); put_le(head, 0, 2); put_le(head, 0, 2);
    put_le(head, 0, 2); put_le(head, 0x21, 2); put_le(head, 0, 4);  // CRC-32: filled in below
    put_le(head, size, 4); put_le(head, size, 4);
    put_le(head, name.size(), 2); put_le(head, 0, 2);
    head += name;
    emit(head.data(), head.size());
    uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(npy.data()), static_cast<uInt>(npy.size()));
    emit(npy.data(), npy.size());
    std::uint64_t got = 0;
    m.fill([&](const char* bytes, std::size_t n) {
      if (n > count - got) throw std::logic_error("npz_write_stream: more values than the shape holds");
      got += n;
      const std::size_t len = static_cast<std::size_t>(itemsize) * n;
      crc = static_cast<uLong>(crc32_of(static_cast<std::uint32_t>(crc), reinterpret_cast<const unsigned char*>(bytes), len));
      emit(bytes, len);
    });
    if (got != count) throw std::logic_error("npz_write_stream: fewer values than the shape holds");
    flush();
    std::string c4;
    put_le(c4, crc, 4);
    if (::pwrite(fd, c4.data(), 4, static_cast<off_t>(offset + 14)) != 4) fail(errno);
    put_le(central, kCentralSig, 4); put_le(central, 20, 2); put_le(central, 20, 2); put_le(central, 0, 2);
    put_le(central, 0, 2); put_le(central, 0, 2); put_le(central, 0x21, 2); put_le(central, crc, 4);
    put_le(central, size, 4); put_le(central, size, 4);
    put_le(central, name.size(), 2); put_le(central, 0, 2); put_le(central, 0, 2);
    put_le(central, 0, 2); put_le(central, 0, 2); put_le(central, 0, 4); put_le(central, offset, 4);
    central += name;
  }
  const std::uint64_t cd_offset = pos;
  if (cd_offset >= 0xffffffffULL) throw std::length_error("npz_write_float64: archives above 4 GiB are not supported");
  emit(central.data(), central.size());
  head.clear();
  put_le(head, kEndSig, 4); put_le(head, 0, 2); put_le(head, 0, 2);
  put_le(head, members.size(), 2); put_le(head, members.size(), 2);
  put_le(head, central.size(), 4); put_le(head, cd_offset, 4); put_le(head, 0, 2);
  emit(head.data(), head.size());
  flush();
  // mkstemp creates 0600; give the file the usual permissions (0666 minus the umask), as file_write_atomic.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0) fail(errno);
  guard.fd = -1;
  if (::close(fd) != 0) fail(errno);
  if (::rename(tmpl.c_str(), path.c_str()) != 0) fail(errno);
  guard.done = true;
}

}  // namespace memcert
