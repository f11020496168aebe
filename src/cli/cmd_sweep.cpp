// memcert sweep SPEC.json --out DIR [--progress] [--json]
// A grid of cells over a construction (theorem1, ks, dana24) or a claim, each cell run by this binary
// as child processes (`generate ...` then `construct ... --json`, or `claims run ID --json`), the row
// built from the child's JSON. Layout (docs/SWEEP.md):
//   DIR/spec.json               the spec as understood; a resumed sweep must have the same one
//   DIR/cells/NNNNNN/           the cell's data set, certificate(s), child output, and row.json
//   DIR/results.jsonl           one row per cell, in cell order, written once every cell is done
// Resumable: row.json is written atomically after the cell finished, so an interrupted sweep reruns only
// the cells without one. Under mpirun (a build with MPI), rank k runs the cells i with i % K == k and
// rank 0 merges; the merged file is identical to a single-process run's apart from "seconds".
// Exit: 0 every cell ran (whatever its verdict: negative and undecided cells are results); 2 bad spec or
// a cell whose command refused its options (recorded in its row); 70 a cell crashed or hit an internal
// error.
#include <exception>
#include <filesystem>
#include <map>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "memcert/data/matrix_io.hpp"
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
      c["T_star"] = r["H"].get<std::int64_t>() * (r["r"].get<std::int64_t>() - 1) + 1;
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

RunOutcome run_once(const Spec& s, const json& params, std::uint64_t seed, const fs::path& root, const fs::path& dir) {
  fs::create_directories(dir);
  RunOutcome o;
  const TaskDef& d = *s.def;
  auto add_options = [&](std::vector<std::string>& a, const std::vector<std::string>& keys) {
    for (const auto& k : keys)
      if (params.contains(k)) { a.push_back("--" + k); a.push_back(value_text(params[k])); }
  };
  std::vector<std::string> cmd;
  fs::path cert = dir / "cert.json";
  if (d.name == "claim") {
    fs::create_directories(dir / "certs");
    cmd = {"claims", "run", s.claim_id, "--seed", std::to_string(seed), "--cert-dir", (dir / "certs").string(), "--json"};
    add_options(cmd, d.construct_options);
  } else {
    fs::path data = dir / "data.json";
    std::vector<std::string> gen{"generate", s.data};
    add_options(gen, d.generate_options);
    gen.insert(gen.end(), {"--seed", std::to_string(seed), "--out", data.string(), "--json"});
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
      if (from < 1 || to < from)
        throw InputError(a.spec + ": /capacity: expected 1 <= from <= to, got from = " + std::to_string(from) + ", to = " +
                         std::to_string(to) + " for cell " + std::to_string(c.index) + " " + c.params.dump());
    }
    if (g.rank == 0) {
      fs::create_directories(root / "cells");
      std::string canon = s.canonical.dump() + "\n";
      fs::path sp = root / "spec.json";
      if (fs::exists(sp) && file_read_all(sp.string()) != canon)
        throw InputError(sp.string() + ": 1: expected the spec this sweep was started with (resume with the same spec, or use a new --out)");
      if (!fs::exists(sp)) file_write_atomic(sp.string(), canon);
    }
  } catch (const InputError& e) {
    status = kExitBadInput;
    message = e.what();
  } catch (const fs::filesystem_error& e) {
    status = kExitBadInput;
    message = a.out + ": expected a writable directory, got " + e.code().message();
  }
  status = group_broadcast_int(g, status);  // rank 0's verdict on the spec and directory is everyone's
  if (status != kExitHolds) {
    if (g.rank == 0) std::cerr << "memcert: " << message << "\n";
    return status;
  }
  // Run this rank's cells.
  std::size_t mine = 0, ran = 0, skipped = 0;
  for (const auto& c : cells) mine += c.index % std::size_t(g.size) == std::size_t(g.rank);
  auto run_start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  bool show = a.progress || progress_enabled();
  for (const auto& c : cells) {
    if (c.index % std::size_t(g.size) != std::size_t(g.rank)) continue;
    fs::path dir = cell_dir(root, c.index);
    fs::path row_path = dir / "row.json";
    if (fs::exists(row_path)) {
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
    ++done;
    if (show) {
      double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
      std::string eta = ran ? eta_text(el / double(ran) * double(mine - done)) : "?";
      std::cerr << (progress_enabled() ? "\r" : "") << "sweep" << (g.size > 1 ? "[rank " + std::to_string(g.rank) + "]" : "")
                << ": cells " << done << "/" << mine << ", elapsed " << eta_text(el) << ", ETA " << eta
                << (progress_enabled() && done < mine ? "" : "\n") << std::flush;
    }
  }
  group_barrier(g);
  // Rank 0 merges the rows in cell order into results.jsonl (atomically: readers never see half a file).
  int code = kExitHolds;
  if (g.rank == 0) {
    std::string merged;
    std::map<std::string, std::size_t> verdicts;
    std::string bad;
    for (const auto& c : cells) {
      fs::path rp = cell_dir(root, c.index) / "row.json";
      json row = json::parse(file_read_all(rp.string()));
      merged += row.dump() + "\n";
      std::string v = row.value("verdict", "internal-error");
      ++verdicts[v];
      if (v == "internal-error") code = kExitInternal;
      else if (v == "bad-input" && code == kExitHolds) {
        code = kExitBadInput;
        bad = "cell " + std::to_string(c.index) + " " + row["params"].dump() + ": " + row.value("error", std::string("refused"));
      }
    }
    fs::path results = root / "results.jsonl";
    file_write_atomic(results.string(), merged);
    json summary{{"task", s.task}, {"cells", cells.size()}, {"ran", ran}, {"skipped", skipped}, {"ranks", g.size},
                 {"verdicts", verdicts}, {"results", results.string()}};
    std::ostringstream h;
    h << "sweep " << s.task << ": " << cells.size() << " cells (" << g.size << " rank" << (g.size > 1 ? "s" : "")
      << "; rank 0 ran " << ran << ", skipped " << skipped << " already done);";
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
