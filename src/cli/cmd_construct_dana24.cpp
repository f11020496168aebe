// memcert construct dana24 DATASET --heads H --dh DH [--d D] [--seed S] [--targets K] [--check] --out CERT
//                          [--weights-out W.npz] [--json]
// The dana24 association construction (docs/papers/dana24.md section 5), built in floating point and proved end
// to end (every sequence's arg-max certified with outward-rounded intervals). JSON (docs/CLI.md):
//   {"claim","N","S","d","dh","H","T","T0","memorized","memorized_count","min_margin","parameters",
//    "seconds"} plus "n_last","rank_ceiling","rank_certificate","parameters_remark2","nonzero_parameters",
//    "bit_complexity","targets","attempts","det_M_bits","comparison","timings","verified"? (--check),
//    "witness"? (exit 1).
// Exit: 0 every sequence memorized with a certificate written; 1 a certified impossibility (H = 0 and two
// sequences with the same last token but different next tokens: the model's output depends on t_S only);
// 2 bad input; 3 undecided (the construction did not certify: CERT is not written).
#include <iostream>
#include <map>
#include <sstream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/theory/dana24/construct.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_construct_dana24 {

struct Args {
  std::string dataset, out, weights_out, targets = "auto";
  std::size_t H = 0, dh = 0;
  std::optional<std::size_t> d;
  std::uint64_t seed = 1;
  bool json = false, check = false;
};

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  dana24::AssocData data = dana24::assoc_data_read(a.dataset);
  if (a.targets != "auto" && a.targets != "hypercube" && a.targets != "moment")
    throw input_error("construct dana24", "--targets", "expected auto, hypercube or moment, got \"" + a.targets + "\"");
  dana24::Dana24Options o;
  o.H = a.H;
  o.dh = a.dh;
  // Default d: the smallest with T <= H d_h + d (and d >= max(2, d_h)).
  o.d = a.d ? *a.d : std::max<std::size_t>({2, a.dh, data.T() > a.H * a.dh ? data.T() - a.H * a.dh : 0});
  o.seed = a.seed;
  o.targets = a.targets;
  if (o.targets == dana24::Dana24Targets::hypercube) {
    if (dana24::hypercube_bits(data.N) > o.d) throw input_error("construct dana24", "--targets", "expected N <= 2^d for hypercube targets");
  }
  if (o.targets != dana24::Dana24Targets::hypercube && o.d < 2 && data.N > 2)
    throw input_error("construct dana24", "--d", "expected d >= 2 (with d = 1 at most two labels are reachable)");
  const std::string claim = o.d == 2 && o.dh <= 2 ? "dana24/corollary-1" : "dana24/theorem-1-assoc";
  std::ostringstream h;
  h << "dana24 (" << claim << "): N=" << data.N << " S=" << data.S << " T=" << data.T() << ", d=" << o.d
    << " H=" << o.H << " d_h=" << o.dh << " (H d_h + d = " << dana24::capacity(o.H, o.dh, o.d) << ")\n";

  // V1 (docs/papers/dana24.md): with no heads T(t) = W_U (e(t_S) + pos_S) depends on t_S only.
  if (o.H == 0) {
    std::map<std::uint32_t, std::size_t> first;
    for (std::size_t t = 0; t < data.T(); ++t) {
      auto [it, fresh] = first.emplace(data.sequences[t].back(), t);
      if (!fresh && data.next[it->second] != data.next[t]) {
        nlohmann::json j{{"claim", claim}, {"N", data.N}, {"S", data.S}, {"d", o.d}, {"dh", o.dh}, {"H", 0},
                         {"T", data.T()}, {"T0", o.d}, {"memorized", false}, {"memorized_count", nullptr},
                         {"min_margin", nullptr}, {"parameters", dana24::dana24_parameters_paper(data.N, data.S, o.d, o.dh, 0)},
                         {"witness", {{"sequences", {it->second, t}}, {"reason", "H = 0: equal last token, equal input to W_U, different next tokens"}}}};
        h << "  NOT memorizable with H = 0: sequences " << it->second << " and " << t
          << " share their last token (so the input to W_U is identical) but have different next tokens";
        emit(a.json, j, h.str(), start);
        return kExitNegative;
      }
    }
  }

  dana24::Dana24Result r = dana24::dana24_construct(data, o);
  nlohmann::json j = dana24::dana24_summary_json(data, r, claim);
  h << "  distinct last tokens n_last = " << r.n_last << "; construction rank ceiling H min(d_h,d) + min(d,n_last) = "
    << j["rank_ceiling"].get<std::size_t>() << "\n";
  if (r.rank_cert)
    h << "  rank F = T certified (" << r.rank_cert->method << "), sigma_min(F) >= " << r.sigma_min_lower << "\n";
  else
    h << "  rank F = T NOT certified\n";
  h << "  targets: " << r.targets_kind << "; attempts " << r.attempts << "\n";
  h << "  memorized (certified arg-max): " << r.argmax.certified << " / " << data.T();
  if (!r.memorized) {
    h << "\n  undecided: the construction did not certify every sequence; no certificate written";
    emit(a.json, j, h.str(), start);
    return kExitUndecided;
  }
  h << ", smallest certified margin " << exact_text(j["min_margin"].get<std::string>()) << "\n";
  h << "  parameters " << j["parameters"] << " (Remark 2: " << j["parameters_remark2"] << ", non-zero "
    << j["nonzero_parameters"] << "), bits per weight <= " << j["bit_complexity"]["max_bits"] << "\n";
  const std::string cert = dana24::dana24_certificate_json(data, r, claim).dump();
  if (a.check) {  // before writing: a certificate the checker does not accept is never written
    if (!checker_accepts_before_write(cert)) return kExitUndecided;
    j["verified"] = true;
    h << "  independent checker: valid\n";
  }
  file_write_atomic(a.out, cert + "\n");
  if (!a.weights_out.empty()) dana24::dana24_weights_write_npz(a.weights_out, r.model);
  h << "  certificate written to " << a.out;
  emit(a.json, j, h.str(), start);
  return kExitHolds;
}

const CommandRegistrar reg{{48, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.get_subcommand("construct")
                      ->add_subcommand("dana24", "dana24: attention-only Transformer memorizing H d_h + d associations");
  sub->add_option("DATASET", args->dataset, "Token association set (.json / .npz)")->required();
  add_int_option(sub, "--heads", args->H, 0, 4096, "Number of heads H")->required();
  add_int_option(sub, "--dh", args->dh, 1, 1 << 16, "Head dimension d_h (<= d)")->required();
  add_int_option(sub, "--d", args->d, 1, 1 << 16, "Embedding dimension (default max(2, d_h, T - H d_h))");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed for the random choices (each is certified)");
  sub->add_option("--targets", args->targets, "Target encoder: auto (default), hypercube (N <= 2^d) or moment");
  sub->add_flag("--check", args->check, "Also re-verify the written certificate with the independent checker");
  sub->add_option("--out", args->out, "Certificate to write (JSON)")->required();
  sub->add_option("--weights-out", args->weights_out, "Also write the weights as float64 arrays (.npz)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
