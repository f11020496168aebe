#pragma once
// Attention data sets as the independent checker's AttentionArrays (data by reference,
// docs/CERTIFICATES.md): read with memcert's typed readers, every value exactly a double.
#include <functional>
#include <string>

#include "memcert/checker/checker.hpp"
#include "memcert/data/dataset.hpp"

namespace memcert::cli {

// The contexts and queries of the data set at `path` (JSON or .npz, as `construct` reads it) as exact
// doubles. Throws InputError (exit 2) on bad input, and when a value is not exactly a double (rational
// data such as 1/3 cannot be referenced: such a certificate embeds its data).
memcert_checker::AttentionArrays attention_arrays_read(const std::string& path);

// The first `count` examples of a data set `construct` has already read (typed backing or rational
// contexts), as AttentionArrays: the same values as attention_arrays_read(path) gives for them, without
// reading the file again. InputError (naming `path`) when a value is not exactly a double.
memcert_checker::AttentionArrays attention_arrays_from_dataset(const AttentionDataset& ds, std::size_t count,
                                                               const std::string& path);

// The digest (memcert_checker::attention_arrays_digest) of the first `count` examples of a data set
// `construct` has read, as a job to run later (on its own thread while the construction runs): what can
// fail (a value that is not exactly a double: InputError naming `path`) is checked here, before the job
// exists. A typed backing is streamed through the digest without a copy.
std::function<std::string()> attention_digest_job(const AttentionDataset& ds, std::size_t count, const std::string& path);

// The data file a by-reference certificate names: DATA (--data) when given, else `file` as named, or
// beside the certificate CERT when not readable from the working directory. InputError for a name with a
// NUL byte or a file that cannot be read.
std::string referenced_data_path(const std::string& data, const std::string& cert, const std::string& file);

// The checker's supplier for `verify`: reads `data` when given (--data), else the file the certificate
// names -- as written, or, when that does not exist and is relative, next to the certificate `cert`.
memcert_checker::ArraysSupplier attention_arrays_supplier(const std::string& data, const std::string& cert);

}  // namespace memcert::cli
