// The kind of a file from its first bytes (file_kind.hpp).
#include "memcert/data/file_kind.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"
#include "printable.hpp"

namespace memcert {

FileKind file_kind_sniff(const std::string& path) {
  // Regular files only: reading ahead from a pipe or a device would take bytes its reader needs.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return FileKind::unknown;
  std::ifstream f(path, std::ios::binary);
  if (!f) return FileKind::unknown;
  char head[512] = {};
  f.read(head, sizeof head);
  const std::size_t got = static_cast<std::size_t>(f.gcount());
  if (got >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0) return FileKind::npy;
  if (got >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0) {
    // torch.save's archive starts with "<name>/data.pkl"; its first member's name is in the local header.
    if (got >= 30) {
      const std::size_t len = static_cast<unsigned char>(head[26]) | (static_cast<unsigned char>(head[27]) << 8);
      const std::string name(head + 30, std::min(len, got - 30));
      if (name.size() >= 8 && name.compare(name.size() - 8, 8, "data.pkl") == 0) return FileKind::torch;
    }
    return FileKind::npz;
  }
  if (got >= 2 && static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5) return FileKind::torch;
  if (got >= 9) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[i]);
    if (head[8] == '{' && n >= 2 && n <= (std::uint64_t(100) << 20)) return FileKind::safetensors;
  }
  for (std::size_t i = 0; i < got; ++i) {
    const char c = head[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[' ? FileKind::json : FileKind::unknown;
  }
  return FileKind::unknown;
}

std::string file_kind_text(FileKind k) {
  switch (k) {
    case FileKind::json: return "a JSON file";
    case FileKind::npy: return "a .npy array";
    case FileKind::npz: return "an .npz archive";
    case FileKind::torch: return "a PyTorch checkpoint";
    case FileKind::safetensors: return "a safetensors file";
    case FileKind::unknown: break;
  }
  return "";
}

void expect_data_set_file(const std::string& path, const std::string& keys) {
  const FileKind k = file_kind_sniff(path);
  const std::string expected = "a data set (.json or .npz with " + keys + ") was expected";
  if (k == FileKind::npy) {
    std::string call;  // numpy.savez(FILE.npz, contexts=..., queries=...)
    for (std::size_t at = 0, next; at < keys.size(); at = next + 2) {
      next = std::min(keys.find(", ", at), keys.size());
      call += (call.empty() ? "" : ", ") + keys.substr(at, next - at) + "=...";
    }
    throw input_error(path, "", "a .npy array where " + expected + " (save the arrays together: numpy.savez(FILE.npz, " +
                                    call + "))");
  }
  if (k == FileKind::torch || k == FileKind::safetensors)
    throw input_error(path, "", file_kind_text(k) + " where " + expected + ": a trained model is checked by `memcert certify`");
  const std::string ext = path_extension_lower(path);
  if (k == FileKind::json && ext == ".npz")
    throw input_error(path, "", "a JSON file named .npz: expected a zip archive of arrays (numpy.savez) for .npz, or "
                                "rename it to .json");
  if (k == FileKind::npz && ext != ".npz")
    throw input_error(path, "", "an .npz archive named '" + ext + "': data sets are read by their suffix; name it .npz");
}

void expect_certificate_file(const std::string& path) {
  const FileKind k = file_kind_sniff(path);
  if (k == FileKind::npy || k == FileKind::npz || k == FileKind::torch || k == FileKind::safetensors)
    throw input_error(path, "", file_kind_text(k) + ", not a certificate (JSON): `memcert verify` takes the certificate "
                                "a command wrote (construct ... --out CERT, rank/kruskal --cert CERT)" +
                                    (k == FileKind::torch || k == FileKind::safetensors
                                         ? std::string("; a trained model is checked by `memcert certify`")
                                         : std::string()));
}

std::string npz_members_text(const std::vector<std::string>& names) {
  if (names.empty()) return "it has no arrays";
  std::string s = "it has ";
  for (std::size_t i = 0; i < names.size() && i < 12; ++i)
    s += (i ? ", '" : "'") + detail::printable_excerpt(names[i], 40) + "'";
  if (names.size() > 12) s += ", ... (" + std::to_string(names.size()) + " arrays)";
  return s;
}

}  // namespace memcert
