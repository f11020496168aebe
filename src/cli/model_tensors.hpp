#pragma once
// The tensors a kind "model" certificate references (docs/CERTIFICATES.md, kind "model"), read with
// memcert's readers for the independent checker: role "model", every tensor of the model file
// (memcert::state_dict_read, each value exactly a double); role "data", the arrays the architecture reads
// from the data file (.npz: mahdavi24-baseline X and y, dana24-aot sequences and next; float32 kept as
// float32).
#include <string>

#include "memcert/checker/checker.hpp"

namespace memcert::cli {

// The file the certificate names -- as written, or, when that does not exist and is relative, next to
// the certificate `cert` (as the attention data of a theorem1 certificate).
std::string referenced_path(const std::string& file, const std::string& cert);

// The checker's TensorsSupplier for `verify`. Bad input (unreadable, malformed, a value that is not
// exactly a double) is reported through `error` as one line naming the file.
memcert_checker::TensorsSupplier model_tensors_supplier(const std::string& cert);

// `certify --out`: the certificate at `tmp` (next to its destination, so relative file names resolve the
// same) checked by the independent checker before it is renamed into place. 1: accepted; -1: rejected or
// undecided (one line on stderr; the caller writes nothing).
int checker_accepts_model_before_write(const std::string& tmp, const std::string& cert_dest);

}  // namespace memcert::cli
