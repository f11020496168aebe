#pragma once
// Reading and writing exact matrices and n-d arrays (docs/CLI.md "Files"). float64/float32 input is
// taken EXACTLY as the dyadic rational it stores. Every malformed input throws InputError with one
// line naming the file, the position and what was expected.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "memcert/data/float32_array.hpp"
#include "memcert/linalg/matrix.hpp"
#include "memcert/linalg/typed_matrix.hpp"
#include "memcert/util/error.hpp"

namespace memcert {

// An n-d array of exact numbers, row-major (C order).
struct NdArray {
  std::vector<std::size_t> shape;
  std::vector<Rational> data;
  bool integral = false;  // stored as an integer dtype (or every JSON value integral)
};

// An n-d array in typed exact storage (typed_matrix.hpp): int64 for bool and integer dtypes (uint64 values
// above 2^63 - 1 make the whole array rational), float64 for float16/float32/float64 (exact widening).
struct TypedArray {
  std::vector<std::size_t> shape;
  Storage storage = Storage::int64;
  std::vector<std::int64_t> i64;
  std::vector<double> f64;
  // float32 data kept as float32 (half the memory of f64) when the reader was asked to (keep_float32);
  // storage is float64 then, with f64 empty.
  Float32Array f32;
  std::vector<Rational> q;
  // The stored float dtype's width (2, 4 or 8 bytes; 8 for integer dtypes), as TypedMatrix's.
  unsigned stored_float_bytes = 8;
  std::size_t count() const;
};
NdArray ndarray_from_typed(const TypedArray& a);

// .npy bytes -> array: format versions 1-3; float64/float32/float16, int64/int32/int16/int8,
// uint64/uint32/uint16/uint8 and bool, little or big endian, C or Fortran order. `name` prefixes error
// messages ("x.npy: byte 80: ..."). Trailing bytes after the data, NaN and infinities are bad input.
TypedArray npy_parse_typed(const std::string& bytes, const std::string& name);
// Reads `n` bytes at offset `at` of a member into dst (at + n never exceeds the member's size).
using NpyByteReader = std::function<void(std::size_t at, std::size_t n, char* dst)>;
// npy_parse_typed's contract for a member of `size` bytes read piecewise through `read`: the data go
// straight into the array's storage (no copy of the member is held in memory). keep_float32: float32 data
// in the common layout (little-endian, C order) stay float32 (TypedArray::f32). crc_check, when given,
// receives the CRC-32 of all `size` bytes before any error about the values or the header is raised, so
// a corrupt member is reported as such (crc_check throws) rather than by what its corrupt bytes say.
// The `n` bytes at offset `at` of a member, read-only and in place (a file mapping kept alive by the
// pointer), or nullptr when they cannot be mapped (the reader then reads them).
using NpyByteMapper = std::function<std::shared_ptr<const unsigned char>(std::size_t at, std::size_t n)>;
// map, when given, lets a large float32 array kept as float32 be read in place (TypedArray::f32 then
// refers to the mapping; its CRC and values are checked in one parallel pass). crc_before_header_errors
// false: an error in the header (its own, or a size that disagrees with `size`) is raised at once, without
// reading the rest of the member for its CRC (a deflated member: its rest is not inflated).
// header_check, when given, sees the shape, the dtype kind ('f' float, 'i' signed, 'u' unsigned, 'b'
// bool) and the bytes per element once the header is read and agrees with `size`, before any value is
// read; it throws to refuse.
using NpyHeaderCheck = std::function<void(const std::vector<std::size_t>& shape, char kind, std::size_t itemsize)>;
TypedArray npy_read_typed(std::size_t size, const NpyByteReader& read, const std::string& name, bool keep_float32,
                          const std::function<void(std::uint32_t)>& crc_check, const NpyByteMapper& map = {},
                          bool crc_before_header_errors = true, const NpyHeaderCheck& header_check = {});
// zlib's CRC-32 of the n bytes at p, continuing `crc` (0 to start): in pieces of at most max_piece bytes
// (zlib counts lengths in 32 bits), each piece's CRC computed alone (in parallel for large n) and joined by
// crc32_combine. `piece`, when given, computes one piece's CRC-32 from 0 in place of zlib (tests).
std::uint32_t crc32_of(std::uint32_t crc, const unsigned char* p, std::size_t n,
                       std::size_t max_piece = std::size_t(1) << 30,
                       const std::function<std::uint32_t(const unsigned char*, std::size_t)>& piece = {});
// npy_parse_typed(file_read_all(path), path), with the same results and errors; a large regular file is
// read piecewise straight into the typed vector instead of through a copy of the whole file.
TypedArray npy_read_typed(const std::string& path);
NdArray npy_parse(const std::string& bytes, const std::string& name);
NdArray npy_read(const std::string& path);
// .npz (stored or deflated zip members) -> name (without ".npy") -> array.
// From a regular file, members are read piecewise (npy_read_typed: stored members never held twice);
// keep_float32 as in npy_read_typed.
// select: which members to read. want(key) is called for every member, in the archive's order, before
// any member's data are read: false skips the member (never read, never inflated), and it throws to
// refuse the file. header(key, shape, kind), for each member read, sees its .npy header (as
// NpyHeaderCheck) before its values are read or inflated.
struct NpzSelect {
  std::function<bool(const std::string& key)> want;
  std::function<void(const std::string& key, const std::vector<std::size_t>& shape, char kind)> header;
};
std::map<std::string, TypedArray> npz_read_typed(const std::string& path, bool keep_float32 = false,
                                                 const NpzSelect& select = {});
// Every member's .npy header (key, shape, dtype kind and bytes per element), in the archive's order, from
// the directory and each member's header bytes alone (a deflated member: only its header is inflated).
struct NpzMemberHeader {
  std::string key;
  std::vector<std::size_t> shape;
  char kind = 'f';
  std::size_t itemsize = 8;
};
std::vector<NpzMemberHeader> npz_read_headers(const std::string& path);
// The headers of the members select.want takes (select.header unused): the others are skipped unread.
std::vector<NpzMemberHeader> npz_read_headers(const std::string& path, const NpzSelect& select);
std::map<std::string, TypedArray> npz_parse_typed(const std::string& bytes, const std::string& name);
std::map<std::string, NdArray> npz_read(const std::string& path);
std::map<std::string, NdArray> npz_parse(const std::string& bytes, const std::string& name);
// float64 .npy writing (values rounded to nearest double: for generated float data only).
std::string npy_bytes_float64(const std::vector<std::size_t>& shape, const std::vector<double>& data);
void npz_write_float64(const std::string& path,
                       const std::map<std::string, std::pair<std::vector<std::size_t>, std::vector<double>>>& arrays);
// The header of a float64 .npy of this shape (npy_bytes_float64 = this header + the values' bytes).
std::string npy_header_float64(const std::vector<std::size_t>& shape);
// A float64 member of npz_write_float64_stream: `fill` hands over the values in order (row-major), in
// pieces, through put(values, count); the counts must add up to the shape's product.
struct NpzFloat64Stream {
  std::string name;  // without ".npy"
  std::vector<std::size_t> shape;
  std::function<void(const std::function<void(const double*, std::size_t)>& put)> fill;
};
// The bytes of npz_write_float64 for the same arrays, written as the values come (the archive is never
// held in memory; CRCs filled in after each member), atomically (a temporary file renamed; removed on
// any error, including one thrown by `fill`).
void npz_write_float64_stream(const std::string& path, std::vector<NpzFloat64Stream> members);
// A member of npz_write_stream of any little-endian numpy dtype `descr` ("<f8", "<i8", "<i4", "<u2", "<u1",
// ...): `fill` hands over the values' bytes in order (row-major, little-endian), in pieces, through
// put(bytes, count) with count values of descr's width; the counts must add up to the shape's product.
struct NpzStream {
  std::string name;  // without ".npy"
  std::vector<std::size_t> shape;
  std::string descr;
  std::function<void(const std::function<void(const char* bytes, std::size_t count)>& put)> fill;
};
// npz_write_float64_stream's archive (stored members in name order, written as the values come,
// atomically) with members of any of these dtypes; npz_write_float64_stream is this with "<f8" members.
void npz_write_stream(const std::string& path, std::vector<NpzStream> members);
// A little-endian signed integer .npy ('<i1', '<i2', '<i4', '<i8' for bytes = 1, 2, 4, 8; values must fit).
std::string npy_bytes_int(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& data, int bytes);
// An .npz of stored members (name without ".npy" -> .npy bytes), written atomically.
void npz_write_members(const std::string& path, const std::map<std::string, std::string>& members);

// Matrix by extension (case-insensitive): .npy (2-D), .npz (exactly one 2-D member, or the member `key`
// when non-empty; a key with any other extension is bad input), .txt (rows of whitespace-separated exact
// numbers; blank lines and lines starting with '#' skipped), .json {"rows","cols","data"} (or a bare
// list of rows). Empty matrices are bad input. The typed form keeps .npy/.npz storage as it is (no
// rational detour) and narrows .txt/.json values to the narrowest exact storage.
TypedMatrix matrix_read_typed(const std::string& path, const std::string& key = "");
QMatrix matrix_read(const std::string& path, const std::string& key = "");
void matrix_write_txt(const std::string& path, const QMatrix& a);

// JSON numbers: a string holding an exact number, or a JSON number (integers exact; floats taken as the
// double they parse to, exactly). `where` names the position for error messages.
Rational json_to_rational(const nlohmann::json& v, const std::string& file, const std::string& where);
nlohmann::json rational_to_json(const Rational& q);        // as an exact string
nlohmann::json qvec_to_json(const QVector& v);             // [...] of strings
nlohmann::json qmat_to_json(const QMatrix& a);             // [[...], ...] of strings
QMatrix json_to_qmat(const nlohmann::json& v, const std::string& file, const std::string& where);
// The matrix object {"rows": m, "cols": n, "data": [[...], ...]} (exact strings) and back; the reader
// checks that "rows"/"cols" match "data".
nlohmann::json qmat_to_json_matrix(const QMatrix& a);
QMatrix json_matrix_to_qmat(const nlohmann::json& v, const std::string& file, const std::string& where);
// Parses JSON text; InputError "file: line L, column C: expected valid JSON (...)" otherwise.
nlohmann::json json_parse_text(const std::string& text, const std::string& name);
// Integer literals beyond 64 bits would silently become doubles: InputError naming line and column.
void json_check_integer_literals(const std::string& text, const std::string& name);
// Reads a JSON DATA file: json_parse_text + json_check_integer_literals.
nlohmann::json json_read(const std::string& path);
// The 0-based flat index of a C-order shape printed as "[i][j]..." (for error positions).
std::string ndindex_to_string(const std::vector<std::size_t>& shape, std::size_t flat);

// The file name's extension, lower-cased, with its dot (".npz"), or "" when it has none.
std::string path_extension_lower(const std::string& path);
// Reads a whole file; InputError when unreadable.
std::string file_read_all(const std::string& path);
// Writes atomically (temp file + rename) so nothing half-written is left behind. A character device or
// a pipe (/dev/null, /dev/stdout) is written in place: renaming over it would replace the device with a
// regular file. A directory, socket or block device is bad input.
void file_write_atomic(const std::string& path, const std::string& contents);
// True when PATH names an existing character device or pipe (written in place, see file_write_atomic);
// false when it is absent or a regular file; InputError for anything else no output may replace.
bool output_is_stream(const std::string& path);

}  // namespace memcert
