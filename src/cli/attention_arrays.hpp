#pragma once
// Attention data sets as the independent checker's AttentionArrays (data by reference,
// docs/CERTIFICATES.md): read with memcert's typed readers, every value exactly a double.
#include <string>

#include "memcert/checker/checker.hpp"

namespace memcert::cli {

// The contexts and queries of the data set at `path` (JSON or .npz, as `construct` reads it) as exact
// doubles. Throws InputError (exit 2) on bad input, and when a value is not exactly a double (rational
// data such as 1/3 cannot be referenced: such a certificate embeds its data).
memcert_checker::AttentionArrays attention_arrays_read(const std::string& path);

// The checker's supplier for `verify`: reads `data` when given (--data), else the file the certificate
// names -- as written, or, when that does not exist and is relative, next to the certificate `cert`.
memcert_checker::ArraysSupplier attention_arrays_supplier(const std::string& data, const std::string& cert);

}  // namespace memcert::cli
