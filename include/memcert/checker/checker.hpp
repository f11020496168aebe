#pragma once
// The independent certificate checker (the trusted kernel, in the spirit of DRAT-trim / Lean's kernel).
// It depends ONLY on GMP (incl. gmpxx) and MPFR and the C++ standard library: it includes no other
// memcert header and parses certificates with its own small JSON reader. Everything it accepts is
// re-derived with exact rationals, arithmetic modulo verified primes, and MPFR with directed rounding.
#include <string>

namespace memcert_checker {

struct Verdict {
  bool valid = false;
  std::string kind;    // the certificate's "kind"
  std::string claim;   // the certificate's "claim"
  std::string reason;  // why it was rejected (empty when valid)
};

// Verifies a certificate given as JSON text. Never throws: malformed input is a rejection.
Verdict verify_certificate_text(const std::string& json_text);

// Reads the file and verifies its text. An unreadable file is a rejection whose reason starts with
// the path (callers wanting "bad input" semantics should check readability themselves).
Verdict verify_certificate_file(const std::string& path);

// Worker threads of the checker's kernels (0: the default, the hardware concurrency capped at 8).
// Verdicts never depend on it.
void verify_set_threads(unsigned k);

}  // namespace memcert_checker
