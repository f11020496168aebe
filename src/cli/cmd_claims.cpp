// memcert claims list [--json]
// memcert claims run ID [--instances K] [--seed S] [--cert-dir DIR] [--json]
// memcert claims search ID --budget N [--seed S] [--cert-dir DIR] [--json]
//   structured / adversarial instances (the claim's search families); JSON as for run plus "budget" and
//   "mode":"search"; exit 0 no counterexample found (undecided instances are counted, not hidden), 1 a
//   certified counterexample (a finding), 2 unknown id or a claim without a search mode.
// The claims registry (proofs/) run as regression tests. JSON (docs/CLI.md):
//   list: {"claims":[{"id","statement","method","expect","refutes"?,"default_instances"}...]}
//   run:  {"claim","instances","confirmed","counterexamples":[...],"seconds"} plus "statement","expect",
//         "refutes","undecided","verdict","results","note".
// Exit status: 0 iff every instance confirmed the claim (for a boundary claim, Expect::counterexample:
// every instance produced a certified counterexample to the naive statement); 1 a certified counterexample
// to a claim expected to hold (a finding, witness in "counterexamples"); 3 otherwise (undecided instances,
// or a boundary claim some instance did not demonstrate); 2 unknown id / usage. An instance whose certificate
// the independent checker refused is undecided (its certificate is not written).
#include <filesystem>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/proofs/registry.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_claims {

using proofs::Expect;

struct ClaimsArgs {
  std::string id, cert_dir;
  std::size_t instances = 0, budget = 0;
  bool search = false;
  std::uint64_t seed = 20261121;
  bool json = false;
};

int run_list(const ClaimsArgs& args) {
  auto start = std::chrono::steady_clock::now();
  nlohmann::json arr = nlohmann::json::array();
  std::ostringstream h;
  for (const auto& c : proofs::claims_all()) {
    nlohmann::json e{{"id", c.id}, {"statement", c.statement}, {"method", c.method},
                     {"expect", c.expect == Expect::holds ? "holds" : "counterexample"},
                     {"default_instances", c.default_instances}, {"search", static_cast<bool>(c.search)}};
    if (!c.refutes.empty()) e["refutes"] = c.refutes;
    arr.push_back(e);
    h << c.id << (c.expect == Expect::holds ? "" : "  [boundary: expects a counterexample to " + c.refutes + "]")
      << "\n    " << c.statement << "\n";
  }
  h << proofs::claims_all().size() << " claims";
  emit(args.json, {{"claims", arr}}, h.str(), start);
  return kExitHolds;
}

std::string file_stem(const std::string& id) {
  std::string s = id;
  for (auto& ch : s)
    if (ch == '/') ch = '_';
  return s;
}

int run_claim(const ClaimsArgs& args) {
  auto start = std::chrono::steady_clock::now();
  const proofs::Claim* c = proofs::claim_find(args.id);
  if (!c) {
    std::string known;
    for (const auto& k : proofs::claims_all()) known += (known.empty() ? "" : ", ") + k.id;
    throw input_error("claims run", "ID", "expected a registered claim id (" + known + "), got \"" + args.id + "\"");
  }
  if (args.search && !c->search) {
    std::string with;
    for (const auto& k : proofs::claims_all())
      if (k.search) with += (with.empty() ? "" : ", ") + k.id;
    throw input_error("claims search", "ID", "expected a claim with a search mode (" + with + "), got \"" + args.id + "\"");
  }
  if (!args.cert_dir.empty()) {  // checked before any instance runs: a path that cannot be a directory is bad input
    std::error_code ec;
    std::filesystem::create_directories(args.cert_dir, ec);
    if (ec || !std::filesystem::is_directory(args.cert_dir, ec))
      throw input_error(args.cert_dir, "", "expected a directory for --cert-dir (it is created when missing), got " +
                                               (ec ? ec.message() : std::string("a file that is not a directory")));
  }
  std::size_t k = args.search ? args.budget : args.instances ? args.instances : c->default_instances;
  auto prog = [&](std::size_t d, std::size_t t) { progress(std::string(args.search ? "claims search " : "claims run ") + c->id, d, t); };
  // Instances run side by side on --threads (default all cores); the kernels inside each keep their own.
  const int threads = threads_option();
  proofs::ClaimRun run = args.search ? proofs::claim_search(*c, k, args.seed, prog, threads)
                                     : proofs::claim_run(*c, k, args.seed, prog, threads);
  if (!args.cert_dir.empty()) {
    std::filesystem::create_directories(args.cert_dir);
    for (const auto& r : run.records)
      if (!r.result.certificate.is_null() && r.certificate_verified)  // never one the checker refused
        file_write_atomic(args.cert_dir + "/" + file_stem(c->id) + "-" + std::to_string(r.index) + ".json",
                          r.result.certificate.dump() + "\n");
  }
  nlohmann::json j = proofs::claim_run_json(run);
  std::size_t refused = 0;
  for (const auto& r : run.records) refused += !r.result.certificate.is_null() && !r.certificate_verified;
  j["certificates_refused"] = refused;
  if (args.search) {
    j["mode"] = "search";
    j["budget"] = args.budget;
    j["verdict"] = run.finding() ? "counterexample" : "no counterexample found";
  }
  std::ostringstream h;
  h << c->id << ": " << c->statement << "\n";
  if (c->expect == Expect::counterexample)
    h << "  boundary claim: a certified counterexample to \"" << c->refutes << "\" confirms it\n";
  for (const auto& r : run.records)
    h << "  #" << r.index << " " << r.params.dump() << " " << proofs::outcome_name(r.result.outcome) << ": "
      << r.result.summary << (r.certificate_verified ? " [checker: valid]" : "") << "\n";
  if (run.records.size() && !run.records[0].result.note.empty()) h << "  note: " << run.records[0].result.note << "\n";
  h << "verdict: ";
  if (args.search)
    h << (run.finding() ? "COUNTEREXAMPLE FOUND (" + std::to_string(run.counterexamples) + " certified witness(es))"
                        : "no counterexample in " + std::to_string(run.records.size()) + " structured instances (" +
                              std::to_string(run.confirmed) + " confirmed, " + std::to_string(run.undecided) + " undecided)");
  else if (run.holds())
    h << "CONFIRMED on " << run.confirmed << "/" << run.records.size() << " instances";
  else if (run.finding())
    h << "COUNTEREXAMPLE FOUND (" << run.counterexamples << " certified witness(es)) to a claim expected to hold";
  else
    h << "not confirmed: " << run.confirmed << "/" << run.records.size() << " confirmed, " << run.undecided
      << " undecided";
  if (!args.cert_dir.empty()) h << "\ncertificates written to " << args.cert_dir;
  emit(args.json, j, h.str(), start);
  // A certificate the independent checker refused decides nothing: its instance counts as undecided (the
  // record says "certificate_verified": false and why), and it is not written. Said on stderr as well.
  for (const auto& r : run.records)
    if (!r.result.certificate.is_null() && !r.certificate_verified)
      std::cerr << "memcert: note: instance " << r.index << ": the independent checker did not accept its certificate ("
                << r.checker_reason << "); counted as undecided, not written\n";
  if (run.finding()) return kExitNegative;  // certified counterexample to a claim expected to hold
  if (args.search || run.holds()) return kExitHolds;
  return kExitUndecided;                    // undecided instances, or a boundary claim not demonstrated
}

const CommandRegistrar reg{{80, [](CLI::App& root, auto bind) {
  CLI::App* claims = root.get_subcommand("claims");
  auto largs = std::make_shared<ClaimsArgs>();
  CLI::App* list = claims->add_subcommand("list", "List the registered theory claims");
  list->add_flag("--json", largs->json, "Print one JSON object");
  bind(list, [largs] { return run_list(*largs); });

  auto rargs = std::make_shared<ClaimsArgs>();
  CLI::App* run = claims->add_subcommand("run", "Run a claim on generated instances and certify each");
  run->add_option("ID", rargs->id, "Claim id (see claims list)")->required();
  add_int_option(run, "--instances", rargs->instances, 1, 1 << 20, "Number of instances (default: the claim's own)");
  add_int_option(run, "--seed", rargs->seed, 0, 9223372036854775807LL, "Seed of the instance generator");
  run->add_option("--cert-dir", rargs->cert_dir, "Write each instance's certificate to DIR/<id>-<i>.json");
  run->add_flag("--json", rargs->json, "Print one JSON object");
  bind(run, [rargs] { return run_claim(*rargs); });

  auto sargs = std::make_shared<ClaimsArgs>();
  sargs->search = true;
  CLI::App* search = claims->add_subcommand("search", "Try a claim on structured and adversarial instances, certify any counterexample");
  search->add_option("ID", sargs->id, "Claim id with a search mode (see proofs/README.md)")->required();
  add_int_option(search, "--budget", sargs->budget, 1, 1000000, "Number of instances to try")->required();
  add_int_option(search, "--seed", sargs->seed, 0, 9223372036854775807LL, "Seed of the search");
  search->add_option("--cert-dir", sargs->cert_dir, "Write each instance's certificate to DIR/<id>-<i>.json");
  search->add_flag("--json", sargs->json, "Print one JSON object");
  bind(search, [sargs] { return run_claim(*sargs); });
}}};

}  // namespace
}  // namespace memcert::cli
