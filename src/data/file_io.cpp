// Whole-file reading and atomic writing (temp file in the same directory + rename), with one-line
// InputErrors naming the path.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "memcert/data/matrix_io.hpp"

namespace memcert {

std::string file_read_all(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw input_error(path, "", std::string("expected a readable file, got ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw input_error(path, "", "expected a readable file, got a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, "", std::string("expected a readable file, got ") + std::strerror(errno));
  if (S_ISREG(st.st_mode)) {  // one allocation of the final size (a stream copy would hold it 2-3 times)
    std::string out(static_cast<std::size_t>(st.st_size), '\0');
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    if (in.bad() || in.gcount() != static_cast<std::streamsize>(out.size()))
      throw input_error(path, "", "expected a readable file, got a read error");
    if (in.peek() == std::char_traits<char>::eof()) return out;
    in.clear();  // the file grew while being read: take the rest too
    std::ostringstream rest;
    rest << in.rdbuf();
    return out + rest.str();
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw input_error(path, "", "expected a readable file, got a read error");
  return ss.str();
}

void file_write_atomic(const std::string& path, const std::string& contents) {
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
