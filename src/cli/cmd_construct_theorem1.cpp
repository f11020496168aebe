// memcert construct theorem1 DATASET --heads H --dh DH [--dv DV] [--skip] [--seed S] [--tolerance TOL]
//                                    [--c proof|weyl|network|VALUE] [--no-saturation] --out CERT [--json]
// mahdavi24 Theorem 1 constructed step by step (docs/THEORY.md section 4) and certified. JSON (docs/CLI.md):
//   {"claim":"mahdavi24/theorem-1","H","n","d","dh","r","T","rank_Z_lower","memorized",
//    "saturation":[{"head","c","c_proof","c_weyl","c_weyl_lower","sigma_lower","eps",...}...],
//    "c_scale","c_network","seconds"}  (+ "hypotheses", "verified")
// --c picks the scale of every saturating head: the proof's c (default), each head's c_weyl, the common
// c_network, or one common exact VALUE; every c reported here rebuilds the same weights when passed back.
// Exit: 0 memorized and the certificate re-verified by the independent checker; 1 a hypothesis fails
// (witness printed, no certificate written) or the labels could not be certified; 2 bad usage/input;
// 3 undecided (a rank certificate failed, e.g. at the chosen scale: nothing written).
#include <iostream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace {

struct Args {
  std::string dataset, out, tolerance = "1e-6";
  std::size_t H = 0, dh = 0;
  long dv = -1;
  std::uint64_t seed = 1;
  std::string c = "proof";
  bool skip = false, json = false, no_saturation = false;
};

std::string num(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  AttentionDataset ds = attention_dataset_read(a.dataset);
  mahdavi24::Theorem1Options opt;
  opt.H = a.H;
  opt.dh = a.dh;
  if (a.dv >= 0) opt.dv = static_cast<std::size_t>(a.dv);
  opt.skip = a.skip;
  opt.seed = a.seed;
  opt.saturation = !a.no_saturation;
  if (a.c == "proof" || a.c == "weyl" || a.c == "network") {
    opt.scale = a.c;
  } else {
    auto cv = rational_parse(a.c);
    if (!cv || *cv < 0) throw InputError("--c: expected proof, weyl, network or an exact number >= 0, got " + a.c);
    opt.scale = "value";
    opt.c_value = *cv;
  }
  StageTimes times;
  opt.timings = &times;
  // progress() draws a bar on a terminal, plain lines past 2 s otherwise, nothing under --quiet.
  opt.progress = [](std::size_t done, std::size_t total) { progress("construct theorem1: heads", done, total); };
  auto tol = rational_parse(a.tolerance);
  if (!tol || *tol < 0) throw InputError("--tolerance: expected an exact non-negative number, got " + a.tolerance);
  opt.tolerance = *tol;
  nlohmann::json j{{"claim", "mahdavi24/theorem-1"}, {"H", a.H}, {"n", ds.n()}, {"d", ds.d()}, {"dh", a.dh}};
  mahdavi24::Theorem1Result res;
  try {
    res = mahdavi24::theorem1_construct(ds, opt);
  } catch (const mahdavi24::HypothesisFailure& f) {
    j["r"] = std::min(ds.n(), a.dh);
    j["T"] = ds.T();
    j["rank_Z_lower"] = nullptr;
    j["memorized"] = false;
    j["saturation"] = nlohmann::json::array();
    j["hypothesis_failure"] = f.what();
    j["witness"] = f.witness;
    emit(a.json, j, std::string("NOT CONSTRUCTED: ") + f.what() + "\nwitness: " + f.witness.dump(), start);
    return kExitNegative;
  } catch (const InputError&) {
    throw;  // bad usage or input: exit 2 (main)
  } catch (const std::runtime_error& e) {
    // A rank certificate that does not go through (at the chosen scale, or a step of the construction)
    // proves nothing either way: undecided, nothing written.
    j["r"] = std::min(ds.n(), a.dh);
    j["T"] = ds.T();
    j["rank_Z_lower"] = nullptr;
    j["memorized"] = false;
    j["c_scale"] = a.c;
    j["saturation"] = nlohmann::json::array();
    j["undecided"] = e.what();
    emit(a.json, j, std::string("UNDECIDED: ") + e.what() + " (nothing written)", start);
    return kExitUndecided;
  }
  std::string text;
  {
    StageTimes::Scope clock(&times, "certificate JSON");
    text = res.certificate.dump();
  }
  memcert_checker::Verdict v;
  if (res.memorized) {
    {
      StageTimes::Scope clock(&times, "independent checker");
      v = memcert_checker::verify_certificate_text(text);
    }
    StageTimes::Scope clock(&times, "write");
    if (v.valid) file_write_atomic(a.out, text + "\n");
  } else {
    v.reason = res.class_labels ? "arg-max not certified for every example"
                                : "labels reproduced only within " + nlohmann::json(res.max_label_error).dump() +
                                      " > tolerance " + a.tolerance;
  }
  j["r"] = res.r;
  j["T"] = res.T_star;
  j["rank_Z_lower"] = res.rank_Z_lower;
  j["memorized"] = res.memorized && v.valid;
  j["verified"] = v.valid;
  if (!v.valid) j["reason"] = v.reason;
  j["hypotheses"] = res.hypotheses;
  j["skip"] = res.skip;
  j["d_out"] = res.d_out;
  j["tolerance"] = rational_to_string(res.tolerance);
  if (res.class_labels) j["min_class_margin"] = res.min_class_margin;
  else j["max_label_error"] = res.max_label_error;
  nlohmann::json sat = nlohmann::json::array();
  std::string human = "mahdavi24 Theorem 1: H=" + std::to_string(res.H) + " n=" + std::to_string(res.n) + " d=" +
                      std::to_string(res.d) + " dh=" + std::to_string(res.dh) + " r=" + std::to_string(res.r) + " T=" +
                      std::to_string(res.T_star) + " (hypotheses: " + res.hypotheses + ")\n";
  const auto& tr = res.certificate["trace"];
  for (std::size_t h = 0; h < res.trace.size(); ++h) {
    const auto& t = res.trace[h];
    auto q = [](const std::optional<Rational>& x) { return x ? nlohmann::json(rational_to_string(*x)) : nlohmann::json(nullptr); };
    nlohmann::json e{{"head", t.head},
                     {"c", rational_to_string(t.c)},
                     {"c_proof", rational_to_string(t.c_proof)},
                     {"c_weyl", q(t.c_weyl)},
                     {"c_weyl_lower", q(t.c_weyl_lower)},
                     {"sigma_lower", t.sigma_lower},
                     {"eps", t.eps ? nlohmann::json(rational_to_string(*t.eps)) : nlohmann::json(nullptr)},
                     {"eps_criterion", t.eps_criterion},
                     {"sigma_weyl", t.sigma_weyl},
                     {"eps_weyl", t.eps_weyl}};
    sat.push_back(e);
    human += "  head " + std::to_string(t.head) + ": " + std::to_string(t.group.size()) + " new examples, c = " +
             num(tr[h]["c"]) + " (proof " + rational_to_string(t.c_proof) + ", c_weyl " + num(q(t.c_weyl)) + "), eps = " +
             num(tr[h]["eps"]) + " (" + t.eps_criterion + "), sigma_lower = " + std::to_string(t.sigma_lower) + "\n";
  }
  j["saturation"] = sat;
  j["c_scale"] = a.c;
  j["c_network"] = res.c_network ? nlohmann::json(rational_to_string(*res.c_network)) : nlohmann::json(nullptr);
  j["c_network_sigma_lower"] = res.network_sigma_lower;
  human += "c_network = " + (res.c_network ? rational_to_string(*res.c_network) : std::string("not found on the grid")) +
           " (every head at one c); weights built at --c " + a.c + "\n";
  nlohmann::json tj = nlohmann::json::object();  // wall-clock seconds per stage (construction, checker, write)
  for (auto& [stage, secs] : times.entries()) tj[stage] = secs;
  j["timings"] = tj;
  human += "rank(Z) >= " + std::to_string(res.rank_Z_lower) + " certified; labels " +
           (res.labels_ok ? "reproduced" : "NOT certified") + "; independent checker: " +
           (v.valid ? "VALID, certificate written to " + a.out
                    : (res.memorized ? "REJECTED (" : "not run (") + v.reason + "), nothing written");
  emit(a.json, j, human, start);
  if (!res.memorized) return kExitNegative;  // verdict negative: no certificate written
  if (!v.valid) {
    std::cerr << "memcert: internal error: the independent checker rejected the constructed certificate: " << v.reason << "\n";
    return kExitInternal;
  }
  return res.memorized ? kExitHolds : kExitNegative;
}

const CommandRegistrar reg{{40, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.get_subcommand("construct")->add_subcommand("theorem1", "mahdavi24 Theorem 1: MHA weights memorizing H(r-1)+1 examples, certified");
  sub->add_option("DATASET", args->dataset, "Attention data set (.json or .npz)")->required();
  sub->add_option("--heads", args->H, "Number of heads H")->required();
  sub->add_option("--dh", args->dh, "Head dimension d_h")->required();
  sub->add_option("--dv", args->dv, "Value dimension d_v (default d_out)");
  sub->add_flag("--skip", args->skip, "Attention with skip connection (appendix C)");
  sub->add_option("--seed", args->seed, "Seed for the random choices (targets, Lemma 3)");
  sub->add_option("--tolerance", args->tolerance, "Label tolerance (exact number, default 1e-6)");
  sub->add_option("--c", args->c, "Saturation scale: proof (default), weyl, network, or an exact VALUE for every head");
  sub->add_flag("--no-saturation", args->no_saturation, "Skip computing c_weyl and c_network (faster)");
  sub->add_option("--out", args->out, "Certificate output (.json)")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
