// The claims registry and the run loop shared by `memcert claims` and tests/proofs.
#include "memcert/proofs/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>

#include "memcert/checker/checker.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert::proofs {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::confirmed: return "confirmed";
    case Outcome::counterexample: return "counterexample";
    default: return "undecided";
  }
}

namespace {
std::vector<Claim>& pending() {
  static std::vector<Claim> v;
  return v;
}
}  // namespace

ClaimRegistrar::ClaimRegistrar(Claim c) { pending().push_back(std::move(c)); }

const std::vector<Claim>& claims_all() {
  static std::once_flag once;
  static std::vector<Claim> sorted;
  std::call_once(once, [] {
    sorted = pending();
    std::sort(sorted.begin(), sorted.end(), [](const Claim& a, const Claim& b) { return a.id < b.id; });
    for (std::size_t i = 1; i < sorted.size(); ++i)
      if (sorted[i].id == sorted[i - 1].id) throw std::logic_error("duplicate claim id " + sorted[i].id);
  });
  return sorted;
}

const Claim* claim_find(const std::string& id) {
  for (const auto& c : claims_all())
    if (c.id == id) return &c;
  return nullptr;
}

std::uint64_t instance_seed(std::uint64_t seed, std::size_t index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(index) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool ClaimRun::finding() const {
  return claim && claim->expect == Expect::holds && counterexamples > 0;
}

namespace {
// One instance, generated, checked and re-verified by the independent checker. Instances share nothing
// (each has its own seed and data), so claim_run may run several at once.
InstanceRecord claim_run_instance(const Claim& c, std::uint64_t seed, std::size_t i) {
  InstanceRecord rec;
  rec.index = i;
  rec.seed = instance_seed(seed, i);
  try {
    Instance inst = c.generate(rec.seed, i);
    rec.params = inst.params;
    rec.result = c.check(inst);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {  // a failing instance is undecided, never a verdict
    rec.result = InstanceResult{};
    rec.result.summary = std::string("internal error on this instance: ") + e.what();
  }
  // A decided outcome stands only if its certificate re-verifies independently.
  if (!rec.result.certificate.is_null()) {
    auto v = memcert_checker::verify_certificate_text(rec.result.certificate.dump());
    rec.certificate_verified = v.valid;
    rec.checker_reason = v.reason;
    if (!v.valid && rec.result.outcome != Outcome::undecided) {
      rec.result.summary += " [certificate rejected by the checker: " + v.reason + "]";
      rec.result.outcome = Outcome::undecided;
    }
  } else if (rec.result.outcome != Outcome::undecided) {
    rec.result.summary += " [no certificate]";
    rec.result.outcome = Outcome::undecided;
  }
  return rec;
}
}  // namespace

ClaimRun claim_run(const Claim& c, std::size_t instances, std::uint64_t seed,
                   const std::function<void(std::size_t, std::size_t)>& progress, int threads) {
  ClaimRun run;
  run.claim = &c;
  run.records.resize(instances);
  std::mutex progress_mutex;
  std::size_t done = 0;
  // Records land at their own index, so the run (and its JSON) is the same on any number of threads.
  parallel_for(instances, threads <= 0 ? fast_threads() : threads, [&](std::size_t i) {
    run.records[i] = claim_run_instance(c, seed, i);
    std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (progress) progress(done, instances);
  });
  const Outcome confirming = c.expect == Expect::holds ? Outcome::confirmed : Outcome::counterexample;
  for (const auto& rec : run.records) {
    if (rec.result.outcome == Outcome::undecided) ++run.undecided;
    else if (rec.result.outcome == confirming) ++run.confirmed;
    if (rec.result.outcome == Outcome::counterexample) ++run.counterexamples;
  }
  return run;
}

ClaimRun claim_search(const Claim& c, std::size_t budget, std::uint64_t seed,
                      const std::function<void(std::size_t, std::size_t)>& progress, int threads) {
  if (!c.search) throw std::logic_error("claim " + c.id + " has no search mode");
  Claim structured = c;
  structured.generate = c.search;
  ClaimRun run = claim_run(structured, budget, seed, progress, threads);
  run.claim = &c;
  return run;
}

nlohmann::json claim_run_json(const ClaimRun& run, bool with_certificates) {
  const Claim& c = *run.claim;
  nlohmann::json j;
  j["claim"] = c.id;
  j["statement"] = c.statement;
  j["expect"] = c.expect == Expect::holds ? "holds" : "counterexample";
  if (!c.refutes.empty()) j["refutes"] = c.refutes;
  j["instances"] = run.records.size();
  j["confirmed"] = run.confirmed;
  j["undecided"] = run.undecided;
  nlohmann::json cex = nlohmann::json::array();
  nlohmann::json results = nlohmann::json::array();
  std::string note;
  for (const auto& r : run.records) {
    nlohmann::json e;
    e["instance"] = r.index;
    e["seed"] = r.seed;
    e["params"] = r.params;
    e["outcome"] = outcome_name(r.result.outcome);
    e["summary"] = r.result.summary;
    if (!r.result.figures.is_null()) e["figures"] = r.result.figures;
    e["certificate_verified"] = r.certificate_verified;
    if (!r.checker_reason.empty()) e["checker_reason"] = r.checker_reason;
    if (with_certificates && !r.result.certificate.is_null()) e["certificate"] = r.result.certificate;
    if (!r.result.note.empty()) note = r.result.note;
    if (r.result.outcome == Outcome::counterexample) {
      nlohmann::json w = e;
      w["witness"] = r.result.witness;
      cex.push_back(std::move(w));
    }
    results.push_back(std::move(e));
  }
  j["counterexamples"] = cex;
  j["results"] = results;
  if (!note.empty()) j["note"] = note;
  std::string verdict = run.holds() ? "confirmed" : run.finding() ? "counterexample" : "undecided";
  j["verdict"] = verdict;
  return j;
}

}  // namespace memcert::proofs
