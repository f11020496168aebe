#pragma once
// A dense row-major matrix generic over its scalar (Rational, Integer, double, Interval, u64 mod p).
#include <cassert>
#include <cstddef>
#include <vector>

#include "memcert/numeric/rational.hpp"

namespace memcert {

template <class T>
class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols) : r_(rows), c_(cols), a_(rows * cols) {}
  Matrix(std::size_t rows, std::size_t cols, const T& fill) : r_(rows), c_(cols), a_(rows * cols, fill) {}

  std::size_t rows() const { return r_; }
  std::size_t cols() const { return c_; }
  bool empty() const { return r_ == 0 || c_ == 0; }
  T& operator()(std::size_t i, std::size_t j) { assert(i < r_ && j < c_); return a_[i * c_ + j]; }
  const T& operator()(std::size_t i, std::size_t j) const { assert(i < r_ && j < c_); return a_[i * c_ + j]; }
  T* row(std::size_t i) { return a_.data() + i * c_; }
  const T* row(std::size_t i) const { return a_.data() + i * c_; }
  std::vector<T>& data() { return a_; }
  const std::vector<T>& data() const { return a_; }

  static Matrix identity(std::size_t n) {
    Matrix m(n, n, T(0));
    for (std::size_t i = 0; i < n; ++i) m(i, i) = T(1);
    return m;
  }
  friend bool operator==(const Matrix& x, const Matrix& y) {
    return x.r_ == y.r_ && x.c_ == y.c_ && x.a_ == y.a_;
  }

 private:
  std::size_t r_ = 0, c_ = 0;
  std::vector<T> a_;
};

using QMatrix = Matrix<Rational>;
using ZMatrix = Matrix<Integer>;
using DMatrix = Matrix<double>;
using QVector = std::vector<Rational>;

template <class T>
Matrix<T> mat_transpose(const Matrix<T>& a) {
  Matrix<T> t(a.cols(), a.rows());
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) t(j, i) = a(i, j);
  return t;
}

template <class T>
Matrix<T> mat_mul(const Matrix<T>& a, const Matrix<T>& b) {
  assert(a.cols() == b.rows());
  Matrix<T> c(a.rows(), b.cols(), T(0));
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t k = 0; k < a.cols(); ++k) {
      const T& aik = a(i, k);
      if (aik == 0) continue;
      for (std::size_t j = 0; j < b.cols(); ++j) c(i, j) += aik * b(k, j);
    }
  return c;
}

template <class T>
std::vector<T> mat_vec(const Matrix<T>& a, const std::vector<T>& x) {
  assert(a.cols() == x.size());
  std::vector<T> y(a.rows(), T(0));
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) y[i] += a(i, j) * x[j];
  return y;
}

// Submatrix on the given row and column index lists (in that order).
template <class T>
Matrix<T> mat_submatrix(const Matrix<T>& a, const std::vector<std::size_t>& rows,
                        const std::vector<std::size_t>& cols) {
  Matrix<T> s(rows.size(), cols.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < cols.size(); ++j) s(i, j) = a(rows[i], cols[j]);
  return s;
}

template <class T>
Matrix<T> mat_select_rows(const Matrix<T>& a, const std::vector<std::size_t>& rows) {
  Matrix<T> s(rows.size(), a.cols());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) s(i, j) = a(rows[i], j);
  return s;
}

// Horizontal / vertical concatenation.
template <class T>
Matrix<T> mat_hcat(const Matrix<T>& a, const Matrix<T>& b) {
  assert(a.rows() == b.rows());
  Matrix<T> c(a.rows(), a.cols() + b.cols());
  for (std::size_t i = 0; i < a.rows(); ++i) {
    for (std::size_t j = 0; j < a.cols(); ++j) c(i, j) = a(i, j);
    for (std::size_t j = 0; j < b.cols(); ++j) c(i, a.cols() + j) = b(i, j);
  }
  return c;
}
template <class T>
Matrix<T> mat_vcat(const Matrix<T>& a, const Matrix<T>& b) {
  assert(a.cols() == b.cols());
  Matrix<T> c(a.rows() + b.rows(), a.cols());
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) c(i, j) = a(i, j);
  for (std::size_t i = 0; i < b.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) c(a.rows() + i, j) = b(i, j);
  return c;
}

// Entrywise conversion (e.g. QMatrix -> Matrix<double> for estimates).
template <class U, class T, class F>
Matrix<U> mat_map(const Matrix<T>& a, F f) {
  Matrix<U> b(a.rows(), a.cols());
  for (std::size_t i = 0; i < a.data().size(); ++i) b.data()[i] = f(a.data()[i]);
  return b;
}

}  // namespace memcert
