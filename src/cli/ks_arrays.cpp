// ks25 sequence data sets as the checker's KsArrays (ks_arrays.hpp).
#include "ks_arrays.hpp"

#include <unistd.h>

#include "command.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {

memcert_checker::KsArrays ks_arrays_from_dataset(const TokenSequenceDataset& ds) {
  using L = memcert_checker::KsArrays::Labels;
  memcert_checker::KsArrays a;
  a.N = ds.N;
  a.n = ds.n;
  a.d = ds.d;
  a.tokens.reserve(ds.tokens.size() * ds.d);
  for (const QVector& t : ds.tokens)
    for (const Rational& x : t) {
      Rational q = x;
      q.canonicalize();
      a.tokens.push_back(q.get_str());
    }
  a.ids = ds.ids;
  if (!ds.token_labels.empty()) {
    a.label_kind = L::token;
    a.labels.reserve(ds.N * ds.n);
    for (const auto& row : ds.token_labels)
      for (long c : row) a.labels.push_back(c);
  } else if (!ds.labels.empty()) {
    a.label_kind = L::sequence;
    a.labels.assign(ds.labels.begin(), ds.labels.end());
  }
  return a;
}

memcert_checker::KsArraysSupplier ks_arrays_supplier(const std::string& data, const std::string& cert) {
  return [data, cert](const std::string& file, memcert_checker::KsArrays& out, std::string& error) {
    std::string path = data;
    if (path.empty()) {
      path = file;
      const auto slash = cert.rfind('/');
      if (!file.empty() && file[0] != '/' && ::access(file.c_str(), R_OK) != 0 && slash != std::string::npos)
        path = cert.substr(0, slash + 1) + file;
    }
    try {
      // A name with a NUL byte would be opened as its part before the NUL: a different file than named.
      if (path.find('\0') != std::string::npos)
        throw InputError("data.file: expected a file name without NUL bytes, got " + printable_argument(path));
      if (::access(path.c_str(), R_OK) != 0) throw InputError(path + ": cannot open (the data file the certificate references)");
      out = ks_arrays_from_dataset(sequence_dataset_read_tokens(path));
      return true;
    } catch (const InputError& e) {
      error = e.what();
      return false;
    }
  };
}

}  // namespace memcert::cli
