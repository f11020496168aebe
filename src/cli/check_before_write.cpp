// The independent check a construction runs before writing its certificate (command.hpp).
#include <iostream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"

namespace memcert::cli {

bool checker_accepts_before_write(const std::string& cert, const memcert_checker::KsArraysSupplier* ks) {
  memcert_checker::Budget budget;  // the run's memory budget (none with --max-memory 0); time: the watchdog's
  budget.max_bytes = checker_max_bytes();
  const memcert_checker::Verdict v =
      ks ? memcert_checker::verify_certificate_text(cert, budget, nullptr, memcert_checker::ArraysSupplier{}, ks)
         : memcert_checker::verify_certificate_text(cert, budget);
  if (v.valid) return true;
  std::cerr << "memcert: undecided: the independent checker did not " << (v.undecided ? "finish" : "accept the constructed certificate")
            << ": " << v.reason << (v.undecided ? budget_suffices_text(v.needs_seconds, v.needs_bytes) : std::string())
            << " (nothing written)\n";
  return false;
}

}  // namespace memcert::cli
