// Attention data sets as the checker's AttentionArrays (attention_arrays.hpp).
#include "attention_arrays.hpp"

#include <unistd.h>

#include <cmath>
#include <memory>
#include <optional>

#include "memcert/data/typed_dataset.hpp"
#include "command.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace {
// The exact values of `a` as doubles, or InputError naming the array.
std::vector<double> exact_doubles(const TypedMatrix& a, const std::string& path, const char* what) {
  Matrix<double> m;
  if (!typed_matrix_to_double(a, m))
    throw input_error(path, what, "expected values that are exactly doubles for data by reference (an integer beyond 2^53 "
                                  "or a non-dyadic rational cannot be referenced)");
  return std::move(m.data());  // row-major
}

// x as the double it equals, or InputError naming the array.
double exact_double(const Rational& x, const std::string& path, const char* what) {
  const double v = x.get_d();
  if (!std::isfinite(v) || Rational(v) != x)
    throw input_error(path, what, "expected values that are exactly doubles for data by reference (an integer beyond 2^53 "
                                  "or a non-dyadic rational cannot be referenced)");
  return v;
}

// The labels of the first `count` examples (every example when count = T) as the checker reads them:
// real labels as exact rationals in lowest terms, classes as integers (their reader checked them).
void set_labels(memcert_checker::AttentionArrays& a, const std::optional<QMatrix>& labels, bool class_labels,
                std::size_t count) {
  using L = memcert_checker::AttentionArrays::Labels;
  if (!labels) return;
  if (class_labels) {
    a.label_kind = L::classes;
    a.classes.resize(count);
    for (std::size_t t = 0; t < count; ++t) a.classes[t] = (*labels)(t, 0).get_num().get_ui();
    return;
  }
  a.label_kind = L::real;
  a.d_out = labels->cols();
  a.labels.resize(count * a.d_out);
  for (std::size_t t = 0; t < count; ++t)
    for (std::size_t j = 0; j < a.d_out; ++j) {
      Rational q = (*labels)(t, j);
      q.canonicalize();
      a.labels[t * a.d_out + j] = q.get_str();
    }
}
}  // namespace

memcert_checker::AttentionArrays attention_arrays_from_dataset(const AttentionDataset& ds, std::size_t count,
                                                               const std::string& path) {
  if (count > ds.T()) throw std::out_of_range("attention_arrays_from_dataset: count past T");
  memcert_checker::AttentionArrays a;
  a.T = count;
  a.n = ds.n();
  a.d = ds.d();
  const std::size_t block = a.n * a.d;
  if (ds.typed && !ds.typed->contexts_f32.empty()) {  // float32 stays float32
    a.contexts_f32.assign(ds.typed->contexts_f32.begin(), ds.typed->contexts_f32.begin() + count * block);
  } else {
    a.contexts.resize(count * block);
  }
  std::vector<double> v;
  for (std::size_t t = 0; t < count && a.contexts_f32.empty(); ++t) {
    if (attention_context_doubles(ds, t, v)) {
      std::copy(v.begin(), v.end(), a.contexts.begin() + t * block);
    } else {
      for (std::size_t i = 0; i < block; ++i) a.contexts[t * block + i] = exact_double(ds.contexts[t].data()[i], path, "contexts");
    }
  }
  a.queries.resize(count * a.d);
  for (std::size_t i = 0; i < count * a.d; ++i) a.queries[i] = exact_double(ds.queries.data()[i], path, "queries");
  set_labels(a, ds.labels, ds.class_labels, count);
  return a;
}

namespace {
}  // namespace

std::function<std::string()> attention_digest_job(const AttentionDataset& ds, std::size_t count, const std::string& path) {
  if (!ds.typed) {  // rational contexts: converted (and checked) now, digested later
    auto arrays = std::make_shared<memcert_checker::AttentionArrays>(attention_arrays_from_dataset(ds, count, path));
    return [arrays, count] { return memcert_checker::attention_arrays_digest(*arrays, count); };
  }
  if (count > ds.T()) throw std::out_of_range("attention_digest_job: count past T");
  auto queries = std::make_shared<std::vector<double>>(count * ds.d());
  for (std::size_t i = 0; i < queries->size(); ++i) (*queries)[i] = exact_double(ds.queries.data()[i], path, "queries");
  auto labelled = std::make_shared<memcert_checker::AttentionArrays>();  // labels only (small)
  set_labels(*labelled, ds.labels, ds.class_labels, count);
  return [&ds, count, queries, labelled] {
    memcert_checker::AttentionDigest g(count, ds.n(), ds.d());
    const TypedAttentionDataset& ty = *ds.typed;
    if (!ty.contexts_f32.empty()) {
      std::vector<float> part;  // the stored values in pieces (they may lie misaligned in a mapped file)
      constexpr std::size_t kPiece = std::size_t(1) << 20;
      for (std::size_t at = 0, total = count * ty.n * ty.d; at < total; at += kPiece) {
        part.assign(ty.contexts_f32.begin() + at, ty.contexts_f32.begin() + std::min(total, at + kPiece));
        g.add(part.data(), part.size());
      }
    } else {
      std::vector<double> v;
      for (std::size_t t = 0; t < count; ++t) {
        attention_context_doubles(ds, t, v);  // typed values are exact doubles
        g.add(v.data(), v.size());
      }
    }
    g.add(queries->data(), queries->size());
    g.add_text(memcert_checker::attention_labels_digest_text(*labelled, count));
    return g.finish();
  };
}

memcert_checker::AttentionArrays attention_arrays_read(const std::string& path) {
  AttentionReadOptions read;
  read.storage = AttentionReadOptions::Storage::typed;
  read.keep_float32 = true;
  read.rational_queries = false;  // the queries are taken from the typed storage
  AttentionDataset ds = attention_dataset_read(path, read);
  if (ds.labels_integer_dtype) note(attention_labels_note());
  const TypedAttentionDataset& ty = *ds.typed;
  memcert_checker::AttentionArrays a;
  a.T = ty.T;
  a.n = ty.n;
  a.d = ty.d;
  // The queries first (T x d, small), so the typed storage can go as soon as the contexts are copied.
  a.queries = exact_doubles(ty.queries, path, "queries");
  if (!ty.contexts_f32.empty()) a.contexts_f32.assign(ty.contexts_f32.begin(), ty.contexts_f32.end());  // kept as stored
  else a.contexts = exact_doubles(ty.contexts, path, "contexts");
  ds.typed.reset();
  set_labels(a, ds.labels, ds.class_labels, a.T);
  return a;
}

std::string referenced_data_path(const std::string& data, const std::string& cert, const std::string& file) {
  std::string path = data;
  if (path.empty()) {
    path = file;
    const auto slash = cert.rfind('/');
    if (!file.empty() && file[0] != '/' && ::access(file.c_str(), R_OK) != 0 && slash != std::string::npos)
      path = cert.substr(0, slash + 1) + file;
  }
  // A name with a NUL byte would be opened as its part before the NUL: a different file than named.
  if (path.find('\0') != std::string::npos)
    throw InputError("data.file: expected a file name without NUL bytes, got " + printable_argument(path));
  if (::access(path.c_str(), R_OK) != 0) throw InputError(path + ": cannot open (the data file the certificate references)");
  return path;
}

memcert_checker::ArraysSupplier attention_arrays_supplier(const std::string& data, const std::string& cert) {
  return [data, cert](const std::string& file, memcert_checker::AttentionArrays& out, std::string& error) {
    try {
      const std::string path = referenced_data_path(data, cert, file);
      out = attention_arrays_read(path);
      return true;
    } catch (const InputError& e) {
      error = e.what();
      return false;
    }
  };
}

}  // namespace memcert::cli
