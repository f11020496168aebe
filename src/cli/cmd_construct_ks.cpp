// memcert construct ks DATASET [--ablation linear-phi | --deep-sets] [--C C] [--seed S] [--check] --out CERT
//                     [--weights-out W.npz] [--data-ref auto|on|off] [--json]
// The Kajitsuka-Sato construction (ks25 Theorem 4.1; Corollary 4.1 when the data set has per-token
// labels; Theorem D.1, deep sets, with --deep-sets: each sequence read as a multiset), built and verified
// end to end in exact arithmetic. JSON (docs/CLI.md):
//   {"claim","N","n","d","C","parameters","nonzero_parameters","depth","width","bit_complexity",
//    "memorized","collision"?: [i, j], "seconds"} plus "setting", "separation", "consistent",
//    "inconsistent_pair"?, "eq55", "f1", "f2", "bounds" (Theorem B.1's expressions), "verified"? (--check).
// --weights-out W.npz: the network as float64 arrays (ks_weights_float64_arrays; JSON adds "weights_out"),
// written with the certificate of a memorizing network only.
// Exit: 0 memorized and verified; 1 inconsistent labels (the pair) or a collision (ablation; the certified
// pair is written to CERT); 2 bad input; 3 (--check) a certificate the independent checker does not accept
// (nothing written).
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "ks_arrays.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/theory/ks25/construct.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_construct_ks {

struct Args {
  std::string dataset, out, ablation, weights_out, data_ref = "auto";
  std::optional<long> C;
  std::uint64_t seed = 1;
  bool json = false, check = false, deep_sets = false;
};

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  if (!a.ablation.empty() && a.ablation != "linear-phi")
    throw input_error("construct ks", "--ablation", "expected linear-phi, got \"" + a.ablation + "\"");
  if (!a.weights_out.empty() && path_extension_lower(a.weights_out) != ".npz")
    throw input_error(a.weights_out, "", "expected a --weights-out file name ending in .npz");
  // One progress line per stage that runs 2 s or more (a large data set's reading and checking do).
  progress("construct ks: read data", 0, 1);
  TokenSequenceDataset ds = sequence_dataset_read_tokens(a.dataset);
  progress("construct ks: read data", 1, 1);
  // Data by reference (docs/CERTIFICATES.md): the certificate names DATASET and the digest of its values
  // instead of embedding the sequences and labels (Theorem 4.1 / Corollary 4.1).
  if (a.data_ref != "auto" && a.data_ref != "on" && a.data_ref != "off")
    throw input_error("construct ks", "--data-ref", "expected auto, on or off, got \"" + a.data_ref + "\"");
  const bool plain = !a.deep_sets && a.ablation.empty();
  const bool labelled = !ds.labels.empty() || !ds.token_labels.empty();
  if (a.data_ref == "on" && !plain)
    throw input_error("construct ks", "--data-ref", "data by reference is for Theorem 4.1 and Corollary 4.1 certificates (not --deep-sets or --ablation)");
  if (a.data_ref == "on" && !labelled)
    throw input_error(a.dataset, "labels", "expected labels in the data set for --data-ref on (the certificate's labels are the file's)");
  const bool by_ref = plain && labelled && (a.data_ref == "on" || (a.data_ref == "auto" && ds.ids.size() > (std::size_t(1) << 20)));
  std::optional<memcert_checker::KsArrays> ref_arrays;
  if (by_ref) ref_arrays = ks_arrays_from_dataset(ds);
  progress("construct ks: separation and labels", 0, 1);
  ks25::KsPrepared P = ks25::ks_prepare(std::move(ds), a.C, a.dataset);
  progress("construct ks: separation and labels", 1, 1);
  std::ostringstream h;
  h << (P.seq2seq ? "ks25 Corollary 4.1 (seq-to-seq)" : "ks25 Theorem 4.1 (next-token)") << ": N=" << P.N
    << " n=" << P.n << " d=" << P.d << " C=" << P.C << ", " << P.tokens.size() << " distinct tokens, "
    << P.distinct_multisets.size() << " distinct multisets\n";
  h << "  separation (exact): r^2 = " << exact_text(rational_to_string(P.r2))
    << ", delta^2 = " << exact_text(rational_to_string(P.delta2)) << "\n";
  ks25::KsOptions o;
  o.seed = a.seed;
  o.ablation_linear_phi = a.ablation == "linear-phi";
  o.C = a.C;
  if (a.deep_sets && o.ablation_linear_phi)
    throw input_error("construct ks", "--deep-sets", "expected either --deep-sets or --ablation, not both");
  std::optional<ks25::KsResult> built;
  if (a.deep_sets) {
    built = ks25::ks_construct_deep_set(P, o);
    P = built->prep;
    h.str("");
    h << "ks25 Theorem D.1 (deep sets, each sequence as a multiset): N=" << P.N << " n=" << P.n << " d=" << P.d
      << " C=" << P.C << ", " << P.tokens.size() << " distinct tokens, " << P.distinct_multisets.size()
      << " distinct multisets\n";
  }
  if (!P.consistent) {
    ks25::KsResult r;
    r.prep = P;
    r.deep_set = a.deep_sets;
    nlohmann::json j = ks25::ks_summary_json(r);
    const std::string same = a.deep_sets ? std::string("the same multiset")
                             : P.seq2seq ? "the same token at position " + std::to_string(P.inconsistent_position) +
                                               " and the same multiset"
                                         : std::string("the same last token and the same multiset");
    h << "  INCONSISTENT labels: sequences " << P.inconsistent_pair.first << " and " << P.inconsistent_pair.second
      << " have " << same << " but different labels: no such " << (a.deep_sets ? "deep set" : "Transformer")
      << " can memorize them";
    emit(a.json, j, h.str(), start);
    return kExitNegative;
  }
  progress("construct ks: build and certificate", 0, 1);
  ks25::KsResult r = built ? std::move(*built) : ks25::ks_construct(P, o);
  nlohmann::json j = ks25::ks_summary_json(r);
  if (o.ablation_linear_phi) j["ablation"] = "linear-phi";
  std::string cert;
  {
    nlohmann::json c = ks25::ks_certificate_json(r);
    if (ref_arrays) {
      c.erase("sequences");
      c.erase("labels");
      c["data"] = {{"file", a.dataset}, {"digest", memcert_checker::ks_arrays_digest(*ref_arrays)}};
      j["data_ref"] = true;
    }
    cert = c.dump();
  }
  progress("construct ks: build and certificate", 1, 1);
  if (a.check) {  // before writing: a certificate the checker does not accept is never written
    progress("construct ks: independent check", 0, 1);
    const memcert_checker::KsArraysSupplier in_memory = [&ref_arrays](const std::string&, memcert_checker::KsArrays& out,
                                                                      std::string&) {
      out = *ref_arrays;
      return true;
    };
    const bool accepted = checker_accepts_before_write(cert, ref_arrays ? &in_memory : nullptr);
    progress("construct ks: independent check", 1, 1);
    if (!accepted) return kExitUndecided;
    j["verified"] = true;
    h << "  independent checker: valid\n";
  }
  file_write_atomic(a.out, cert + "\n");
  if (r.collision) {
    h << "  COLLISION (ablation " << a.ablation << "): sequences " << r.collision->first << " and "
      << r.collision->second << " have different labels but equal context ids"
      << (r.collision_token_sums_equal ? " (equal last token and token sums: they collide for EVERY linear phi)"
                                       : "")
      << "; certificate written to " << a.out;
    emit(a.json, j, h.str(), start);
    return kExitNegative;
  }
  h << "  parameters " << r.total.parameters << " (non-zero " << r.total.nonzero_parameters << "), depth "
    << r.total.depth << " (f1 " << r.f1c.depth << " + attention 1 + f2 " << r.f2c.depth << "), width "
    << r.total.width << ", bit complexity " << r.total.bit_complexity << "\n";
  h << "  Theorem " << (a.deep_sets ? "D.1" : "B.1") << " expressions (constants hidden): depth ~ "
    << r.bounds.depth_expr << ", bits ~ " << r.bounds.bit_expr << ", log2 R = " << r.bounds.log2_R << ", width <= "
    << r.bounds.width_bound << "\n";
  if (!a.deep_sets) h << "  eq. (55) context ids >= 1/n apart: " << (r.eq55_holds ? "yes" : "NO") << "\n";
  h << "  memorized (exact evaluation of every " << (P.seq2seq ? "token" : "sequence") << "): "
    << (r.memorized ? "yes" : "NO (" + std::to_string(r.mismatches) + " mismatches)") << "\n";
  h << "  certificate written to " << a.out;
  if (!a.weights_out.empty() && r.memorized && !r.collision) {
    npz_write_float64(a.weights_out, ks25::ks_weights_float64_arrays(r.net));
    j["weights_out"] = a.weights_out;
    h << "\n  weights (float64, nearest doubles of the exact network) written to " << a.weights_out;
  }
  emit(a.json, j, h.str(), start);
  const bool ok = r.memorized && r.eq55_holds;
  return ok ? kExitHolds : kExitNegative;
}

const CommandRegistrar reg{{45, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.get_subcommand("construct")
                      ->add_subcommand("ks25", "ks25 Theorem 4.1: O~(sqrt N)-parameter memorization, built exactly");
  sub->alias("ks");  // the command's earlier name (docs/CLI.md)
  sub->add_option("DATASET", args->dataset, "Sequence data set (.json / .npz)")->required();
  sub->add_option("--ablation", args->ablation, "linear-phi: replace phi~ by the linear projection F");
  sub->add_flag("--deep-sets", args->deep_sets, "Theorem D.1: memorize each sequence as a multiset (deep set)");
  add_int_option(sub, "--C", args->C, 1, 1 << 30, "Number of classes (labels must lie in [0, C); default max label + 1)");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed for the random directions (each is certified on the data)");
  sub->add_flag("--check", args->check, "Also re-verify the written certificate with the independent checker");
  sub->add_option("--data-ref", args->data_ref,
                  "auto|on|off: name DATASET and its digest instead of embedding the sequences and labels "
                  "(auto: when the sequences hold more than 2^20 tokens)");
  sub->add_option("--out", args->out, "Certificate to write (JSON)")->required();
  sub->add_option("--weights-out", args->weights_out,
                  "Also write the network as float64 arrays (.npz; names and shapes in docs/FORMATS.md)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
