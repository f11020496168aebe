// Whole-file reading and atomic writing (temp file in the same directory + rename), with one-line
// InputErrors naming the path.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "memcert/data/matrix_io.hpp"

namespace memcert {

namespace {
// The largest input file read (2 GiB): reading is chunked and stops here, so an endless stream such as
// /dev/zero ends with an InputError instead of exhausting memory.
constexpr std::size_t kMaxInputFileBytes = std::size_t{1} << 31;

// Appends the rest of `in` to `out` in chunks, stopping with an InputError past kMaxInputFileBytes.
std::string read_bounded(std::ifstream& in, const std::string& path, std::string out) {
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    if (out.size() + got > kMaxInputFileBytes)
      throw input_error(path, "byte " + std::to_string(kMaxInputFileBytes),
                        "expected a file of at most " + std::to_string(kMaxInputFileBytes) + " bytes");
    out.append(buf.data(), got);
  }
  if (in.bad()) throw input_error(path, "", "expected a readable file, got a read error");
  return out;
}
// A pipe (FIFO): opened without blocking, so a FIFO nobody writes to reads as empty instead of hanging at
// open(); then read in blocking chunks up to kMaxInputFileBytes.
std::string read_pipe_bounded(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw input_error(path, "", std::string("expected a readable file, got ") + std::strerror(errno));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // a connected writer is waited for
  std::string out;
  std::vector<char> buf(1 << 16);
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) break;  // no writer ever connected: empty
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      throw input_error(path, "", std::string("expected a readable file, got ") + std::strerror(err));
    }
    if (got == 0) break;
    if (out.size() + static_cast<std::size_t>(got) > kMaxInputFileBytes) {
      ::close(fd);
      throw input_error(path, "byte " + std::to_string(kMaxInputFileBytes),
                        "expected a file of at most " + std::to_string(kMaxInputFileBytes) + " bytes");
    }
    out.append(buf.data(), static_cast<std::size_t>(got));
  }
  ::close(fd);
  return out;
}
}  // namespace

std::string path_extension_lower(const std::string& path) {
  std::size_t slash = path.find_last_of('/'), dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

std::string file_read_all(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw input_error(path, "", std::string("expected a readable file, got ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw input_error(path, "", "expected a readable file, got a directory");
  // A device (/dev/zero, /dev/urandom) is no data file: refused at once rather than read to the 2 GiB limit.
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
    throw input_error(path, "", "expected a regular file or a pipe, got a device or socket");
  if (S_ISFIFO(st.st_mode)) return read_pipe_bounded(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, "", std::string("expected a readable file, got ") + std::strerror(errno));
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) <= kMaxInputFileBytes) {
    // One allocation of the final size (a stream copy would hold it 2-3 times).
    std::string out(static_cast<std::size_t>(st.st_size), '\0');
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    if (in.bad() || in.gcount() != static_cast<std::streamsize>(out.size()))
      throw input_error(path, "", "expected a readable file, got a read error");
    if (in.peek() == std::char_traits<char>::eof()) return out;
    in.clear();  // the file grew while being read: the rest goes through the bounded loop below
    return read_bounded(in, path, std::move(out));
  }
  // Chunked and bounded: a device or pipe (/dev/zero), or a file over the limit, ends with an error.
  std::string out = read_bounded(in, path, std::string());
  return out;
}

bool output_is_stream(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;  // absent (or unreachable: the write will say why)
  if (S_ISREG(st.st_mode)) return false;
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return true;
  throw input_error(path, "", std::string("expected a file to write, got a ") + (S_ISDIR(st.st_mode) ? "directory" : "socket or block device"));
}

namespace {
void write_all(int fd, const std::string& path, const std::string& contents) {
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(err));
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}
}  // namespace

void file_write_atomic(const std::string& path, const std::string& contents) {
  if (output_is_stream(path)) {  // a device or pipe: nothing to replace, nothing half-written to leave
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(errno));
    write_all(fd, path, contents);
    ::close(fd);
    return;
  }
  std::string tmpl = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(errno));
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(err));
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  // mkstemp creates 0600; give the file the usual permissions (0666 minus the umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  int synced = ::fsync(fd), sync_err = errno;
  int closed = ::close(fd), close_err = errno;
  if (synced != 0 || closed != 0) {
    int err = synced != 0 ? sync_err : close_err;
    ::unlink(tmpl.c_str());
    throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(err));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw input_error(path, "", std::string("expected a writable path, got ") + std::strerror(err));
  }
}

}  // namespace memcert
