// Matrix files by extension (docs/CLI.md "Files"): .npy (2-d), .npz (exactly one 2-d member), .txt
// (one row per line, whitespace-separated exact numbers; blank lines and '#' comment lines skipped) and
// .json {"rows","cols","data"}. Every reader rejects empty matrices and ragged rows with one line.
#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "memcert/data/file_kind.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/data/decimals.hpp"
#include "printable.hpp"

namespace memcert {

namespace {

std::string shape_to_string(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    s += std::to_string(shape[k]);
    if (shape.size() == 1) s += ",";
    else if (k + 1 < shape.size()) s += ", ";
  }
  return s + ")";
}

TypedMatrix typed_array_to_matrix(TypedArray&& a, const std::string& name) {
  if (a.shape.size() != 2)
    throw input_error(name, "shape", "expected a 2-d array (a matrix), got shape " + shape_to_string(a.shape));
  const std::size_t rows = a.shape[0], cols = a.shape[1];
  if (a.storage == Storage::int64) return typed_matrix_from_i64(rows, cols, std::move(a.i64));
  if (a.storage == Storage::float64) {
    TypedMatrix m = typed_matrix_from_f64(rows, cols, std::move(a.f64));
    m.stored_float_bytes = a.stored_float_bytes;
    return m;
  }
  QMatrix m(rows, cols);
  m.data() = std::move(a.q);
  return typed_matrix_from_qmat(std::move(m));
}

std::string member_list(const std::map<std::string, TypedArray>& arrays) {
  std::string s;
  for (const auto& [name, arr] : arrays) s += (s.empty() ? "'" : ", '") + detail::printable_excerpt(name, 40) + "'";
  return s.empty() ? "none" : s;
}

QMatrix txt_parse(const std::string& text, const std::string& path) {
  std::vector<std::vector<Rational>> rows;
  std::size_t first_line = 0, line_no = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    std::vector<Rational> row;
    std::size_t i = 0;
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
    while (i < line.size()) {
      while (i < line.size() && space(line[i])) ++i;
      if (i >= line.size()) break;
      if (row.empty() && line[i] == '#') break;  // comment line (numpy.savetxt headers)
      std::size_t start = i;
      while (i < line.size() && !space(line[i])) ++i;
      std::string_view tok = line.substr(start, i - start);
      std::optional<Rational> q;
      try {
        q = decimal_parse(tok);  // --decimals exact|double (decimals.hpp)
      } catch (const std::overflow_error&) {
        throw input_error(path, "line " + std::to_string(line_no) + ", column " + std::to_string(row.size() + 1),
                          "expected a number within double range (--decimals double), got " + detail::token_of(tok) + " beyond it");
      }
      if (!q) {
        throw input_error(path, "line " + std::to_string(line_no) + ", column " + std::to_string(row.size() + 1),
                          "expected an exact number, got " + detail::token_of(tok) + " that is not one");
      }
      row.push_back(std::move(*q));
    }
    if (row.empty()) continue;
    if (rows.empty()) first_line = line_no;
    else if (row.size() != rows[0].size())
      throw input_error(path, "line " + std::to_string(line_no),
                        "expected " + std::to_string(rows[0].size()) + " numbers (as in line " +
                            std::to_string(first_line) + "), got " + std::to_string(row.size()));
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw input_error(path, "", text.empty() ? "expected rows of numbers, got an empty file"
                                             : "expected rows of numbers, got no numbers");
  QMatrix a(rows.size(), rows[0].size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows[r].size(); ++c) a(r, c) = std::move(rows[r][c]);
  return a;
}

}  // namespace

TypedMatrix matrix_read_typed(const std::string& path, const std::string& key) {
  std::string ext = path_extension_lower(path);
  if (!key.empty() && ext != ".npz")
    throw input_error(path, "--key", "expected a .npz archive for --key '" + detail::printable_excerpt(key, 80) +
                                         "', got a '" + detail::printable_excerpt(ext) + "' file");
  // The wrong kind of file is named before its bytes are parsed as the suffix says.
  switch (const FileKind kind = file_kind_sniff(path)) {
    case FileKind::torch:
    case FileKind::safetensors:
      throw input_error(path, "", file_kind_text(kind) + " where a matrix (.npy, .npz, .txt or .json) was expected: a trained "
                                  "model is checked by `memcert certify`");
    case FileKind::npy:
    case FileKind::npz:
      if (ext != (kind == FileKind::npy ? ".npy" : ".npz"))
        throw input_error(path, "", file_kind_text(kind) + " named '" + detail::printable_excerpt(ext) +
                                        "': matrix files are read by their suffix; name it " +
                                        (kind == FileKind::npy ? ".npy" : ".npz"));
      break;
    default: break;
  }
  TypedMatrix a;
  if (ext == ".npy") {
    a = typed_array_to_matrix(npy_read_typed(path), path);
  } else if (ext == ".npz") {
    auto arrays = npz_read_typed(path);
    auto it = arrays.begin();
    if (!key.empty()) {
      it = arrays.find(key);
      if (it == arrays.end())
        throw input_error(path, "--key", "expected the name of a member (" + member_list(arrays) + "), got '" +
                                             detail::printable_excerpt(key, 80) + "'");
    } else if (arrays.size() != 1) {
      throw input_error(path, "", "expected exactly one array in the .npz archive (or --key NAME), got " +
                                      std::to_string(arrays.size()) + ": " + member_list(arrays));
    }
    a = typed_array_to_matrix(std::move(it->second), path + ": member " + detail::printable_excerpt(it->first, 80));
  } else if (ext == ".txt") {
    a = typed_matrix_from_qmat(txt_parse(file_read_all(path), path));
  } else if (ext == ".json") {
    const nlohmann::json j = json_read(path);
    if (j.is_object() && j.contains("contexts") && !j.contains("data"))
      throw input_error(path, "", "a data set (contexts, queries) where a matrix {\"rows\", \"cols\", \"data\"} was expected: "
                                  "`memcert assumptions` reads data sets");
    if (j.is_object() && j.contains("kind") && j.contains("claim"))
      throw input_error(path, "", "a certificate where a matrix {\"rows\", \"cols\", \"data\"} was expected: "
                                  "`memcert verify` reads certificates");
    a = typed_matrix_from_qmat(json_matrix_to_qmat(j, path, ""));
  } else {
    throw input_error(path, "", "expected a matrix file ending in .npy, .npz, .txt or .json, got '" + detail::printable_excerpt(ext) + "'");
  }
  if (a.rows == 0 || a.cols == 0)
    throw input_error(path, "", "expected a non-empty matrix, got " + std::to_string(a.rows) + " x " +
                                    std::to_string(a.cols));
  return a;
}

QMatrix matrix_read(const std::string& path, const std::string& key) {
  return typed_matrix_to_qmat(matrix_read_typed(path, key));
}

void matrix_write_txt(const std::string& path, const QMatrix& a) {
  std::string out;
  for (std::size_t i = 0; i < a.rows(); ++i) {
    for (std::size_t j = 0; j < a.cols(); ++j) {
      if (j) out += ' ';
      out += rational_to_string(a(i, j));
    }
    out += '\n';
  }
  file_write_atomic(path, out);
}

}  // namespace memcert
