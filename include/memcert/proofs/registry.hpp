#pragma once
// The claims registry: every paper statement memcert regression-tests (proofs/*.cpp, one file per claim).
//
// A claim is an id ("mahdavi24/proposition-2"), a one-sentence statement, an instance generator and a
// check. Claims register themselves through a static `ClaimRegistrar` object in their proofs/*.cpp file;
// the proofs library is linked whole-archive into the CLI and the tests so every registrar runs.
//
// Two kinds of claims (see proofs/README.md, "Semantics"):
//  * Expect::holds     — the paper's statement, expected true on every instance. The check returns
//                        `confirmed` (certified on this instance), `counterexample` (the statement FAILED
//                        on this instance: a finding, reported with its certified witness) or `undecided`.
//  * Expect::counterexample — a boundary / ablation variant: a hypothesis of the statement named in
//                        `refutes` is dropped or sits at its boundary, and the naive statement (the one
//                        without the hypothesis) is expected to FAIL. The check returns `counterexample`
//                        when it found and certified a witness against the naive statement (this CONFIRMS
//                        the boundary claim), `confirmed` when the naive statement happened to hold on
//                        the instance (the boundary claim is then not demonstrated by this instance).
//
// `claim_run` turns per-instance outcomes into the run verdict and re-verifies every certificate with
// the independent checker (memcert_checker); an outcome whose certificate is rejected is `undecided`.
#include <any>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace memcert::proofs {

enum class Expect { holds, counterexample };
enum class Outcome { confirmed, counterexample, undecided };
const char* outcome_name(Outcome o);  // "confirmed" | "counterexample" | "undecided"

// One generated instance: its parameters (JSON, shown to the user) and its data (claim-specific type).
struct Instance {
  nlohmann::json params;  // e.g. {"H":3,"n":3,"d":5,"T":9,"seed":...}
  std::any data;          // what the check reads (any_cast to the claim's own type)
};

// What the check of one instance found.
struct InstanceResult {
  Outcome outcome = Outcome::undecided;
  std::string summary;          // one line for the human output
  nlohmann::json figures;       // measured values: ranks, bounds, ... (object)
  nlohmann::json witness;       // for `counterexample`: the witness in readable form (object), else null
  nlohmann::json certificate;   // a certificate `memcert verify` accepts ({"kind":..., "claim":...}), or null
  std::string note;             // e.g. "ceiling of the proof technique, not of capacity"
};

struct Claim {
  std::string id;               // "mahdavi24/lemma-2", "mahdavi24/lemma-2-boundary", ...
  std::string statement;        // one sentence
  std::string method;           // how memcert certifies it (one sentence; proofs/README.md repeats it)
  Expect expect = Expect::holds;
  std::string refutes;          // Expect::counterexample: the naive statement that is expected to fail
  std::size_t default_instances = 5;
  std::function<Instance(std::uint64_t seed, std::size_t index)> generate;
  std::function<InstanceResult(const Instance&)> check;
  // Structured / adversarial instances for `claims search` (empty: the claim has no search mode). Index i
  // cycles through the claim's families (Kruskal rank exactly k, integer lattices, tiny dimensions,
  // inputs built near a known failure, ...); params name the family.
  std::function<Instance(std::uint64_t seed, std::size_t index)> search = {};
};

// Self-registration: `static memcert::proofs::ClaimRegistrar reg{ Claim{...} };` in a proofs/*.cpp file.
struct ClaimRegistrar {
  explicit ClaimRegistrar(Claim c);
};

// All registered claims, sorted by id. Throws std::logic_error on a duplicate id (at first call).
const std::vector<Claim>& claims_all();
// nullptr when unknown.
const Claim* claim_find(const std::string& id);

// The outcome of `claims run`.
struct InstanceRecord {
  std::size_t index = 0;
  std::uint64_t seed = 0;
  nlohmann::json params;
  InstanceResult result;
  bool certificate_verified = false;  // re-verified by memcert_checker (false when there is none)
  std::string checker_reason;         // why the checker rejected it
};
struct ClaimRun {
  const Claim* claim = nullptr;
  std::vector<InstanceRecord> records;
  std::size_t confirmed = 0;       // instances that confirm the CLAIM (for boundary claims: the
                                   // counterexample to the naive statement was found and certified)
  std::size_t counterexamples = 0; // instances with a certified counterexample (to the claim, or for
                                   // boundary claims to the naive statement)
  std::size_t undecided = 0;
  // holds == true iff every instance confirmed the claim (exit 0); otherwise exit 1.
  bool holds() const { return !records.empty() && confirmed == records.size(); }
  // A claim expected to hold produced a certified counterexample: a finding.
  bool finding() const;
};

// Runs `instances` instances (seed_i = seed mixed with i) on `threads` threads (<= 0: all cores; 1: one
// after another); `progress(done,total)` is called after each, one call at a time. The records, and so
// the verdict and the JSON, do not depend on the thread count: record i is instance i.
ClaimRun claim_run(const Claim& c, std::size_t instances, std::uint64_t seed,
                   const std::function<void(std::size_t, std::size_t)>& progress = {}, int threads = 1);

// `claims search`: `budget` instances from c.search (std::logic_error when the claim has none), checked and
// re-verified exactly like claim_run. A certified counterexample to a claim expected to hold is a finding.
ClaimRun claim_search(const Claim& c, std::size_t budget, std::uint64_t seed,
                      const std::function<void(std::size_t, std::size_t)>& progress = {}, int threads = 1);

// The docs/CLI.md JSON of a run: {"claim","instances","confirmed","counterexamples":[...]} plus
// "expect","refutes","verdict","undecided","results":[per-instance summaries]. `with_certificates`
// embeds each certificate (can be large).
nlohmann::json claim_run_json(const ClaimRun& run, bool with_certificates = false);

// Deterministic per-instance seed (splitmix64 of seed and index).
std::uint64_t instance_seed(std::uint64_t seed, std::size_t index);

}  // namespace memcert::proofs
