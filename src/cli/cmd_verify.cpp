// memcert verify CERT [--json]
// Re-checks a certificate with the independent checker (memcert_checker). JSON (docs/CLI.md):
//   {"valid","kind","claim","reason" (when invalid),"seconds"}
// Exit: 0 valid, 1 rejected, 2 when the file is unreadable or not JSON at all.
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"

namespace memcert::cli {
namespace {

struct VerifyArgs {
  std::string cert;
  bool json = false;
};

int run_verify(const VerifyArgs& args) {
  auto start = std::chrono::steady_clock::now();
  std::string text = file_read_all(args.cert);
  (void)json_parse_text(text, args.cert);  // InputError (exit 2) when empty or not JSON at all
  memcert_checker::Verdict v = memcert_checker::verify_certificate_text(text);
  nlohmann::json j{{"valid", v.valid}, {"kind", v.kind}, {"claim", v.claim}};
  if (!v.valid) j["reason"] = v.reason;
  std::string what = (v.kind.empty() ? std::string("certificate") : v.kind + " certificate") +
                     (v.claim.empty() ? "" : " (claim " + v.claim + ")");
  std::string human = v.valid ? "VALID: " + what + " re-checked by the independent checker"
                              : "INVALID: " + what + ": " + v.reason;
  emit(args.json, j, human, start);
  return v.valid ? kExitHolds : kExitNegative;
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
