// memcert verify CERT [--json] [--max-seconds S] [--max-memory MB]
// Re-checks a certificate with the independent checker (memcert_checker). JSON (docs/CLI.md):
//   {"valid","kind","claim","reason" (when invalid or undecided),"applied":[rules],"not_checked":[fields],
//    "undecided" (when over budget),"seconds"}
// Exit: 0 valid, 1 rejected (well-formed but false), 2 bad input (unreadable, not JSON, or a field of the
// wrong type / syntax / length: one line "CERT: field: expected ..."), 3 undecided: over budget, decided
// from the checker's cost estimate before the work starts.
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace {

struct VerifyArgs {
  std::string cert;
  bool json = false;
};

int run_verify(const VerifyArgs& args) {
  auto start = std::chrono::steady_clock::now();
  if (!std::ifstream(args.cert, std::ios::binary)) throw InputError(args.cert + ": cannot open");
  memcert_checker::Budget budget;
  const RunBudget& rb = run_budget();
  budget.max_seconds = rb.max_seconds > 0 ? rb.max_seconds : 1e300;
  budget.max_bytes = rb.max_memory_mb > 0 ? rb.max_memory_mb * 1024 * 1024 : 1e300;
  // The file is read by the checker, bounded by the memory budget (never an unbounded stream).
  memcert_checker::Verdict v = memcert_checker::verify_certificate_file(args.cert, budget);
  if (v.malformed) throw InputError(args.cert + ": " + v.reason);
  // Not a certificate at all (no string "kind": a data set or a list given by mistake) is bad input, not
  // a rejected certificate; an over-budget read stays undecided.
  if (!v.valid && !v.undecided && v.kind.empty())
    throw input_error(args.cert, "", "expected a certificate (a JSON object with a string \"kind\"), got: " + v.reason);
  nlohmann::json j{{"valid", v.valid}, {"kind", v.kind}, {"claim", v.claim},
                   {"applied", v.applied}, {"not_checked", v.not_checked}};
  if (!v.valid) j["reason"] = v.reason;
  if (v.undecided) j["undecided"] = true;
  std::string what = (v.kind.empty() ? std::string("certificate") : v.kind + " certificate") +
                     (v.claim.empty() ? "" : " (claim " + v.claim + ")");
  std::string human = v.valid       ? "VALID: " + what + " re-checked by the independent checker"
                      : v.undecided ? "UNDECIDED: " + what + ": " + v.reason
                                    : "INVALID: " + what + ": " + v.reason;
  for (const auto& r : v.applied) human += "\n  applied: " + r;
  for (const auto& f : v.not_checked) human += "\n  not checked: " + f;
  emit(args.json, j, human, start);
  return v.valid ? kExitHolds : v.undecided ? kExitUndecided : kExitNegative;
}

const CommandRegistrar reg{{90, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* sub = root.add_subcommand("verify", "Re-check a certificate with the independent checker");
  sub->add_option("CERT", args->cert, "Certificate file (JSON)")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run_verify(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
