#pragma once
// ks25 sequence data sets as the independent checker's KsArrays (data by reference for kind "ks",
// docs/CERTIFICATES.md): read with memcert's sequence readers (as `construct ks` reads them).
#include <string>

#include "memcert/checker/checker.hpp"
#include "memcert/data/dataset.hpp"

namespace memcert::cli {

// The token table (exact rationals as text), indices and labels of a data set `construct ks` has read.
memcert_checker::KsArrays ks_arrays_from_dataset(const TokenSequenceDataset& ds);

// The checker's supplier for `verify` (and `construct ks --check`): reads `data` when given (--data), else
// the file the certificate names -- as written, or, when that does not exist and is relative, next to the
// certificate `cert`. Bad input (InputError) becomes the supplier's error (exit 2).
memcert_checker::KsArraysSupplier ks_arrays_supplier(const std::string& data, const std::string& cert);

}  // namespace memcert::cli
