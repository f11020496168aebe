// memcert demo [--json] [--heads H --n n --d d --dh DH --seed S]
// The main job on an embedded default (docs/CLI.md): generate a data set satisfying Assumptions 1-2
// (uniform random rationals m/64, H=4, n=5, d=8, d_h=5), run the Theorem 1 construction step by step
// (printing each step in the paper's words), and verify the certificate with the independent checker.
// JSON: {"claim","H","n","d","dh","T","memorized","verified","seconds"}
#include <iostream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_demo {

struct Args {
  std::size_t H = 4, n = 5, d = 8, dh = 5;
  std::uint64_t seed = 2024;
  bool json = false;
};

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  if (a.H == 0 || a.n == 0 || a.d == 0 || a.dh == 0) throw InputError("demo: expected --heads, --n, --d, --dh >= 1");
  if (a.n > a.d) throw InputError("demo: expected n <= d");
  const std::size_t r = mahdavi24::theorem1_r(a.n, a.dh), T = mahdavi24::t_star(a.H, r);
  std::string text;
  auto say = [&](const std::string& s) { text += s + "\n"; };
  say("memcert demo: mahdavi24 Theorem 1 (Memorization Capacity of Multi-Head Attention), constructed and certified.");
  say("Data: T = " + std::to_string(T) + " examples, each a context E (n = " + std::to_string(a.n) + " tokens in R^" +
      std::to_string(a.d) + ") and a query e, entries uniform rationals m/64 in [-1, 1], real labels (seed " +
      std::to_string(a.seed) + ").");
  AttentionDataset ds = mahdavi24::generate_attention_dataset("theorem1", T, a.n, a.d, std::nullopt, a.seed);
  mahdavi24::Theorem1Options opt;
  opt.H = a.H;
  opt.dh = a.dh;
  opt.seed = a.seed;
  opt.narrate = say;
  mahdavi24::Theorem1Result res = mahdavi24::theorem1_construct(ds, opt);
  memcert_checker::Budget budget;  // the run's memory budget (none with --max-memory 0)
  budget.max_bytes = checker_max_bytes();
  memcert_checker::Verdict v = memcert_checker::verify_certificate_text(res.certificate.dump(), budget);
  say(std::string("Independent checker (GMP + MPFR only, recomputes the forward pass from the exact weights): ") +
      (v.valid ? "certificate VALID." : "certificate REJECTED: " + v.reason));
  say(res.memorized && v.valid
          ? "Conclusion: this " + std::to_string(a.H) + "-head attention layer memorizes all " + std::to_string(res.T_star) +
                " = H(r-1)+1 examples, as Theorem 1 promises."
          : "Conclusion: memorization NOT certified.");
  nlohmann::json j{{"claim", "mahdavi24/theorem-1"}, {"H", a.H}, {"n", a.n}, {"d", a.d}, {"dh", a.dh},
                   {"T", res.T_star}, {"memorized", res.memorized}, {"verified", v.valid}};
  emit(a.json, j, text, start);
  return res.memorized && v.valid ? kExitHolds : kExitNegative;
}

const CommandRegistrar reg{{5, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("demo", "Theorem 1 of mahdavi24 on an embedded default, step by step, independently verified");
  add_int_option(sub, "--heads", args->H, 1, 256, "Heads (default 4)");
  add_int_option(sub, "--n", args->n, 1, 4096, "Context size (default 5)");
  add_int_option(sub, "--d", args->d, 1, 4096, "Embedding dimension (default 8)");
  add_int_option(sub, "--dh", args->dh, 1, 4096, "Head dimension (default 5)");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed (default 2024)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
