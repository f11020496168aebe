// Attention data sets as the checker's AttentionArrays (attention_arrays.hpp).
#include "attention_arrays.hpp"

#include <unistd.h>

#include "memcert/data/typed_dataset.hpp"
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
}  // namespace

memcert_checker::AttentionArrays attention_arrays_read(const std::string& path) {
  TypedAttentionDataset ds = attention_dataset_read_typed(path);
  memcert_checker::AttentionArrays a;
  a.T = ds.T;
  a.n = ds.n;
  a.d = ds.d;
  a.contexts = exact_doubles(ds.contexts, path, "contexts");
  ds.contexts = TypedMatrix{};
  a.queries = exact_doubles(ds.queries, path, "queries");
  return a;
}

memcert_checker::ArraysSupplier attention_arrays_supplier(const std::string& data, const std::string& cert) {
  return [data, cert](const std::string& file, memcert_checker::AttentionArrays& out, std::string& error) {
    std::string path = data;
    if (path.empty()) {
      path = file;
      const auto slash = cert.rfind('/');
      if (!file.empty() && file[0] != '/' && ::access(file.c_str(), R_OK) != 0 && slash != std::string::npos)
        path = cert.substr(0, slash + 1) + file;
    }
    try {
      if (::access(path.c_str(), R_OK) != 0) throw InputError(path + ": cannot open (the data file the certificate references)");
      out = attention_arrays_read(path);
      return true;
    } catch (const InputError& e) {
      error = e.what();
      return false;
    }
  };
}

}  // namespace memcert::cli
