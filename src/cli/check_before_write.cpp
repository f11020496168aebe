// The independent check a construction runs before writing its certificate (command.hpp).
#include <iostream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"

namespace memcert::cli {

bool checker_accepts_before_write(const std::string& cert) {
  const memcert_checker::Verdict v = memcert_checker::verify_certificate_text(cert);
  if (v.valid) return true;
  std::cerr << "memcert: undecided: the independent checker did not " << (v.undecided ? "finish" : "accept the constructed certificate")
            << ": " << v.reason << " (nothing written)\n";
  return false;
}

}  // namespace memcert::cli
