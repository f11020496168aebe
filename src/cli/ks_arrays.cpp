// ks25 sequence data sets as the checker's KsArrays (ks_arrays.hpp).
#include "ks_arrays.hpp"

#include "attention_arrays.hpp"
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
    try {
      const std::string path = referenced_data_path(data, cert, file);
      out = ks_arrays_from_dataset(sequence_dataset_read_tokens(path));
      return true;
    } catch (const InputError& e) {
      error = e.what();
      return false;
    }
  };
}

}  // namespace memcert::cli
