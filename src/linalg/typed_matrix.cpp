// Typed exact storage of a matrix and the exact conversions between storages (typed_matrix.hpp).
#include "memcert/linalg/typed_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <limits>

namespace memcert {

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::int64: return "int64";
    case Storage::float64: return "float64";
    default: return "rational";
  }
}

std::size_t TypedMatrix::bytes() const {
  switch (storage) {
    case Storage::int64: return i64.size() * sizeof(std::int64_t);
    case Storage::float64: return f64.size() * sizeof(double);
    default: return q.data().size() * (sizeof(Rational) + 16);  // two limbs' worth per entry
  }
}

TypedMatrix typed_matrix_from_i64(std::size_t rows, std::size_t cols, std::vector<std::int64_t> v) {
  TypedMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.storage = Storage::int64;
  a.i64 = std::move(v);
  return a;
}

TypedMatrix typed_matrix_from_f64(std::size_t rows, std::size_t cols, std::vector<double> v) {
  TypedMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.storage = Storage::float64;
  a.f64 = std::move(v);
  return a;
}

TypedMatrix typed_matrix_from_qmat(QMatrix q) {
  const auto& d = q.data();
  bool all_i64 = true, all_double = true;
  for (const Rational& x : d) {
    if (all_i64 && !(x.get_den() == 1 && x.get_num().fits_slong_p())) all_i64 = false;
    if (all_double && !all_i64) {
      double y = x.get_d();  // truncates; exact iff it round-trips
      if (!std::isfinite(y) || rational_from_double(y) != x) all_double = false;
    }
    if (!all_i64 && !all_double) break;
  }
  static_assert(sizeof(long) == sizeof(std::int64_t), "fits_slong_p must mean 64-bit");
  if (all_i64) {
    std::vector<std::int64_t> v(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) v[i] = d[i].get_num().get_si();
    return typed_matrix_from_i64(q.rows(), q.cols(), std::move(v));
  }
  if (all_double) {
    std::vector<double> v(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) v[i] = d[i].get_d();
    return typed_matrix_from_f64(q.rows(), q.cols(), std::move(v));
  }
  TypedMatrix a;
  a.rows = q.rows();
  a.cols = q.cols();
  a.storage = Storage::rational;
  a.q = std::move(q);
  return a;
}

QMatrix typed_matrix_to_qmat(const TypedMatrix& a) {
  if (a.storage == Storage::rational) return a.q;
  QMatrix q(a.rows, a.cols);
  for (std::size_t k = 0; k < a.rows * a.cols; ++k)
    q.data()[k] = a.storage == Storage::int64 ? Rational(static_cast<long>(a.i64[k])) : rational_from_double(a.f64[k]);
  return q;
}

bool typed_matrix_to_double(const TypedMatrix& a, Matrix<double>& out) {
  if (a.storage == Storage::rational) return false;
  Matrix<double> d(a.rows, a.cols);
  if (a.storage == Storage::float64) {
    d.data() = a.f64;
  } else {
    constexpr std::int64_t kExact = std::int64_t(1) << 53;  // every integer up to 2^53 is a double
    for (std::size_t k = 0; k < a.i64.size(); ++k) {
      if (a.i64[k] > kExact || a.i64[k] < -kExact) return false;
      d.data()[k] = static_cast<double>(a.i64[k]);
    }
  }
  out = std::move(d);
  return true;
}

TypedMatrix typed_matrix_rows(const TypedMatrix& a, std::size_t r0, std::size_t count) {
  if (r0 > a.rows || count > a.rows - r0) throw std::out_of_range("typed_matrix_rows: rows past the end");
  const std::size_t b = r0 * a.cols, e = (r0 + count) * a.cols;
  switch (a.storage) {
    case Storage::int64: return typed_matrix_from_i64(count, a.cols, {a.i64.begin() + b, a.i64.begin() + e});
    case Storage::float64: {
      TypedMatrix out = typed_matrix_from_f64(count, a.cols, {a.f64.begin() + b, a.f64.begin() + e});
      out.stored_float_bytes = a.stored_float_bytes;
      return out;
    }
    case Storage::rational: break;
  }
  QMatrix q(count, a.cols);
  std::copy(a.q.data().begin() + b, a.q.data().begin() + e, q.data().begin());
  TypedMatrix out;
  out.rows = count;
  out.cols = a.cols;
  out.storage = Storage::rational;
  out.q = std::move(q);
  return out;
}

}  // namespace memcert
