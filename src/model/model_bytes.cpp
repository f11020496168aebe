// Positional reads of a model file (model_bytes.hpp).
#include "model_bytes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

namespace memcert::detail {

ModelBytes ModelBytes::open(const std::string& path) {
  ModelBytes m;
  m.name_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw input_error(path, "", std::string("expected a readable file, got ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    m.fd_ = fd;
    m.size_ = static_cast<std::uint64_t>(st.st_size);
    return m;
  }
  ::close(fd);
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw input_error(path, "", "expected a file, got a directory");
  m.owned_ = std::make_unique<std::string>(file_read_all(path));  // bounded (file_io.cpp)
  m.bytes_ = m.owned_.get();
  m.size_ = m.bytes_->size();
  return m;
}

ModelBytes::ModelBytes(const std::string& bytes, std::string name)
    : bytes_(&bytes), size_(bytes.size()), name_(std::move(name)) {}

ModelBytes::ModelBytes(ModelBytes&& o) noexcept { *this = std::move(o); }

ModelBytes& ModelBytes::operator=(ModelBytes&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    bytes_ = std::exchange(o.bytes_, nullptr);
    owned_ = std::move(o.owned_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = std::exchange(o.size_, 0);
    name_ = std::move(o.name_);
  }
  return *this;
}

ModelBytes::~ModelBytes() {
  if (fd_ >= 0) ::close(fd_);
}

void ModelBytes::read(std::uint64_t at, std::size_t n, void* dst, const char* what) const {
  if (at > size_ || size_ - at < n)
    throw input_error(name_, "byte " + std::to_string(at),
                      std::string("expected ") + what + " (" + std::to_string(n) + " bytes), got the end of the file");
  char* out = static_cast<char*>(dst);
  if (bytes_) {
    if (n) std::memcpy(out, bytes_->data() + at, n);
    return;
  }
  for (std::size_t done = 0; done < n;) {
    const ::ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(at + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw input_error(name_, "byte " + std::to_string(at + done), "expected a readable file, got a read error");
    done += static_cast<std::size_t>(got);
  }
}

std::string ModelBytes::read_string(std::uint64_t at, std::size_t n, const char* what) const {
  if (at > size_ || size_ - at < n) read(at, n, nullptr, what);  // throws before allocating
  std::string s(n, '\0');
  read(at, n, s.data(), what);
  return s;
}

std::uint64_t ModelBytes::le(std::uint64_t at, std::size_t width, const char* what) const {
  unsigned char b[8] = {};
  read(at, width, b, what);
  std::uint64_t v = 0;
  for (std::size_t k = width; k-- > 0;) v = (v << 8) | b[k];
  return v;
}

}  // namespace memcert::detail
