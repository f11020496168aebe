#pragma once
// A dense matrix kept in the narrowest storage that holds every value EXACTLY: int64, float64 (each
// double taken as the dyadic rational it stores), or GMP rationals (only for data that is neither).
// Readers hand .npy/.npz arrays over in this form so the engine never detours through rationals, and
// rank.hpp chooses the kernel from the storage.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"

namespace memcert {

enum class Storage { int64, float64, rational };

// "int64", "float64", "rational".
const char* storage_name(Storage s);

struct TypedMatrix {
  std::size_t rows = 0, cols = 0;
  Storage storage = Storage::rational;
  std::vector<std::int64_t> i64;  // row-major, iff storage == int64
  std::vector<double> f64;        // row-major, finite values only, iff storage == float64
  QMatrix q;                      // iff storage == rational
  // Bytes per value of the float dtype the values were stored in (2, 4, 8: a .npy float16 / float32 /
  // float64 array, widened exactly into f64); 8 for everything else (integers, text, JSON, computed
  // values). It sets numpy's eps for the numerical rank (numerical_rank.hpp), as numpy's dtype does.
  unsigned stored_float_bytes = 8;

  // Bytes the values occupy in memory (for memory budgets and reports; rationals estimated).
  std::size_t bytes() const;
};

TypedMatrix typed_matrix_from_i64(std::size_t rows, std::size_t cols, std::vector<std::int64_t> v);
TypedMatrix typed_matrix_from_f64(std::size_t rows, std::size_t cols, std::vector<double> v);
// Narrowest exact storage of a rational matrix: int64 when every entry is an integer of 64 bits, float64
// when every entry is exactly a double, else rational (moved in).
TypedMatrix typed_matrix_from_qmat(QMatrix q);

// Rows [r0, r0 + count) of `a` as a matrix of the same storage (a copy; std::out_of_range past the end).
TypedMatrix typed_matrix_rows(const TypedMatrix& a, std::size_t r0, std::size_t count);
// The exact rational values (the certificate writers and the generic exact routines need them).
QMatrix typed_matrix_to_qmat(const TypedMatrix& a);
// The exact values as doubles when every value is one (int64 entries of magnitude <= 2^53, any float64);
// false (out untouched) otherwise.
bool typed_matrix_to_double(const TypedMatrix& a, Matrix<double>& out);

}  // namespace memcert
