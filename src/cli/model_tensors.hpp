#pragma once
// Kind "model" certificates' tensors by reference (docs/CERTIFICATES.md): the checker's TensorsSupplier,
// reading a model file (role "model": every tensor of its state_dict) or a data file (role "data": the
// arrays the architecture reads) with memcert's readers, files named relative to the certificate as
// theorem1's data by reference are (attention_arrays.hpp).
#include <string>

#include "memcert/checker/checker.hpp"

namespace memcert::cli {

memcert_checker::TensorsSupplier model_tensors_supplier(const std::string& cert);

// `certify --out`: the certificate at `tmp` (next to its destination, so relative file names resolve the
// same) checked by the independent checker before it is renamed into place. 1: accepted; 0: this build's
// checker does not know kind "model" (the certificate is written unchecked, "verified": null); -1: rejected
// or undecided (one line on stderr; the caller writes nothing).
int checker_accepts_model_before_write(const std::string& tmp, const std::string& cert_dest);

}  // namespace memcert::cli
