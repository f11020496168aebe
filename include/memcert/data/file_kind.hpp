#pragma once
// What kind of file a path holds, from its first bytes, so a reader handed the wrong kind of file (an
// array where a data set was expected, a model where a certificate was) says what it found and what to
// do instead of failing on the first byte it cannot parse.
#include <string>
#include <vector>

namespace memcert {

enum class FileKind {
  unknown,      // unreadable, empty, or none of the below (text, a matrix .txt, ...)
  json,         // first non-blank byte '{' or '['
  npy,          // "\x93NUMPY"
  npz,          // a zip archive that is not a PyTorch checkpoint
  torch,        // a zip archive written by torch.save (a member ".../data.pkl"), or a legacy pickle
  safetensors,  // 8-byte header length, then '{'
};

FileKind file_kind_sniff(const std::string& path);
// "a .npy array", "an .npz archive", "a PyTorch checkpoint", "a safetensors file", "a JSON file", "".
std::string file_kind_text(FileKind k);

// Readers of data sets: InputError "PATH: a .npy array where a data set (.json or .npz with KEYS) was
// expected (...what to do)" when PATH is an array, a model file, or (for JSON data sets named .npz and the
// like) of a kind the reader cannot take. `keys` names the data set's arrays, e.g. "contexts, queries".
// Files the sniff does not recognise are left to the reader (its own message names the position).
void expect_data_set_file(const std::string& path, const std::string& keys);

// `verify`: InputError "PATH: an .npz archive, not a certificate (JSON) ..." for an array, archive or
// model file.
void expect_certificate_file(const std::string& path);

// What an .npz lacking a member holds, for its message: "it has 'E', 'labels'" or "it has no arrays"
// (names escaped and cut, at most 12 named).
std::string npz_members_text(const std::vector<std::string>& names);
template <class Map>
std::string npz_members_text(const Map& arrays) {
  std::vector<std::string> names;
  for (const auto& kv : arrays) names.push_back(kv.first);
  return npz_members_text(names);
}

}  // namespace memcert
