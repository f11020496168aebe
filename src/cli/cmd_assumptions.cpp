// memcert assumptions DATASET [--budget B] [--separation auto|on|off] [--json]
// mahdavi24's hypotheses decided exactly (docs/THEORY.md section 2). JSON (docs/CLI.md):
//   {"T","n","d","assumption1":{"holds","kruskal_lower","kruskal_upper","method",...},
//    "assumption2":{"holds","failing":[t...]},"assumption3":{...},"general_position":{...},
//    "separation":{"r2","delta2","computed","pairs","mode"},"seconds"}  ("holds" is true, false, or null when
//    undecided; "delta2" is null when the all-pairs minimum was not computed: --separation auto|on|off)
// Exit: 0 when Assumptions 1 and 2 hold, 1 when one fails (witness in the output) or is undecided,
// 2 bad input.

#include <gmpxx.h>

#include "command.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"
#include "memcert/theory/mahdavi24/assumptions_typed.hpp"

namespace memcert::cli {
namespace cmd_assumptions {

struct Args {
  std::string dataset, tol, separation = "auto";
  std::uint64_t budget = 20'000'000;
  bool json = false;
};

std::string holds_text(const nlohmann::json& h) { return h.is_null() ? "undecided" : (h.get<bool>() ? "holds" : "FAILS"); }

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  mahdavi24::SeparationMode sep = mahdavi24::SeparationMode::automatic;
  if (!mahdavi24::separation_mode_parse(a.separation, sep))
    throw InputError("--separation: expected auto, on or off, got " + a.separation);
  // Typed storage: float/int data go through the engine's certified kernels, never a rational per entry;
  // float32 contexts stay float32 (the kernels widen one context at a time).
  // Labels play no part in the assumptions: not read (a file's labels never stop this command).
  AttentionReadOptions read;
  read.storage = AttentionReadOptions::Storage::typed;
  read.keep_float32 = true;
  read.with_labels = false;
  read.rational_queries = false;  // the report reads the typed storage alone
  const AttentionDataset ds = attention_dataset_read(a.dataset, read);
  // numpy's ranks come with the report (the contexts read once for them and Assumption 2).
  const mahdavi24::NumericalRanksOption numerical{numerical_tol_option(a.tol)};
  nlohmann::json j = mahdavi24::assumptions_report(ds, a.budget, threads_option(), sep, &numerical);
  const auto& a1 = j["assumption1"];
  const auto& a2 = j["assumption2"];
  std::string h = "T=" + std::to_string(ds.T()) + " n=" + std::to_string(ds.n()) + " d=" + std::to_string(ds.d()) + "\n";
  h += "Assumption 1 (queries Kruskal rank >= " + a1["required"].dump() + "): " + holds_text(a1["holds"]) +
       " [kruskal in " + a1["kruskal_lower"].dump() + ".." + a1["kruskal_upper"].dump() + ", " + a1["method"].get<std::string>() + "]";
  if (a1.contains("dependent_subset")) h += " dependent subset " + a1["dependent_subset"].dump();
  h += "\n  Remark 1: " + a1["remark1"].get<std::string>() + "\n";
  if (a1["holds"].is_null()) {
    // Why it is undecided, and what construct theorem1 then certifies in its place (docs/THEORY.md).
    const std::size_t k = a1["required"].get<std::size_t>();
    mpz_class subsets;
    mpz_bin_uiui(subsets.get_mpz_t(), ds.T(), k);
    mpf_class f(subsets, 64);
    char approx[64];
    gmp_snprintf(approx, sizeof approx, "%.3Fg", f.get_mpf_t());
    h += "  why undecided: Kruskal rank >= " + std::to_string(k) + " means every " + std::to_string(k) + "-subset of the " +
         std::to_string(ds.T()) + " queries (vectors in " + std::to_string(ds.d()) + " dimensions) is independent: C(" +
         std::to_string(ds.T()) + ", " + std::to_string(k) + ") = " + approx + " subsets; within --budget " +
         std::to_string(a.budget) + " no dependent subset was found and not all were certified\n";
    h += "  construct theorem1 does not rely on it: it certifies, for its own grouping of the examples, the facts its "
         "construction uses (hypotheses \"grouping-facts\": every context of rank n, each head's queries Q_{R_h} of full "
         "column rank, and no earlier query in their span)\n";
  }
  h += "Assumption 2 (every context rank n): " + holds_text(a2["holds"]);
  if (!a2["failing"].empty()) h += " failing " + a2["failing"].dump();
  h += "\nAssumption 3 (e + xbar Kruskal rank >= " + j["assumption3"]["required"].dump() + "): " + holds_text(j["assumption3"]["holds"]);
  h += "\nGeneral position of the queries: " + holds_text(j["general_position"]["holds"]);
  const auto& js = j["separation"];
  h += "\nToken separation (ks25 Assumption 4.1): r^2 = " + exact_text(js["r2"].get<std::string>()) + ", delta^2 = ";
  if (js["computed"].get<bool>()) h += exact_text(js["delta2"].get<std::string>());
  else
    h += "not computed (" + js["pairs"].dump() + " pairs of tokens" +
         (a.separation == "off" ? std::string(", --separation off") : std::string(" exceed the automatic budget")) +
         "; --separation on computes it)";
  // Numerically (numpy's rank at --tol): contexts whose exact rank n rests on rounding-level directions.
  const nlohmann::json below = j["numerical"]["contexts_rank_below_n"];
  const std::size_t nq_rank = j["numerical"]["queries_rank"].get<std::size_t>();
  j["numerical"]["tol"] = a.tol.empty() ? "default" : a.tol;
  h += "\nNumerically (numpy's matrix_rank" + (a.tol.empty() ? std::string() : ", tol " + a.tol) + "): queries rank " +
       std::to_string(nq_rank) + ", " + std::to_string(below.size()) + " context(s) of rank < n";
  if (a2["holds"].get<bool>() && !below.empty())
    h += "\nwarning: Assumption 2 holds exactly, but contexts " + below.dump() +
         " are numerically rank deficient: the exact verdict rests on rounding-level directions of the stored values";
  emit(a.json, j, h, start);
  // The verdict is "Assumptions 1 and 2 hold": a certified failure of either is negative; an undecided
  // Assumption 1 (sampling found no dependent subset, enumeration out of budget) is no verdict.
  if (!a2["holds"].get<bool>() || (a1["holds"].is_boolean() && !a1["holds"].get<bool>())) return kExitNegative;
  return a1["holds"].is_boolean() ? kExitHolds : kExitUndecided;
}

const CommandRegistrar reg{{30, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("assumptions", "mahdavi24 Assumptions 1-3, general position, token separation (exact)");
  sub->add_option("DATASET", args->dataset, "Attention data set (.json or .npz)")->required();
  sub->add_option("--tol", args->tol, "Threshold for the numerical ranks (default numpy's: sigma_max * max(m, n) * eps)");
  add_int_option(sub, "--budget", args->budget, 1, 1LL << 50, "Kruskal enumeration budget (subset extensions)");
  sub->add_option("--separation", args->separation,
                  "Exact minimum token distance delta^2 over all pairs: auto (when the pairs are few enough), on, off");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
