// memcert construct theorem1 DATASET --heads H --dh DH [--dv DV] [--skip] [--seed S] [--tolerance TOL]
//                                    [--c proof|weyl|network|VALUE] [--no-saturation] [--beyond generic|off]
//                                    [--fit dyadic|exact] [--no-check] --out CERT [--weights-out W.npz] [--json]
// mahdavi24 Theorem 1 constructed step by step (docs/THEORY.md section 4) and certified. JSON (docs/CLI.md):
//   {"claim":"mahdavi24/theorem-1","H","n","d","dh","r","T","T_star","rank_Z_lower","memorized",
//    "memorized_count","not_memorized":[t...],"method",
//    "saturation":[{"head","c","c_proof","c_weyl","c_weyl_lower","sigma_lower","eps",...}...],
//    "c_scale","c_network","seconds"}  (+ "hypotheses", "verified", "theorem_memorized_count", "beyond",
//    "generic": {"rank_Z_lower","rank_Z_numerical","rank_Z_bound","memorized_count","verified",...} when tried)
// T is the data set's size and T_star = min(T, H(r-1)+1) the theorem's; the construction uses the first
// T_star examples. "memorized" is true only when ALL T examples are certified memorized; memorized_count
// is the number that are (by "method": "theorem" or "generic"), not_memorized lists the others (0-based).
// --beyond generic (default): when T > T*, generic weights are also tried on all T examples
// (generic_weights_construct) and their certificate is kept when it certifiably memorizes more.
// --c picks the scale of every saturating head: the proof's c (default), each head's c_weyl, the common
// c_network, or one common exact VALUE; every c reported here rebuilds the same weights when passed back.
// --no-check: the certificate is written on the engine's own certified verdict without the in-process
// re-check ("verified": null); `memcert verify CERT` is then the independent check.
// Exit: 0 every example memorized and the certificate re-verified by the independent checker (with
// --no-check: certified by the engine); 1 a
// hypothesis fails (witness printed, no certificate written), or
// T > T_star examples were given and only T_star are memorized (the certificate for those is written);
// 2 bad usage/input; 3 undecided (a rank certificate failed, e.g. at the chosen scale, or no read-out was
// certified within the label rule even at Step 2's highest precision: nothing written).
// --weights-out FILE.npz: the certified weights as float64 arrays (weights_npz.hpp), written only with a
// valid certificate; JSON then adds "weights_out" and "torch_layout" (true, or why not).
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <future>
#include <iostream>

#include "attention_arrays.hpp"
#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/model/weights_npz.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/error.hpp"
#include "memcert/util/memory.hpp"

namespace memcert::cli {
namespace cmd_construct_theorem1 {

struct Args {
  std::string dataset, out, weights_out, tolerance = "1e-6";
  std::size_t H = 0, dh = 0;
  long dv = -1;
  std::uint64_t seed = 1;
  std::string c = "proof";
  std::string beyond = "generic";
  std::string fit = "dyadic";
  std::string data_ref = "auto";
  bool skip = false, json = false, no_saturation = false, no_check = false;
};

// The checker's data supplier for the examples construct has in memory (data by reference).
memcert_checker::ArraysSupplier in_memory_supplier(const AttentionDataset& ds, std::size_t count, const std::string& path) {
  return [&ds, count, path](const std::string&, memcert_checker::AttentionArrays& out, std::string& error) {
    try {
      out = attention_arrays_from_dataset(ds, count, path);
      return true;
    } catch (const InputError& e) {
      error = e.what();
      return false;
    }
  };
}

std::string num(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// "3, 4, 5, ..., 56" for a summary line: the first few indices only, the count says the rest.
std::string index_list_text(const std::vector<std::size_t>& v) {
  std::string s;
  for (std::size_t k = 0; k < v.size() && k < 8; ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return v.size() > 8 ? s + ", ... (" + std::to_string(v.size()) + " in all)" : s;
}

// Which of the T data examples are certified memorized: the construction's examples when its certificate
// was re-verified, none otherwise. Fills "memorized", "memorized_count", "not_memorized", "method".
std::vector<std::size_t> record_memorized(nlohmann::json& j, std::size_t T, const std::vector<std::size_t>& certified,
                                          const std::string& method = "theorem") {
  std::vector<bool> ok(T, false);
  for (std::size_t t : certified) ok[t] = true;
  std::vector<std::size_t> missing;
  for (std::size_t t = 0; t < T; ++t)
    if (!ok[t]) missing.push_back(t);
  j["memorized"] = missing.empty();
  j["memorized_count"] = T - missing.size();
  j["not_memorized"] = missing;
  j["method"] = method;
  return missing;
}

// Beyond the theorem (docs/THEORY.md, "Beyond T*"): generic weights for all T examples, their certificate
// re-verified by the independent checker. `report` is the JSON "generic" object, `summary` its text line.
struct Beyond {
  mahdavi24::Theorem1Result result;
  memcert_checker::Verdict verdict;
  std::string text, summary;
  nlohmann::json report;  // null when not tried
};
// Peak memory the generic attempt adds to what the process holds, in bytes: an upper bound fitted to
// measured peaks (within 1.3-2.2x of them at T = 200..2000, n d = 128..10^4, H d = 64..256). Its
// construction: per context entry of the T examples about 180 bytes (the exact copy, its scaled form, the
// doubles), per entry of the k <= min(T, H d) certified examples about 220 (their certificate as JSON),
// then Z (centres and radii, twice) and the T x T Gram matrix. Its check: the certificate's text and the
// memory the independent checker asks of its budget for it (about 400 bytes per number). The larger.
double generic_memory_bytes(std::size_t T, std::size_t n, std::size_t d, std::size_t H, std::size_t dh) {
  const double t = double(T), nd = double(n) * double(d), Hd = double(H) * double(d), k = std::min(t, Hd);
  const double build = 256 * t * nd + 256 * k * nd + 40 * t * Hd + 24 * t * t;
  const double numbers = k * (nd + double(d) + 1) + Hd * (2 * double(dh) + double(d) + 1) + double(d) * double(d);
  return std::max(build, 512 * numbers) + 32.0 * 1048576;
}

// The process's resident memory in bytes (Linux /proc/self/statm), 0 when unknown.
double resident_bytes() {
  std::ifstream f("/proc/self/statm");
  double size = 0, resident = 0;
  if (!(f >> size >> resident)) return 0;
  return resident * double(sysconf(_SC_PAGESIZE));
}

// Never costs the theorem's certificate: a generic attempt over the memory budget (estimated before, or
// out of memory while it runs, or its check over budget), or one that fails inside, is reported in
// "generic" ("skipped" / "stopped" / "error") and the theorem's result stands.
Beyond beyond_generic(const AttentionDataset& ds, const mahdavi24::Theorem1Options& opt, StageTimes& times) {
  Beyond b;
  const double MiB = 1048576.0, need = generic_memory_bytes(ds.T(), ds.n(), ds.d(), opt.H, opt.dh), held = resident_bytes();
  const double cap = run_budget().max_memory_mb * MiB;
  auto stopped = [&](const std::string& key, const std::string& why) {
    b.result = mahdavi24::Theorem1Result{};
    b.verdict = memcert_checker::Verdict{};
    b.report = {{key, why}, {"memorized_count", 0}, {"verified", false}};
    b.summary = "beyond T*: generic weights " + std::string(key == "skipped" ? "not tried" : "stopped") + ": " + why +
                "; the theorem's result stands";
  };
  // "--max-memory N would suffice": what is held now plus the estimate, rounded up to 100 MB.
  const long suffice = long(std::ceil((held + need) / MiB / 100) * 100);
  if (cap > 0 && held + need > cap) {
    stopped("skipped", "they need about " + std::to_string(long(std::ceil(need / MiB))) + " MB beside the " +
                           std::to_string(long(held / MiB)) + " MB in use, over the --max-memory budget of " +
                           std::to_string(long(run_budget().max_memory_mb)) + " MB (--max-memory " +
                           std::to_string(suffice) + " would suffice; --beyond off skips them)");
    return b;
  }
  const std::string over = "out of memory, over the --max-memory budget of " + std::to_string(long(run_budget().max_memory_mb)) +
                           " MB (--max-memory " + std::to_string(suffice) + " should suffice; --beyond off skips them)";
  try {
    StageTimes::Scope clock(&times, "generic weights");
    b.result = mahdavi24::generic_weights_construct(ds, opt);
  } catch (const InputError&) {
    throw;
  } catch (const std::bad_alloc&) {
    stopped("stopped", over);
    return b;
  } catch (const std::runtime_error& e) {
    b.result = mahdavi24::Theorem1Result{};
    b.report = {{"error", e.what()}, {"memorized_count", 0}, {"verified", false}};
    b.summary = std::string("beyond T*: generic weights failed (") + e.what() + "); the theorem's result stands";
    return b;
  }
  const auto& g = b.result;
  if (g.memorized) {
    try {
      b.text = g.certificate.dump();
      b.result.certificate = nlohmann::json();  // the text is what is checked and written: the tree goes
      release_free_memory();
      StageTimes::Scope clock(&times, "independent checker (generic)");
      memcert_checker::Budget budget;  // what the budget leaves beside the process's memory now (none: none)
      budget.max_bytes = cap > 0 ? std::max(0.0, cap - resident_bytes()) : checker_max_bytes();
      b.verdict = memcert_checker::verify_certificate_text(b.text, budget);
    } catch (const std::bad_alloc&) {
      stopped("stopped", over);
      return b;
    }
    if (!b.verdict.valid && b.verdict.undecided) {  // the check ran over the budget: nothing decided about them
      stopped("stopped", "the independent check of their certificate did not finish: " + b.verdict.reason);
      return b;
    }
  }
  const std::size_t count = b.verdict.valid ? g.examples.size() : 0;
  b.report = {{"rank_Z_lower", g.rank_Z_lower},
              {"rank_Z_numerical", g.rank_Z_numerical},
              {"rank_Z_bound", g.rank_Z_bound},
              {"memorized_count", count},
              {"verified", b.verdict.valid},
              {"logit_scale", rational_to_string(g.logit_scale)},
              {"draws", g.generic_attempts},
              {"sigma_lower", g.final_sigma_lower}};
  b.summary = "beyond T*: generic weights: rank(Z) >= " + std::to_string(g.rank_Z_lower) + " certified (numerical rank " +
              std::to_string(g.rank_Z_numerical) + "; rank(Z) <= min(T, H d) = " + std::to_string(g.rank_Z_bound) +
              " for any weights); " +
              (b.verdict.valid ? "memorizes " + std::to_string(count) + " of " + std::to_string(ds.T()) + ", independent checker VALID"
               : g.rank_Z_lower == 0 ? std::string("no rank certificate went through")
                                     : "labels not certified on those rows");
  return b;
}

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  if (!a.weights_out.empty() && path_extension_lower(a.weights_out) != ".npz")
    throw input_error(a.weights_out, "", "expected a --weights-out file name ending in .npz");
  if (a.beyond != "generic" && a.beyond != "off") throw InputError("--beyond: expected generic or off, got " + a.beyond);
  if (a.fit != "dyadic" && a.fit != "exact") throw InputError("--fit: expected dyadic or exact, got " + a.fit);
  // Contexts in typed storage when the file allows (float32 as stored): the engine works on their exact
  // doubles, never a rational per entry; they become rationals below only when the certificate embeds them.
  AttentionDataset ds = attention_dataset_read_backed(a.dataset);
  if (ds.labels_integer_dtype) note(attention_labels_note());
  mahdavi24::Theorem1Options opt;
  opt.H = a.H;
  opt.dh = a.dh;
  if (a.dv >= 0) opt.dv = static_cast<std::size_t>(a.dv);
  opt.skip = a.skip;
  opt.seed = a.seed;
  opt.saturation = !a.no_saturation;
  opt.exact_fit = a.fit == "exact";
  if (a.c == "proof" || a.c == "weyl" || a.c == "network") {
    opt.scale = a.c;  // the word names the enum value (Theorem1Scale)
  } else {
    auto cv = rational_parse(a.c);
    if (!cv || *cv < 0) throw InputError("--c: expected proof, weyl, network or an exact number >= 0, got " + a.c);
    opt.scale = mahdavi24::Theorem1Scale::value;
    opt.c_value = *cv;
  }
  StageTimes times;
  opt.timings = &times;
  if (a.data_ref != "auto" && a.data_ref != "on" && a.data_ref != "off")
    throw InputError("--data-ref: expected auto, on or off, got " + a.data_ref);
  // Data by reference (docs/CERTIFICATES.md): the certificate names DATASET and the digest of the T*
  // examples used instead of embedding them -- asked for (on), or by default for more than 2^20 entries
  // when every value is exactly a double (auto).
  const std::size_t T_used = mahdavi24::t_star(ds.T(), a.H, ds.n(), a.dh);
  std::future<std::string> digest_job;
  if (a.data_ref == "on" || (a.data_ref == "auto" && double(T_used) * double(ds.n()) * double(ds.d()) > double(1 << 20))) {
    StageTimes::Scope clock(&times, "data digest");
    try {
      // Checked now; the digest itself runs on its own thread while the construction does (it is one
      // long serial SHA-256) and is filled into the certificate before it is written or checked.
      auto job = attention_digest_job(ds, T_used, a.dataset);
      digest_job = std::async(std::launch::async, std::move(job));
      opt.data_digest = "sha256:pending";
      opt.data_file = a.dataset;
    } catch (const InputError&) {
      if (a.data_ref == "on") throw;  // auto: values that are not doubles stay embedded
    }
  }
  if (opt.data_file.empty()) attention_dataset_materialize(ds);  // embedded: the writer needs rationals anyway
  // progress() draws a bar on a terminal, plain lines past 2 s otherwise, nothing under --quiet.
  opt.progress = [](std::size_t done, std::size_t total) { progress("construct theorem1: heads", done, total); };
  auto tol = rational_parse(a.tolerance);
  if (!tol || *tol < 0) throw InputError("--tolerance: expected an exact non-negative number, got " + a.tolerance);
  opt.tolerance = *tol;
  nlohmann::json j{{"claim", "mahdavi24/theorem-1"}, {"H", a.H}, {"n", ds.n()}, {"d", ds.d()}, {"dh", a.dh}};
  mahdavi24::Theorem1Result res;
  // The theorem's certificate, re-verified by the independent checker (written below if it is the one
  // kept); at --c network a certificate the checker refuses is rebuilt at the next grid value.
  std::string text, digest;
  memcert_checker::Verdict v;
  bool checked = false;
  auto check = [&](mahdavi24::Theorem1Result& r) {
    if (digest_job.valid()) {
      StageTimes::Scope clock(&times, "data digest (waited for)");
      digest = digest_job.get();
    }
    if (!digest.empty()) r.certificate["data"]["digest"] = digest;
    {
      StageTimes::Scope clock(&times, "certificate JSON");
      text = r.certificate.dump();
    }
    checked = true;
    v = memcert_checker::Verdict{};
    if (!r.memorized) return true;  // nothing claimed (the negative verdict is reported below)
    if (a.no_check) {
      // --no-check: the engine's own certified verdict stands; the independent re-check is left to `memcert
      // verify CERT` (run once, not twice, when the certificate is verified as a separate step anyway).
      v.valid = true;
      return true;
    }
    StageTimes::Scope clock(&times, "independent checker");
    // Referenced data: the checker is handed the values read from DATASET (as `verify` reads them, without
    // reading the file a second time) and recomputes the digest.
    // The checker's memory budget is the run's (--max-memory; none with 0), as for `verify`; no time limit.
    memcert_checker::Budget budget;
    budget.max_bytes = checker_max_bytes();
    v = opt.data_file.empty() ? memcert_checker::verify_certificate_text(text, budget)
                              : memcert_checker::verify_certificate_text(text, budget, nullptr,
                                                                         in_memory_supplier(ds, r.T_star, a.dataset));
    return v.valid || v.undecided;
  };
  try {
    res = mahdavi24::theorem1_construct_accepted(ds, opt, check);
  } catch (const mahdavi24::HypothesisFailure& f) {
    j["r"] = mahdavi24::theorem1_r(ds.n(), a.dh);
    j["T"] = ds.T();
    j["T_star"] = mahdavi24::t_star(ds.T(), a.H, ds.n(), a.dh);
    j["rank_Z_lower"] = nullptr;
    record_memorized(j, ds.T(), {});
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
    j["r"] = mahdavi24::theorem1_r(ds.n(), a.dh);
    j["T"] = ds.T();
    j["T_star"] = mahdavi24::t_star(ds.T(), a.H, ds.n(), a.dh);
    j["rank_Z_lower"] = nullptr;
    record_memorized(j, ds.T(), {});  // nothing certified
    j["c_scale"] = a.c;
    j["saturation"] = nlohmann::json::array();
    j["undecided"] = e.what();
    emit(a.json, j, std::string("UNDECIDED: ") + e.what() + " (nothing written)", start);
    return kExitUndecided;
  }
  if (!res.memorized && !res.readout_undecided.empty()) {
    // rank(Z) >= T* certified: the labels are memorized by some read-out; not certifying one is no "no".
    j["r"] = res.r;
    j["T"] = ds.T();
    j["T_star"] = res.T_star;
    j["rank_Z_lower"] = res.rank_Z_lower;
    record_memorized(j, ds.T(), {});
    j["c_scale"] = a.c;
    j["c_network"] = res.c_network ? nlohmann::json(rational_to_string(*res.c_network)) : nlohmann::json(nullptr);
    j["saturation"] = nlohmann::json::array();
    j["undecided"] = res.readout_undecided;
    emit(a.json, j, "UNDECIDED: " + res.readout_undecided + " (nothing written)", start);
    return kExitUndecided;
  }
  if (!checked) check(res);
  if (!res.memorized)
    v.reason = res.class_labels ? "arg-max not certified for every example"
                                : "labels reproduced only within " + nlohmann::json(res.max_label_error).dump() +
                                      " > tolerance " + a.tolerance;
  if (res.memorized && !v.valid && v.undecided) {  // the check itself ran over the budget: nothing is decided
    std::cerr << "memcert: undecided: the independent checker did not finish: " << v.reason
              << budget_suffices_text(v.needs_seconds, v.needs_bytes) << " (nothing written)\n";
    return kExitUndecided;
  }
  if (res.memorized && !v.valid && res.readout_bits > 53 && v.reason.rfind("labels:", 0) == 0) {
    // The labels hold (certified at readout_bits), but the checker's enclosure of Z is double-wide: too
    // coarse for this read-out's size. Nothing is decided by the independent check: undecided.
    std::cerr << "memcert: undecided: the labels are certified at " << res.readout_bits
              << " bits, but the independent checker cannot confirm them at its precision: " << v.reason
              << " (nothing written)\n";
    return kExitUndecided;
  }
  if (res.memorized && !v.valid) {  // never written: a certificate the checker refuses decides nothing
    std::cerr << "memcert: undecided: the independent checker did not accept the constructed certificate: " << v.reason
              << " (nothing written)\n";
    return kExitUndecided;
  }
  // Beyond the theorem (T > T*): generic weights for all T examples, kept when they certifiably memorize more.
  // The theorem's verified certificate is written first, so nothing the optional attempt does (even a
  // process killed for memory) can cost it; a better generic certificate replaces it below.
  const bool try_generic = a.beyond == "generic" && ds.T() > res.T_star;
  if (try_generic && v.valid) {
    StageTimes::Scope clock(&times, "write");
    file_write_atomic(a.out, text + "\n");
  }
  const Beyond beyond = try_generic ? beyond_generic(ds, opt, times) : Beyond{};
  if (beyond.result.memorized && !beyond.verdict.valid) {  // never written; the theorem's, if accepted, is kept
    std::cerr << "memcert: " << (v.valid ? "note" : "undecided")
              << ": the independent checker did not accept the generic-weights certificate: " << beyond.verdict.reason
              << (v.valid ? " (the theorem's certificate is kept)\n" : " (nothing written)\n");
    if (!v.valid) return kExitUndecided;
  }
  const bool use_generic = beyond.verdict.valid && beyond.result.examples.size() > (v.valid ? res.examples.size() : 0);
  const mahdavi24::Theorem1Result& kept = use_generic ? beyond.result : res;
  const bool kept_valid = use_generic || v.valid;
  if (kept_valid) {
    StageTimes::Scope clock(&times, "write");
    file_write_atomic(a.out, (use_generic ? beyond.text : text) + "\n");
    if (!a.weights_out.empty()) {  // only weights the checker accepted, as float64 arrays
      std::string torch_note;
      npz_write_float64(a.weights_out, mha_weights_float64_arrays(kept.weights, kept.skip, &torch_note));
      j["weights_out"] = a.weights_out;
      j["torch_layout"] = torch_note.empty() ? nlohmann::json(true) : nlohmann::json(torch_note);
    }
  }
  j["r"] = res.r;
  j["T"] = ds.T();
  j["T_star"] = res.T_star;
  j["rank_Z_lower"] = kept_valid ? kept.rank_Z_lower : res.rank_Z_lower;
  const std::vector<std::size_t> missing =
      record_memorized(j, ds.T(), kept_valid ? kept.examples : std::vector<std::size_t>{}, kept.method);
  j["theorem_memorized_count"] = v.valid ? res.examples.size() : 0;
  // null: not re-checked in process (--no-check); `memcert verify` is the check.
  j["verified"] = a.no_check && kept_valid && !use_generic ? nlohmann::json(nullptr) : nlohmann::json(kept_valid);
  if (!kept_valid) j["reason"] = v.reason;
  j["beyond"] = a.beyond;
  j["data_ref"] = !use_generic && !opt.data_file.empty();  // the certificate references DATASET by file and digest
  if (!beyond.report.is_null()) j["generic"] = beyond.report;
  j["hypotheses"] = res.hypotheses;
  j["skip"] = res.skip;
  j["d_out"] = res.d_out;
  j["tolerance"] = rational_to_string(res.tolerance);
  if (kept.class_labels) j["min_class_margin"] = kept.min_class_margin;
  else j["max_label_error"] = kept.max_label_error;
  nlohmann::json sat = nlohmann::json::array();
  std::string human = "mahdavi24 Theorem 1: H=" + std::to_string(res.H) + " n=" + std::to_string(res.n) + " d=" +
                      std::to_string(res.d) + " dh=" + std::to_string(res.dh) + " r=" + std::to_string(res.r) + " T=" +
                      std::to_string(ds.T()) + " T*=" + std::to_string(res.T_star) + " (hypotheses: " + res.hypotheses + ")\n";
  if (ds.T() > res.T_star)
    human += "  the data set has T = " + std::to_string(ds.T()) + " > T* = H(r-1)+1 = " + std::to_string(res.T_star) +
             " examples: the theorem's construction memorizes the first " + std::to_string(res.T_star) + " only\n";
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
                     {"eps_criterion", t.eps_criterion.str()},
                     {"sigma_weyl", t.sigma_weyl},
                     {"eps_weyl", t.eps_weyl}};
    sat.push_back(e);
    human += "  head " + std::to_string(t.head) + ": " + std::to_string(t.group.size()) + " new examples, c = " +
             exact_text(num(tr[h]["c"])) + " (proof " + exact_text(rational_to_string(t.c_proof)) + ", c_weyl " +
             exact_text(num(q(t.c_weyl))) + "), eps = " + exact_text(num(tr[h]["eps"])) + " (" + t.eps_criterion.str() +
             "), sigma_lower = " + std::to_string(t.sigma_lower) + "\n";
  }
  j["saturation"] = sat;
  j["c_scale"] = a.c;
  j["c_network"] = res.c_network ? nlohmann::json(rational_to_string(*res.c_network)) : nlohmann::json(nullptr);
  j["c_network_sigma_lower"] = res.network_sigma_lower;
  human += "c_network = " + (res.c_network ? exact_text(rational_to_string(*res.c_network)) : std::string("not found on the grid")) +
           " (every head at one c); weights built at --c " + a.c + "\n";
  nlohmann::json tj = nlohmann::json::object();  // wall-clock seconds per stage (construction, checker, write)
  for (auto& [stage, secs] : times.entries()) tj[stage] = secs;
  j["timings"] = tj;
  human += "theorem: rank(Z) >= " + std::to_string(res.rank_Z_lower) + " certified; labels " +
           (res.labels_ok ? "reproduced" : "NOT certified") + "; independent checker: " +
           (a.no_check && res.memorized ? std::string("not run (--no-check: run memcert verify " + a.out + ")")
            : v.valid                   ? std::string("VALID")
                                        : (res.memorized ? "REJECTED (" : "not run (") + v.reason + ")");
  if (!beyond.report.is_null()) human += "\n" + beyond.summary;
  if (ds.T() > res.T_star) {
    // In plain words: what the theorem certified, and what the generic weights added (or why not).
    const std::size_t Ts = res.T_star;
    human += "\nin short: the theorem " +
             (v.valid ? "certifies the first T* = " + std::to_string(Ts) + " examples (0.." + std::to_string(Ts - 1) + ")"
                      : "certified none of the first T* = " + std::to_string(Ts) + " examples (" + v.reason + ")");
    if (a.beyond == "off") {
      human += "; generic weights were not tried (--beyond off), so the other " + std::to_string(ds.T() - Ts) +
               " examples are not certified";
    } else if (use_generic) {
      std::size_t shared = 0;
      for (std::size_t t : beyond.result.examples) shared += t < Ts ? 1 : 0;
      human += "; the generic weights certify " + std::to_string(beyond.result.examples.size()) + " of the " +
               std::to_string(ds.T()) + " examples (" + std::to_string(beyond.result.examples.size() - (v.valid ? Ts : 0)) +
               " more" + (v.valid ? " than the theorem" : "") + "; those whose rows of Z they make independent, " +
               std::to_string(shared) + " of the first " + std::to_string(Ts) +
               " among them), and their certificate is the one written: the examples listed below are the ones it does "
               "not cover";
    } else if (beyond.verdict.valid) {
      human += "; the generic weights certify " + std::to_string(beyond.result.examples.size()) +
               ", no more, so the theorem's certificate is kept";
    } else {
      human += "; the generic weights added nothing (" +
               std::string(beyond.report.contains("skipped")   ? "not tried: over the memory budget"
                           : beyond.report.contains("stopped") ? "stopped: over the memory budget"
                           : beyond.report.contains("error")   ? "they failed inside"
                           : beyond.result.rank_Z_lower == 0   ? "no rank certificate went through"
                                                               : "their labels were not certified") +
               ")" + (v.valid ? ", so the theorem's certificate for the first " + std::to_string(Ts) + " is the one written" : "");
    }
  }
  human += kept_valid ? "\n" + std::string(use_generic ? "generic-weights" : "theorem") + " certificate written to " + a.out
                      : "\nnothing written";
  if (j.contains("weights_out"))
    human += "\nweights (float64) written to " + a.weights_out + "; PyTorch nn.MultiheadAttention layout: " +
             (j["torch_layout"].is_boolean() ? std::string("included") : "not included (" + j["torch_layout"].get<std::string>() + ")");
  human += "\nmemorized: " + std::to_string(ds.T() - missing.size()) + " of " + std::to_string(ds.T()) + " examples" +
           (missing.empty() ? " (all)" : "; NOT memorized: examples " + index_list_text(missing)) + " [method " + kept.method + "]";
  emit(a.json, j, human, start);
  if (!kept_valid) return kExitNegative;  // verdict negative: no certificate written
  return missing.empty() ? kExitHolds : kExitNegative;  // 0 only when every one of the T examples is memorized
}

const CommandRegistrar reg{{40, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.get_subcommand("construct")->add_subcommand("mahdavi24", "mahdavi24 Theorem 1: MHA weights memorizing H(r-1)+1 examples, certified");
  sub->alias("theorem1");  // the command's earlier name (docs/CLI.md)
  sub->add_option("DATASET", args->dataset, "Attention data set (.json or .npz)")->required();
  add_int_option(sub, "--heads", args->H, 1, 4096, "Number of heads H")->required();
  add_int_option(sub, "--dh", args->dh, 1, 1 << 16, "Head dimension d_h")->required();
  add_int_option(sub, "--dv", args->dv, 1, 1 << 16, "Value dimension d_v (default d_out)");
  sub->add_flag("--skip", args->skip, "Attention with skip connection (appendix C)");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed for the random choices (targets, Lemma 3)");
  sub->add_option("--tolerance", args->tolerance, "Label tolerance (exact number, default 1e-6)");
  sub->add_option("--c", args->c, "Saturation scale: proof (default), weyl, network, or an exact VALUE for every head");
  sub->add_option("--beyond", args->beyond,
                  "T > T*: generic (default: also try generic weights for all T examples, keep them when they "
                  "certifiably memorize more) or off");
  sub->add_option("--data-ref", args->data_ref,
                  "Certificate names DATASET and its digest instead of embedding the data: auto (default: when "
                  "over 2^20 entries, all exact doubles), on, off");
  sub->add_option("--fit", args->fit, "Claim 1's W_Q: dyadic (default, near Q_R^+) or exact (Q_R^+)");
  sub->add_flag("--no-saturation", args->no_saturation, "Skip computing c_weyl and c_network (faster)");
  sub->add_flag("--no-check", args->no_check,
                "Do not re-verify the certificate with the independent checker in process (run memcert verify on it)");
  sub->add_option("--out", args->out, "Certificate output (.json)")->required();
  sub->add_option("--weights-out", args->weights_out,
                  "Also write the certified weights as float64 arrays (.npz; names and shapes in docs/CLI.md)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
