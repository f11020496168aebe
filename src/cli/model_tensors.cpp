// The checker's tensors supplier for kind "model" and the check before `certify --out` writes (model_tensors.hpp).
#include "model_tensors.hpp"

#include <unistd.h>

#include <iostream>

#include "attention_arrays.hpp"
#include "command.hpp"
#include "memcert/model/mahdavi24_baseline.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {

namespace {
// `file` as the certificate names it: as written, or next to the certificate when relative and absent.
std::string resolve(const std::string& file, const std::string& cert) {
  const auto slash = cert.rfind('/');
  if (!file.empty() && file[0] != '/' && ::access(file.c_str(), R_OK) != 0 && slash != std::string::npos)
    return cert.substr(0, slash + 1) + file;
  return file;
}
}  // namespace

memcert_checker::TensorsSupplier model_tensors_supplier(const std::string& cert) {
  return [cert](const std::string& file, const std::string& role, const std::string& arch,
                std::vector<memcert_checker::NamedArray>& out, std::string& error) {
    try {
      const std::string path = resolve(file, cert);
      if (path.find('\0') != std::string::npos) throw InputError("file: expected a file name without NUL bytes");
      if (::access(path.c_str(), R_OK) != 0) throw InputError(printable_argument(path) + ": cannot open (a file the certificate references)");
      out.clear();
      if (role == "model") {
        const StateDict sd = state_dict_read(path);
        for (const auto& [key, t] : sd.entries()) {
          memcert_checker::NamedArray a;
          a.name = key;
          a.shape = t.shape;
          if (dtype_is_float(t.dtype)) a.values = t.f64;
          else a.values.assign(t.i64.begin(), t.i64.end());
          out.push_back(std::move(a));
        }
        return true;
      }
      if (role == "data" && arch == "mahdavi24-baseline") {
        out = mahdavi24_baseline_data_arrays(mahdavi24_baseline_read_data(path));
        return true;
      }
      throw InputError(printable_argument(path) + ": no tensors of role " + role + " for --arch " + arch);
    } catch (const InputError& e) {
      error = e.what();
      return false;
    }
  };
}

int checker_accepts_model_before_write(const std::string& tmp, const std::string& cert_dest) {
  memcert_checker::Budget budget;  // the engine checks what it just built: no time limit
  const memcert_checker::ArraysSupplier arrays = attention_arrays_supplier("", cert_dest);
  // The checker's kind "model" asks for the model's and the data's tensors through this supplier: it is
  // handed to the verify_certificate_file overload that takes a TensorsSupplier once the checker has one.
  const memcert_checker::TensorsSupplier tensors = model_tensors_supplier(cert_dest);
  (void)tensors;
  const memcert_checker::Verdict v = memcert_checker::verify_certificate_file(tmp, budget, nullptr, arrays);
  if (v.valid) return 1;
  if (v.reason.rfind("kind: unknown certificate kind \"model\"", 0) == 0) {
    std::cerr << "memcert: note: this build's independent checker does not know kind \"model\": the certificate is "
                 "written unchecked (memcert verify re-checks it with a checker that does)\n";
    return 0;
  }
  std::cerr << "memcert: undecided: the independent checker did not " << (v.undecided ? "finish" : "accept the certificate")
            << ": " << v.reason << " (nothing written)\n";
  return -1;
}

}  // namespace memcert::cli
