// memcert sweep SPEC.json --out DIR [--progress] [--json]
// A grid of cells over a construction (theorem1, ks, dana24) or a claim, each cell run by this binary
// as child processes (`generate ...` then `construct ... --json`, or `claims run ID --json`), the row
// built from the child's JSON. Layout (docs/SWEEP.md):
//   DIR/spec.json               the spec as understood; a resumed sweep must have the same one
//   DIR/cells/NNNNNN/           the cell's data set, certificate(s), child output, and row.json
//   DIR/results.jsonl           one row per cell, in cell order, written once every cell is done
// Resumable: row.json is written atomically after the cell finished, so an interrupted sweep reruns the
// cells without one; a row found is kept only when its certificate re-verifies and the row re-derives
// from it (row_check), else the cell runs again. Under mpirun (a build with MPI), rank k runs the cells i
// with i % K == k and rank 0 merges; the merged file is identical to a single-process run's apart from
// "seconds".
// Exit: 0 every cell ran (whatever its verdict: negative and undecided cells are results); 2 bad spec, a
// damaged DIR (a cell directory that is not one, a row that is not a readable file), or a cell whose
// command refused its options (recorded in its row); 3 a cell crashed or hit an internal error.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>
#include <iomanip>
#include <set>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/theory/ks25/construct.hpp"
#include "memcert/theory/mahdavi24/quantities.hpp"
#include "memcert/util/error.hpp"
#include "sweep_child.hpp"
#include "sweep_mpi.hpp"
#include "sweep_spec.hpp"

namespace memcert::cli {
namespace cmd_sweep {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace sweep;

struct Args {
  std::string spec, out;
  bool json = false, progress = false;
};

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Drops wall-clock fields (any key "seconds", "timings" or ending in "_seconds") so a row depends only
// on the cell: the merged results of two runs then compare equal apart from each row's own "seconds".
void strip_clock(json& j) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end();) {
    const std::string& k = it.key();
    bool clock = k == "seconds" || k == "timings" || (k.size() > 8 && k.compare(k.size() - 8, 8, "_seconds") == 0);
    if (clock) it = j.erase(it);
    else { strip_clock(*it); ++it; }
  }
}

const char* verdict_of(int exit) {
  switch (exit) {
    case kExitHolds: return "holds";
    case kExitNegative: return "negative";
    case kExitUndecided: return "undecided";
    case kExitBadInput: return "bad-input";
    default: return "internal-error";
  }
}

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  return l.size() > 400 ? l.substr(0, 400) : l;
}

// The last non-empty stdout line as JSON (commands run with --json print exactly one), or null.
json parse_last_line(const std::string& out) {
  std::istringstream in(out);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  try {
    return last.empty() ? json(nullptr) : json::parse(last);
  } catch (const json::exception&) {
    return nullptr;
  }
}

// The numbers a cell certifies, read from its command's JSON. Only what the independent checker
// re-verified counts: theorem1 reports "verified"; ks runs with --check; claims certify per instance.
json certified_of(const TaskDef& def, const json& r, int exit) {
  json c = json::object();
  if (!r.is_object()) return c;
  auto get = [&](const char* k) { return r.contains(k) ? r[k] : json(nullptr); };
  if (def.name == "theorem1") {
    bool verified = r.value("verified", false);
    // memorized_count (when the command reports it) is the best certified count, possibly beyond T*.
    std::int64_t count = 0;
    if (verified && r.contains("memorized_count") && r["memorized_count"].is_number_integer())
      count = r["memorized_count"].get<std::int64_t>();
    else if (exit == kExitHolds && verified && r.value("memorized", false) && r.contains("T"))
      count = r["T"].get<std::int64_t>();
    c["T_certified"] = count;
    c["rank_Z_lower"] = get("rank_Z_lower");
    if (r.contains("H") && r.contains("r") && r["r"].is_number_integer())
      c["T_star"] = mahdavi24::t_star(r["H"].get<std::int64_t>(), r["r"].get<std::int64_t>());
  } else if (def.name == "ks") {
    if (exit == kExitHolds && r.value("memorized", false))
      for (const char* k : {"N", "parameters", "nonzero_parameters", "depth", "width", "bit_complexity"}) c[k] = get(k);
  } else if (def.name == "dana24") {
    if (exit == kExitHolds || exit == kExitNegative)
      for (const char* k : {"T", "T0", "memorized_count", "min_margin", "parameters"}) c[k] = get(k);
  } else {
    for (const char* k : {"instances", "confirmed"}) c[k] = get(k);
    if (r.contains("counterexamples") && r["counterexamples"].is_array()) c["counterexamples"] = r["counterexamples"].size();
  }
  return c;
}

// One run of a task at fixed options in directory `dir` (created): generate + construct, or claims run.
struct RunOutcome {
  int exit = 0;
  json result;         // the construct/claims JSON, clock fields stripped (null if none)
  json certified;      // certified_of(...)
  std::string certificate;  // path relative to the sweep directory, empty when none was written
  std::string error;   // the failing command's first stderr line
};

void add_options(std::vector<std::string>& a, const json& params, const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (params.contains(k)) { a.push_back("--" + k); a.push_back(value_text(params[k])); }
}

// `generate <data> ... --seed S --out DATA --json`: the cell's data set (a function of its options and seed).
std::vector<std::string> generate_command(const Spec& s, const json& params, std::uint64_t seed, const fs::path& data) {
  std::vector<std::string> gen{"generate", s.data};
  add_options(gen, params, s.def->generate_options);
  gen.insert(gen.end(), s.def->generate_fixed.begin(), s.def->generate_fixed.end());
  gen.insert(gen.end(), {"--seed", std::to_string(seed), "--out", data.string(), "--json"});
  return gen;
}

RunOutcome run_once(const Spec& s, const json& params, std::uint64_t seed, const fs::path& root, const fs::path& dir) {
  fs::create_directories(dir);
  RunOutcome o;
  const TaskDef& d = *s.def;
  auto add_options = [&](std::vector<std::string>& a, const std::vector<std::string>& keys) {
    cmd_sweep::add_options(a, params, keys);
  };
  std::vector<std::string> cmd;
  fs::path cert = dir / "cert.json";
  if (d.name == "claim") {
    fs::create_directories(dir / "certs");
    cmd = {"claims", "run", s.claim_id, "--seed", std::to_string(seed), "--cert-dir", (dir / "certs").string(), "--json"};
    add_options(cmd, d.construct_options);
  } else {
    fs::path data = dir / d.data_file;
    const std::vector<std::string> gen = generate_command(s, params, seed, data);
    ChildResult g = child_run_self(gen, (dir / "generate.out").string(), (dir / "generate.err").string());
    if (g.exit != 0) {
      o.exit = g.exit;
      o.error = "generate: " + first_line(g.err);
      o.result = nullptr;
      o.certified = json::object();
      return o;
    }
    cmd = {"construct", d.construct, data.string()};
    add_options(cmd, d.construct_options);
    for (const auto& f : d.construct_flags)
      if (params.contains(f) && params[f].get<bool>()) cmd.push_back("--" + f);
    cmd.insert(cmd.end(), d.construct_fixed.begin(), d.construct_fixed.end());
    if (d.construct_seed) cmd.insert(cmd.end(), {"--seed", std::to_string(seed)});
    cmd.insert(cmd.end(), {"--out", cert.string(), "--json"});
  }
  ChildResult c = child_run_self(cmd, (dir / "run.out").string(), (dir / "run.err").string());
  o.exit = c.exit;
  o.result = parse_last_line(c.out);
  strip_clock(o.result);
  if (o.result.is_null() && c.exit != kExitBadInput && c.exit < 70) o.exit = kExitInternal;  // no JSON: a bug
  if (c.exit != kExitHolds && c.exit != kExitNegative && c.exit != kExitUndecided) o.error = first_line(c.err);
  o.certified = certified_of(d, o.result, c.exit);
  fs::path written = d.name == "claim" ? dir / "certs" : cert;
  if (fs::exists(written) && !(fs::is_directory(written) && fs::is_empty(written)))
    o.certificate = fs::relative(written, root).string();
  return o;
}

std::int64_t certified_size(const TaskDef& d, const json& certified) {
  if (d.name == "theorem1") return certified.value("T_certified", std::int64_t(0));
  if (d.name == "dana24") return certified.contains("memorized_count") && certified["memorized_count"].is_number_integer()
                                     ? certified["memorized_count"].get<std::int64_t>() : 0;
  return 0;
}

json row_base(const Spec& s, const Cell& c) {
  return {{"cell", c.index}, {"task", s.task}, {"params", c.params}, {"seed", c.seed}};
}

void row_fill(json& row, const RunOutcome& o) {
  row["exit"] = o.exit;
  row["verdict"] = verdict_of(o.exit);
  row["certified"] = o.certified;
  row["result"] = o.result;
  row["certificate"] = o.certificate.empty() ? json(nullptr) : json(o.certificate);
  if (!o.error.empty()) row["error"] = o.error;
}

// The largest size certified in [from, to] for one cell: bisection over the size with the cell's seed,
// each probe its own data set and construction. A probe counts only with its certified count (the
// checker-verified "memorized" or "memorized_count"); sizes above the answer were NOT certified by any
// probe, which proves nothing about them (another seed or method might succeed).
json run_capacity(const Spec& s, const Cell& c, const fs::path& root, const fs::path& dir) {
  const TaskDef& d = *s.def;
  const std::int64_t from = size_resolve(s.capacity_from, c.params, "capacity/from");  // checked in run()
  const std::int64_t to = size_resolve(s.capacity_to, c.params, "capacity/to");
  json probes = json::array();
  std::int64_t best = 0;
  RunOutcome best_run;
  bool have_best = false;
  // A command that reports no "memorized_count" and used fewer examples than it was given (theorem1
  // builds for min(T, T*) examples) cannot certify more at any larger size: probing further would only
  // repeat the same construction, so the search stops there and says why.
  std::string stopped;
  auto probe = [&](std::int64_t size) {
    json p = c.params;
    p[d.size_key] = size;
    RunOutcome o = run_once(s, p, c.seed, root, dir / (d.size_key + std::to_string(size)));
    std::int64_t got = certified_size(d, o.certified);
    probes.push_back({{d.size_key, size}, {"exit", o.exit}, {"verdict", verdict_of(o.exit)}, {"certified", got}});
    if (o.exit == kExitBadInput || o.exit >= kExitInternal) { best_run = o; have_best = true; stopped = "error"; return false; }
    if (got > best || !have_best) { best = std::max(best, got); best_run = o; have_best = true; }
    const json& r = o.result;
    if (got < size && r.is_object() && !r.contains("memorized_count") && r.contains(d.size_key) &&
        r[d.size_key].is_number_integer() && r[d.size_key].get<std::int64_t>() < size)
      stopped = "the command built for " + r[d.size_key].dump() + " of " + std::to_string(size) +
                " examples and reports no memorized_count: larger sizes are beyond its method";
    return got >= size;
  };
  std::int64_t lo = from, hi = to;
  if (probe(from) && stopped.empty()) {
    while (lo < hi && stopped.empty()) {  // invariant: lo certified; nothing above hi probed successfully
      std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (probe(mid)) lo = mid;
      else hi = mid - 1;
    }
  }
  json row = row_base(s, c);
  row_fill(row, best_run);
  row["capacity"] = {{"from", from}, {"to", to}, {"certified", best}, {"probes", probes},
                     {"not_established", best < to ? json{{"above", best}, {"up_to", to}} : json(nullptr)},
                     {"stopped", stopped.empty() ? json(nullptr) : json(stopped)}};
  return row;
}

// ---- Resume: a row found on disk is a claim, accepted only when its certificate backs it ----
// A row.json is the cell's done marker, but nothing in it is believed: the certificate it points to is
// re-verified by `memcert verify` (the independent checker, run as a child like every command of the
// sweep) against the cell's data regenerated from the spec, and the row's verdict and certified figures
// are re-derived from that certificate and the cell's parameters. A row whose result carries figures no
// certificate states (claim, dana24, theorem1 beyond the theorem) runs again: a kept row is what a
// fresh run would write. A ks row is kept when every field of its result is a copy of the certificate's,
// recomputed from them (Theorem B.1's / D.1's expressions) or one of the construction's diagnostics kept
// as found (ks_result_disagreement). Any disagreement: the cell runs again.

// A JSON integer >= 0 of an object, or -1 when absent or of another type.
std::int64_t int_field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return -1;
  const json& v = j[key];
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::uint64_t(INT64_MAX)) return static_cast<std::int64_t>(v.get<std::uint64_t>());
  return -1;
}

// The path of a file of the sweep as the row names it (relative to the sweep directory).
std::string rel(const fs::path& p, const fs::path& root) { return fs::relative(p, root).string(); }

// `memcert verify CERT [--data DATA] --json` with no time budget (as `construct` checks what it wrote):
// "" when the checker accepts the certificate, else why not.
std::string verify_child(const fs::path& cert, const fs::path& data, const fs::path& scratch, const fs::path& root) {
  std::vector<std::string> cmd{"verify", cert.string(), "--json", "--max-seconds", "0"};
  if (!data.empty()) cmd.insert(cmd.end(), {"--data", data.string()});
  ChildResult v = child_run_self(cmd, (scratch / "verify.out").string(), (scratch / "verify.err").string());
  if (v.exit == kExitHolds) return "";
  // The checker's reason is not repeated (it may quote the file); `memcert verify` on the file gives it.
  return "the independent checker " +
         std::string(v.exit == kExitUndecided ? "did not decide on " : v.exit == kExitBadInput ? "cannot read " : "rejects ") +
         rel(cert, root) + (data.empty() ? "" : " against the cell's data regenerated from the spec");
}

// What a cell's certificate(s) establish, re-derived: the row's "exit" and "certified" as the cell's
// command reports them when the certificate is the one it wrote. `why` is non-empty when nothing is
// established (no certificate, one the checker refuses, or one about other data or options).
struct Derived {
  std::string why;
  int exit = kExitHolds;
  json certified;
  std::string certificate;  // as the row names it
  json trace;               // theorem1 (method theorem): the certificate's per-head trace, for the saturation scales
  json fields;              // the certificate's scalar fields (one level into its objects), for the result's copies
  json ks;                  // ks: what `construct ks --json` reports, re-derived from the certificate (below)
  json not_memorized;       // theorem1: the cell's examples the certificate is not about
};

// A certificate's scalar members, and the scalar members of its object members (not its arrays: weights
// and data are large and are what the checker read).
json scalar_fields(const json& c) {
  json out = json::object();
  for (auto& [k, v] : c.items()) {
    if (v.is_object()) {
      json o = json::object();
      for (auto& [k2, v2] : v.items())
        if (!v2.is_structured()) o[k2] = v2;
      out[k] = o;
    } else if (!v.is_structured()) {
      out[k] = v;
    }
  }
  return out;
}

// The first field the command's result and the certificate both have (scalars, one level into objects)
// with different values, as "key" or "key.member"; "" when none. `skip`: fields whose meanings differ.
std::string shared_difference(const json& result, const json& fields, const std::set<std::string>& skip) {
  for (auto& [k, v] : fields.items()) {
    if (skip.count(k) || !result.contains(k)) continue;
    const json& r = result[k];
    if (v.is_object()) {
      if (!r.is_object()) return k;
      for (auto& [k2, v2] : v.items())
        if (r.contains(k2) && r[k2] != v2) return k + "." + k2;
    } else if (r != v) {
      return k;
    }
  }
  return "";
}

// The examples a theorem1 certificate is about, as a data set: the rows `examples` of the cell's data
// (every top-level list with one entry per example), in that order.
bool data_rows(const json& data, const json& examples, std::size_t T, json& out) {
  out = json::object();
  for (auto& [k, v] : data.items()) {
    if (!v.is_array() || v.size() != T) { out[k] = v; continue; }
    json rows = json::array();
    for (const auto& e : examples) {
      if (!e.is_number_unsigned() || e.get<std::uint64_t>() >= T) return false;
      rows.push_back(v[e.get<std::size_t>()]);
    }
    out[k] = rows;
  }
  return true;
}

Derived derive(const Spec& s, const json& params, std::uint64_t seed, const fs::path& root, const fs::path& dir) {
  Derived d;
  const TaskDef& def = *s.def;
  const fs::path cert = def.name == "claim" ? dir / "certs" : dir / "cert.json";
  std::error_code ec;
  if (!fs::exists(cert, ec)) {
    d.why = "no certificate " + rel(cert, root) + " to re-verify";
    return d;
  }
  d.certificate = rel(cert, root);
  const fs::path scratch = dir / "recheck";
  fs::remove_all(scratch, ec);
  fs::create_directories(scratch);
  struct Clean { fs::path p; ~Clean() { std::error_code e; fs::remove_all(p, e); } } clean{scratch};
  auto mismatch = [&](const std::string& what) { d.why = d.certificate + " disagrees with the spec: " + what; return d; };
  try {
    if (def.name == "claim") {
      if (!fs::is_directory(cert)) return mismatch("expected a directory of certificates");
      // `claims run ID --cert-dir` names instance i's certificate "<ID with / as _>-<i>.json" (its "claim"
      // may be a more general statement's, e.g. theorem-1 for proposition-1).
      std::string stem = s.claim_id;
      std::replace(stem.begin(), stem.end(), '/', '_');
      for (const auto& e : fs::directory_iterator(cert)) {
        if (e.path().extension() != ".json") continue;
        const std::string name = e.path().stem().string();
        const std::string index = name.rfind(stem + "-", 0) == 0 ? name.substr(stem.size() + 1) : "";
        if (index.empty() || index.size() > 9 || !std::all_of(index.begin(), index.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
          return mismatch(rel(e.path(), root) + " is not named as an instance of the claim");
        if (std::string why = verify_child(e.path(), {}, scratch, root); !why.empty()) { d.why = why; return d; }
      }
      // The counts of the claim's run, each instance it counts backed by a verified certificate.
      return d;  // (checked against the row by the caller: instances, confirmed, counterexamples <= certs)
    }
    // The cell's data, regenerated from the spec: the certificate must be about it.
    const fs::path data = scratch / def.data_file;
    ChildResult g = child_run_self(generate_command(s, params, seed, data), (scratch / "generate.out").string(),
                                   (scratch / "generate.err").string());
    if (g.exit != kExitHolds) { d.why = "the cell's data cannot be regenerated (" + first_line(g.err) + ")"; return d; }
    const json c = json::parse(file_read_all(cert.string()));
    if (!c.is_object()) return mismatch("expected a JSON object");
    // The certificate's options against the cell's (where the spec gives them).
    auto same = [&](const char* cert_key, const char* param_key) {
      return !params.contains(param_key) || (params[param_key].is_number_integer() && int_field(c, cert_key) == params[param_key].get<std::int64_t>());
    };
    fs::path against = data;
    if (def.name == "theorem1") {
      if (memcert_checker::kind_name(c.value("kind", std::string())) != "theorem1") return mismatch("expected a theorem1 certificate");
      for (auto [ck, pk] : {std::pair{"H", "heads"}, {"n", "n"}, {"d", "d"}, {"dh", "dh"}, {"dv", "dv"}})
        if (!same(ck, pk)) return mismatch(std::string("its \"") + ck + "\" is not the cell's " + pk);
      if (params.contains("skip") && c.value("skip", json()) != params["skip"]) return mismatch("its \"skip\" is not the cell's");
      const std::int64_t T = int_field(c, "T"), H = int_field(c, "H"), n = int_field(c, "n"), dh = int_field(c, "dh");
      if (T < 1 || H < 1 || n < 1 || dh < 1 || !c.contains("examples") || !c["examples"].is_array() || std::int64_t(c["examples"].size()) != T)
        return mismatch("expected T >= 1 examples, H, n, dh");
      const std::int64_t Tdata = params.value("T", std::int64_t(0));
      // About every example in order (or data by reference, whose digest covers the first T): the data
      // itself; about some of them: those rows of the data, in the certificate's order.
      bool every = T == Tdata;
      for (std::int64_t t = 0; every && t < T; ++t) every = c["examples"][std::size_t(t)] == json(t);
      const bool by_reference = c.contains("data") && c["data"].is_object() && c["data"].contains("file");
      if (!every && !by_reference) {
        const json all = json::parse(file_read_all(data.string()));
        json mine;
        if (!data_rows(all, c["examples"], std::size_t(Tdata), mine)) return mismatch("its examples are not rows of the cell's data");
        against = scratch / "examples.json";
        file_write_atomic(against.string(), mine.dump());
      }
      d.certified = {{"T_certified", T}, {"rank_Z_lower", T}, {"T_star", mahdavi24::t_star(H, mahdavi24::theorem1_r(n, dh))}};
      std::vector<bool> in(std::size_t(std::max<std::int64_t>(Tdata, 0)), false);
      for (const auto& e : c["examples"])
        if (e.is_number_unsigned() && e.get<std::uint64_t>() < in.size()) in[e.get<std::size_t>()] = true;
      d.not_memorized = json::array();
      for (std::size_t t = 0; t < in.size(); ++t)
        if (!in[t]) d.not_memorized.push_back(t);
      if (c.value("method", std::string("theorem")) == "theorem" && c.contains("trace") && c["trace"].is_array()) d.trace = c["trace"];
      d.exit = T == Tdata ? kExitHolds : kExitNegative;
    } else if (def.name == "ks") {
      if (memcert_checker::kind_name(c.value("kind", std::string())) != "ks") return mismatch("expected a ks certificate");
      for (const char* k : {"N", "n", "d", "C"})
        if (!same(k, k)) return mismatch(std::string("its \"") + k + "\" is not the cell's");
      const bool deep = params.contains("deep-sets") && params["deep-sets"] == json(true);
      if ((c.value("claim", std::string()) == "ks25/theorem-D.1") != deep) return mismatch("its claim is not the cell's (deep-sets)");
      const json& cx = c.contains("complexity") ? c["complexity"] : json();
      d.certified = {{"N", int_field(c, "N")}};
      for (const char* k : {"parameters", "nonzero_parameters", "depth", "width", "bit_complexity"}) {
        if (int_field(cx, k) < 0) return mismatch(std::string("expected complexity.") + k);
        d.certified[k] = int_field(cx, k);
      }
      // The result `construct ks --check --json` writes for this certificate (the checker accepting it is
      // what "memorized", "mismatches" 0, "consistent", "verified" and eq. (55) holding state), its
      // copies of the certificate's fields, and Theorem B.1's (D.1's) expressions recomputed from them.
      const std::string claim = c.value("claim", std::string()), setting = c.value("setting", std::string());
      const json& sep = c.contains("separation") ? c["separation"] : json();
      const std::int64_t N = int_field(c, "N"), n = int_field(c, "n"), dd = int_field(c, "d"), C = int_field(c, "C");
      const bool s2s = setting == "seq-to-seq";
      if ((claim != "ks25/theorem-4.1" && claim != "ks25/corollary-4.1" && claim != "ks25/theorem-D.1") ||
          (setting != "next-token" && !s2s) || N < 1 || n < 1 || dd < 1 || C < 1 || C > INT32_MAX || !sep.is_object() ||
          !sep.contains("r2") || !sep["r2"].is_string() || !sep.contains("delta2") || !sep["delta2"].is_string() ||
          !c.contains("tokens") || !c["tokens"].is_array())
        return mismatch("expected a Theorem 4.1, Corollary 4.1 or D.1 certificate with N, n, d, C, separation and tokens");
      const std::optional<Rational> r2 = rational_parse(sep["r2"].get<std::string>()),
                                    delta2 = rational_parse(sep["delta2"].get<std::string>());
      if (!r2 || !delta2) return mismatch("expected exact separation.r2 and separation.delta2");
      const ks25::KsBounds b = ks25::ks_theorem_bounds(std::size_t(N), std::size_t(n), std::size_t(dd), long(C), *r2, *delta2,
                                                       s2s, claim == "ks25/theorem-D.1");
      d.ks = {{"claim", claim}, {"setting", setting}, {"N", N}, {"n", n}, {"d", dd}, {"C", C},
              {"distinct_tokens", c["tokens"].size()}, {"consistent", true}, {"memorized", true}, {"mismatches", 0},
              {"verified", true},
              {"bounds", {{"log2_R", b.log2_R}, {"depth_expr", b.depth_expr}, {"bit_expr", b.bit_expr},
                          {"parameters_expr", b.parameters_expr}, {"width", b.width_bound}}}};
      for (const char* k : {"parameters", "nonzero_parameters", "depth", "width", "bit_complexity"}) d.ks[k] = d.certified[k];
      d.ks["separation"] = {{"r2", rational_to_string(*r2)}, {"delta2", rational_to_string(*delta2)},
                            {"delta2_exact", sep.value("method", std::string()) == "exact"}};
      d.ks["eq55"] = {{"holds", true}, {"bound2", rational_to_string(Rational(1, static_cast<unsigned long>(n * n)))}};
      if (claim == "ks25/theorem-D.1") d.ks["eq55"]["min_dist2"] = "0";  // not part of Theorem D.1: not measured
      if (c.contains("data") && c["data"].is_object()) d.ks["data_ref"] = true;
    } else {  // dana24
      if (memcert_checker::kind_name(c.value("kind", std::string())) != "dana24") return mismatch("expected a dana24 certificate");
      for (auto [ck, pk] : {std::pair{"N", "N"}, {"S", "S"}, {"T", "T"}, {"H", "heads"}, {"dh", "dh"}, {"d", "d"}})
        if (!same(ck, pk)) return mismatch(std::string("its \"") + ck + "\" is not the cell's " + pk);
      const std::int64_t H = int_field(c, "H"), dh = int_field(c, "dh"), dd = int_field(c, "d");
      if (H < 0 || dh < 0 || dd < 0 || int_field(c, "T") < 0 || int_field(c, "parameters") < 0 || !c.contains("min_margin"))
        return mismatch("expected T, H, dh, d, parameters, min_margin");
      d.certified = {{"T", int_field(c, "T")}, {"T0", H * dh + dd}, {"memorized_count", int_field(c, "T")},
                     {"min_margin", c["min_margin"]}, {"parameters", int_field(c, "parameters")}};
    }
    d.fields = scalar_fields(c);
    if (def.name == "theorem1" && !d.fields.contains("method")) d.fields["method"] = "theorem";  // absent: theorem
    if (std::string why = verify_child(cert, against, scratch, root); !why.empty()) d.why = why;
  } catch (const json::exception&) {
    d.why = d.certificate + " is not a JSON certificate";
  } catch (const InputError& e) {
    d.why = e.what();
  }
  return d;
}

// A ks row's result against the figures re-derived from its certificate (Derived::ks): every field either
// equal to the re-derived one, or one of the construction's diagnostics no certificate states, kept as
// found: the distinct multisets counted, the token pairs attaining delta, eq. (55)'s smallest distance (the
// checker proved every pair of keys >= 1/n apart: it must be >= bound2), and f1's and f2's construction
// parameters and sub-network complexities. Any other field, or one missing: "" is not returned.
std::string ks_result_disagreement(const json& result, const json& want) {
  static const std::set<std::string> kept = {"distinct_multisets", "f1", "f2"};
  for (auto& [k, v] : result.items())
    if (!want.contains(k) && !kept.count(k)) return "row.json's result has a field construct ks does not re-derive (" + k + ")";
  for (auto& [k, v] : want.items()) {
    if (!result.contains(k)) return "row.json's result disagrees with its certificate (" + k + ")";
    const json& r = result[k];
    if (k == "separation" || k == "eq55") {
      if (!r.is_object()) return "row.json's result disagrees with its certificate (" + k + ")";
      for (auto& [k2, v2] : r.items())
        if (!v.contains(k2) && !(k == "separation" && k2 == "delta_tokens") && !(k == "eq55" && k2 == "min_dist2"))
          return "row.json's result disagrees with its certificate (" + k + "." + k2 + ")";
      for (auto& [k2, v2] : v.items())
        if (r.value(k2, json()) != v2) return "row.json's result disagrees with its certificate (" + k + "." + k2 + ")";
    } else if (r != v) {
      return "row.json's result disagrees with its certificate (" + k + ")";
    }
  }
  const json& m = result["eq55"].value("min_dist2", json());
  const std::optional<Rational> md = m.is_string() ? rational_parse(m.get<std::string>()) : std::nullopt,
                                bound = rational_parse(want["eq55"]["bound2"].get<std::string>());
  if (!md || !bound || (!want["eq55"].contains("min_dist2") && *md < *bound)) return "row.json's result disagrees with its certificate (eq55.min_dist2)";
  for (const char* k : {"distinct_multisets"})
    if (int_field(result, k) < 1) return std::string("row.json's result disagrees with its certificate (") + k + ")";
  for (const char* k : {"f1", "f2"})
    if (!result[k].is_object()) return std::string("row.json's result disagrees with its certificate (") + k + ")";
  return "";
}

// "" when `row` (found in the cell's directory) is what the cell's certificate establishes; else why not.
std::string row_disagreement(const Spec& s, const Cell& c, const json& row, const fs::path& root, const fs::path& dir) {
  if (!row.is_object()) return "row.json is not a JSON object";
  if (row.value("cell", json()) != json(c.index) || row.value("task", json()) != json(s.task) ||
      row.value("params", json()) != c.params || row.value("seed", json()) != json(c.seed))
    return "row.json disagrees with the spec (its cell, task, params or seed)";
  for (auto& [k, v] : row.items())  // only the fields a run writes for a certified cell (no "error")
    if (!std::set<std::string>{"cell", "task", "params", "seed", "exit", "verdict", "certified", "result", "certificate", "seconds"}.count(k) &&
        !(s.capacity && k == "capacity"))
      return "row.json has a field a run of this sweep does not write";
  if (!row.contains("certificate") || !row["certificate"].is_string()) {
    std::string v;  // named only when it is one of the sweep's own words (a row's text is never echoed)
    for (const char* w : {"holds", "negative", "undecided", "bad-input", "internal-error"})
      if (row.value("verdict", json()) == json(w)) v = std::string(" (verdict ") + w + ")";
    return "its row names no certificate to re-verify" + v;
  }
  const json& result = row.value("result", json());
  // The row's own figures against what was derived, and the fields of the command's result that repeat them.
  auto agrees = [&](const Derived& d, const json& r, std::int64_t size) -> std::string {
    if (r.value("certificate", json()) != json(d.certificate) || r.value("exit", json()) != json(d.exit) ||
        r.value("verdict", json()) != json(verdict_of(d.exit)) || r.value("certified", json()) != d.certified)
      return "row.json disagrees with its certificate";
    if (!result.is_object()) return "row.json has no result object";
    if (s.def->name == "ks" && d.ks.is_object()) return ks_result_disagreement(result, d.ks);
    // Only a theorem1 result built by the theorem's construction is re-derived field by field (from the
    // certificate's trace); other results carry figures no certificate states (ks bounds and eq55, dana24
    // rank certificate, the generic route's ranks, c_network, ...): such a cell runs again.
    if (s.def->name != "theorem1" || !d.trace.is_array())
      return "its result carries figures that are not re-derived from its certificate (" + s.def->name +
             (s.def->name == "theorem1" ? ", not the theorem's construction" : "") + ")";
    for (auto& [k, v] : d.certified.items())
      if (result.contains(k) && result[k] != v) return "row.json's result disagrees with its certificate (" + k + ")";
    if (s.def->name == "theorem1" &&
        (result.value("memorized_count", json()) != d.certified["T_certified"] || result.value("T", json()) != json(size) ||
         result.value("memorized", json()) != json(d.exit == kExitHolds) || result.value("verified", json()) != json(true) ||
         result.value("not_memorized", json()) != d.not_memorized))
      return "row.json's result disagrees with its certificate (memorized, memorized_count, not_memorized, T)";
    // The result's copies of the certificate's fields (H, n, d, dh, N, min_margin, separation.delta2, ...);
    // a theorem1 result's claim, hypotheses and T are the theorem's and the data's, not the kept certificate's.
    static const std::set<std::string> theorem1_own = {"claim", "hypotheses", "T"};
    if (std::string k = shared_difference(result, d.fields, s.def->name == "theorem1" ? theorem1_own : std::set<std::string>{});
        !k.empty())
      return "row.json's result disagrees with its certificate (" + k + ")";
    // The saturation scales a plot shows, per head, as the kept theorem certificate's trace has them.
    // Every head's entry is there, each scale as the trace states it (absent in both, or equal).
    const json& sat = result.value("saturation", json());
    if (!sat.is_array() || sat.size() != d.trace.size())
      return "row.json's result disagrees with its certificate (saturation: one entry per head)";
    for (std::size_t h = 0; h < sat.size(); ++h)
      for (const char* k : {"head", "c", "c_proof", "c_weyl", "c_minimal", "eps"})
        if (!sat[h].is_object() || !d.trace[h].is_object() || sat[h].value(k, json()) != d.trace[h].value(k, json()))
          return "row.json's result disagrees with its certificate (saturation[" + std::to_string(h) + "]." + k + ")";
    if (result.value("theorem_memorized_count", json()) != d.certified["T_certified"])
      return "row.json's result disagrees with its certificate (theorem_memorized_count)";
    return "";
  };
  // A claim's result (its verdict, counts, per-instance outcomes and parameters) is the run's, not stated
  // by the certificates the run wrote: the cell runs again.
  if (s.def->name == "claim")
    return "a claim's result (its verdict, counts and per-instance outcomes) is not re-derived from its certificates";
  const std::string& key = s.def->size_key;
  if (!s.capacity) {
    Derived d = derive(s, c.params, c.seed, root, dir);
    if (!d.why.empty()) return d.why;
    return agrees(d, row, c.params.value(key, std::int64_t(0)));
  }
  // A capacity search: every probe that certified something is re-derived from its own certificate; the
  // cell's answer is the largest of them, and the row's certificate that probe's.
  const json& cap = row.value("capacity", json());
  if (!cap.is_object() || !cap.contains("probes") || !cap["probes"].is_array() || cap["probes"].empty())
    return "row.json has no capacity search";
  const std::int64_t from = size_resolve(s.capacity_from, c.params, "capacity/from");
  const std::int64_t to = size_resolve(s.capacity_to, c.params, "capacity/to");
  if (int_field(cap, "from") != from || int_field(cap, "to") != to) return "row.json's capacity bounds disagree with the spec";
  if (cap.value("stopped", json()) != json(nullptr)) return "row.json's capacity search stopped early, which is not re-derived from a certificate";
  std::int64_t best = 0;
  const json* best_probe = nullptr;
  Derived best_derived;
  for (const auto& q : cap["probes"]) {
    const std::int64_t size = int_field(q, key.c_str()), got = int_field(q, "certified");
    if (size < from || size > to || got < 0) return "row.json's capacity probes disagree with the spec";
    if (got == 0) continue;  // certifies nothing
    json p = c.params;
    p[key] = size;
    Derived d = derive(s, p, c.seed, root, dir / (key + std::to_string(size)));
    if (!d.why.empty()) return d.why;
    if (certified_size(*s.def, d.certified) != got || q.value("exit", json()) != json(d.exit) ||
        q.value("verdict", json()) != json(verdict_of(d.exit)))
      return "row.json's probe at " + key + " = " + std::to_string(size) + " disagrees with its certificate";
    if (got > best) { best = got; best_probe = &q; best_derived = d; }
  }
  if (!best_probe) return "its row names no certificate to re-verify";
  const json not_established = best < to ? json{{"above", best}, {"up_to", to}} : json(nullptr);
  if (int_field(cap, "certified") != best || cap.value("not_established", json()) != not_established)
    return "row.json's capacity disagrees with its probes' certificates";
  return agrees(best_derived, row, int_field(*best_probe, key.c_str()));
}

// Whether a cell found done can be kept: "" when its row.json re-derives from its certificate.
std::string row_check(const Spec& s, const Cell& c, const fs::path& root, const fs::path& dir) {
  const fs::path row_path = dir / "row.json";
  json row;
  try {
    row = json::parse(file_read_all(row_path.string()));
  } catch (const json::parse_error& e) {
    return "row.json is not valid JSON (byte " + std::to_string(e.byte) + ")";
  }
  try {
    return row_disagreement(s, c, row, root, dir);
  } catch (const json::exception&) {
    return "row.json is not a row of this sweep";
  }
}

fs::path cell_dir(const fs::path& root, std::size_t i) {
  std::ostringstream ss;
  ss << std::setw(6) << std::setfill('0') << i;
  return root / "cells" / ss.str();
}

std::string eta_text(double secs) {
  long s = static_cast<long>(secs + 0.5);
  std::ostringstream ss;
  if (s >= 3600) ss << s / 3600 << "h" << std::setw(2) << std::setfill('0') << (s % 3600) / 60 << "m";
  else if (s >= 60) ss << s / 60 << "m" << std::setw(2) << std::setfill('0') << s % 60 << "s";
  else ss << s << "s";
  return ss.str();
}

// A filesystem failure as bad input naming the path (never an internal error: the directory is the user's).
std::string fs_message(const fs::filesystem_error& e) {
  return (e.path1().empty() ? std::string("sweep directory") : e.path1().string()) +
         ": expected a readable and writable path, got " + e.code().message();
}

// The kind of what is at `p` ("" when nothing is), without following a failure into an exception.
// A symbolic link is reported as one (never followed): a cell's directory or row that is a link may name
// another cell's, and that cell would then be merged twice.
std::string entry_kind(const fs::path& p, fs::file_type& t) {
  std::error_code ec;
  fs::file_status st = fs::symlink_status(p, ec);
  t = st.type();
  if (ec && t != fs::file_type::not_found) throw InputError(p.string() + ": expected a readable path, got " + ec.message());
  switch (t) {
    case fs::file_type::not_found: return "";
    case fs::file_type::regular: return "a file";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::symlink: return "a symbolic link";
    default: return "a special file";
  }
}

// DIR's structure, checked before any cell runs: what a resumed sweep reads or replaces must be of the
// kind the sweep writes (a directory per cell, regular readable files), else bad input naming it.
// (What a row or certificate SAYS is checked per cell, by row_check; a disagreement re-runs the cell.)
void dir_check(const fs::path& root, const std::vector<Cell>& cells) {
  fs::file_type t;
  for (const auto& c : cells) {
    const fs::path dir = cell_dir(root, c.index);
    std::string k = entry_kind(dir, t);
    if (k.empty()) continue;
    if (t != fs::file_type::directory) throw InputError(dir.string() + ": expected the directory of cell " + std::to_string(c.index) + ", got " + k);
    const fs::path row = dir / "row.json";
    k = entry_kind(row, t);
    if (k.empty()) continue;
    if (t != fs::file_type::regular) throw InputError(row.string() + ": expected the row of cell " + std::to_string(c.index) + " (a file), got " + k);
    if (::access(row.c_str(), R_OK) != 0)
      throw InputError(row.string() + ": expected a readable file, got " + std::strerror(errno));
  }
  const fs::path results = root / "results.jsonl";
  std::string k = entry_kind(results, t);
  if (!k.empty() && t != fs::file_type::regular) throw InputError(results.string() + ": expected a file (the merged rows), got " + k);
}

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  Group g = group_join();
  // An exception escaping one rank would leave the others waiting at a barrier: abort the group then.
  struct Leave { Group g; ~Leave() { group_leave(g, std::uncaught_exceptions() > 0); } } leave{g};
  const fs::path root(a.out);
  Spec s;
  std::vector<Cell> cells;
  // Every rank parses the spec (the cell order is a function of it); only rank 0 reports a defect.
  int status = kExitHolds;
  std::string message;
  try {
    s = spec_parse(a.spec, file_read_all(a.spec));
    try {
      cells = spec_cells(s);
    } catch (const InputError& e) {
      throw InputError(a.spec + ": /" + e.what());
    }
    for (const auto& c : cells) {  // capacity bounds are checked before any cell runs
      if (!s.capacity) continue;
      std::int64_t from = size_resolve(s.capacity_from, c.params, a.spec + ": /capacity/from");
      std::int64_t to = size_resolve(s.capacity_to, c.params, a.spec + ": /capacity/to");
      if (from < 1 || to < from || to > std::int64_t(kMaxOptionValue))
        throw InputError(a.spec + ": /capacity: expected 1 <= from <= to <= 1e8, got from = " + std::to_string(from) + ", to = " +
                         std::to_string(to) + " for cell " + std::to_string(c.index) + " " + c.params.dump());
    }
    if (g.rank == 0) {
      fs::create_directories(root / "cells");
      std::string canon = s.canonical.dump() + "\n";
      fs::path sp = root / "spec.json";
      if (fs::exists(sp) && file_read_all(sp.string()) != canon)
        throw InputError(sp.string() + ": 1: expected the spec this sweep was started with (resume with the same spec, or use a new --out)");
      dir_check(root, cells);
      if (!fs::exists(sp)) file_write_atomic(sp.string(), canon);
      // A merged file from an earlier run may hold rows this run re-runs: it goes until every cell passed again.
      fs::remove(root / "results.jsonl");
    }
  } catch (const InputError& e) {
    status = kExitBadInput;
    message = e.what();
  } catch (const fs::filesystem_error& e) {
    status = kExitBadInput;
    message = fs_message(e);
  }
  status = group_broadcast_int(g, status);  // rank 0's verdict on the spec and directory is everyone's
  if (status != kExitHolds) {
    if (g.rank == 0) std::cerr << "memcert: " << message << "\n";
    return status;
  }
  // Run this rank's cells; a cell found done is kept only when its row re-derives from its certificate.
  std::size_t mine = 0, ran = 0, skipped = 0, rerun = 0;
  for (const auto& c : cells) mine += c.index % std::size_t(g.size) == std::size_t(g.rank);
  auto run_start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  bool show = a.progress || progress_enabled();
  int failed = kExitHolds;
  std::string failure;
  for (const auto& c : cells) {
    if (c.index % std::size_t(g.size) != std::size_t(g.rank)) continue;
    fs::path dir = cell_dir(root, c.index);
    fs::path row_path = dir / "row.json";
    try {
      bool keep = false;
      if (fs::exists(row_path)) {
        const std::string why = row_check(s, c, root, dir);
        keep = why.empty();
        if (!keep) {
          // One write per line: under mpirun every rank writes to the same stderr.
          std::cerr << ("memcert: cell " + std::to_string(c.index) + " (" + dir.string() + "): " + why + "; re-running\n");
          ++rerun;
        }
      }
      if (keep) {
        ++skipped;
      } else {
        auto t0 = std::chrono::steady_clock::now();
        json row;
        if (s.capacity) {
          row = run_capacity(s, c, root, dir);
        } else {
          row = row_base(s, c);
          row_fill(row, run_once(s, c.params, c.seed, root, dir));
        }
        row["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        file_write_atomic(row_path.string(), row.dump() + "\n");  // the cell's done marker
        ++ran;
      }
    } catch (const InputError& e) {
      failed = kExitBadInput;
      failure = e.what();
      break;
    } catch (const fs::filesystem_error& e) {
      failed = kExitBadInput;
      failure = fs_message(e);
      break;
    }
    ++done;
    if (show) {
      double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
      std::string eta = ran ? eta_text(el / double(ran) * double(mine - done)) : "?";
      std::cerr << (progress_enabled() ? "\r" : "") << "sweep" << (g.size > 1 ? "[rank " + std::to_string(g.rank) + "]" : "")
                << ": cells " << done << "/" << mine << ", elapsed " << eta_text(el) << ", ETA " << eta
                << (progress_enabled() && done < mine ? "" : "\n") << std::flush;
    }
  }
  // Every rank waits here; a rank that met a damaged directory stops the merge everywhere.
  if (!failure.empty()) std::cerr << "memcert: " << failure << "\n";
  if (group_max_int(g, failed) != kExitHolds) return kExitBadInput;
  // Rank 0 merges the rows in cell order into results.jsonl (atomically: readers never see half a file).
  // Each row was written or re-verified by its rank in this run.
  int code = kExitHolds;
  bool merged_ok = true;
  std::string merged;
  std::map<std::string, std::size_t> verdicts;
  std::string bad;
  if (g.rank == 0) {
    try {
      for (const auto& c : cells) {
        fs::path rp = cell_dir(root, c.index) / "row.json";
        json row;
        try {
          row = json::parse(file_read_all(rp.string()));
        } catch (const json::exception&) {
          throw InputError(rp.string() + ": expected the row this run wrote or re-verified, got a file that is not one (changed while the sweep ran?)");
        }
        if (!row.is_object()) throw InputError(rp.string() + ": expected a row (a JSON object), got another JSON value (changed while the sweep ran?)");
        merged += row.dump() + "\n";
        std::string v = row.value("verdict", "internal-error");
        ++verdicts[v];
        if (v == "internal-error") code = kExitInternal;
        else if (v == "bad-input" && code == kExitHolds) {
          code = kExitBadInput;
          bad = "cell " + std::to_string(c.index) + " " + row.value("params", json()).dump() + ": " + row.value("error", std::string("refused"));
        }
      }
    } catch (const InputError& e) {
      std::cerr << "memcert: " << e.what() << "\n";
      merged_ok = false;
    }
  }
  if (g.rank == 0 && !merged_ok) return group_broadcast_int(g, kExitBadInput);
  if (g.rank == 0) {
    fs::path results = root / "results.jsonl";
    file_write_atomic(results.string(), merged);
    json summary{{"task", s.task}, {"cells", cells.size()}, {"ran", ran}, {"rerun", rerun}, {"skipped", skipped},
                 {"ranks", g.size}, {"verdicts", verdicts}, {"results", results.string()}};
    std::ostringstream h;
    h << "sweep " << s.task << ": " << cells.size() << " cells (" << g.size << " rank" << (g.size > 1 ? "s" : "")
      << "; rank 0 ran " << ran;
    if (rerun) h << " (" << rerun << " again: their rows did not re-derive from their certificates)";
    h << ", skipped " << skipped << " already done and re-verified);";
    for (auto& [v, n] : verdicts) h << " " << v << " " << n;
    h << "\nresults: " << results.string();
    emit(a.json, summary, h.str(), start);
    if (code == kExitBadInput) std::cerr << "memcert: " << a.spec << ": /grid: expected options every cell's command accepts; " << bad << "\n";
    if (code == kExitInternal) std::cerr << "memcert: internal error: a cell crashed or failed (see its row in " << results.string() << ")\n";
  }
  return group_broadcast_int(g, code);
}

const CommandRegistrar reg{{95, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("sweep", "Run a grid of constructions or claims (resumable; shards over MPI ranks under mpirun)");
  sub->add_option("SPEC", args->spec, "Sweep spec (.json): {\"task\", \"grid\", \"seeds\"[, \"data\", \"capacity\"]}")->required();
  sub->add_option("--out", args->out, "Output directory (results.jsonl, cells/, spec.json)")->required();
  sub->add_flag("--progress", args->progress, "Report progress with ETA on stderr even when it is not a terminal");
  sub->add_flag("--json", args->json, "Print one JSON summary object");
  bind(sub, [args]() { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
