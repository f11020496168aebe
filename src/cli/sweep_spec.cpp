// The sweep spec: parsing, validation (exit 2 with one line naming the JSON pointer), the task table, and
// the expansion into cells.
#include "sweep_spec.hpp"

#include <algorithm>
#include <set>

#include "memcert/numeric/rational.hpp"
#include "memcert/proofs/registry.hpp"
#include "memcert/theory/mahdavi24/quantities.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli::sweep {

namespace {

// The table. Options are the matching commands' own option names (without "--"); docs/SWEEP.md lists them.
const std::vector<TaskDef>& tasks() {
  static const std::vector<TaskDef> t = {
      {"theorem1", "", {"theorem1", "shared", "general"}, {"T", "n", "d", "C"},
       "theorem1", {"heads", "dh", "dv", "tolerance", "beyond"}, {"skip", "no-saturation"}, {}, true, "T"},
      // --check: the independent checker re-verifies the written certificate (a cell counts only then).
      // The data as token_ids + embedding (.npz): O(N n) bytes, where the tokens spelled out take O(N n d).
      {"ks", "ks", {"ks"}, {"N", "n", "d", "V", "C"}, "ks", {"C"}, {"deep-sets"}, {"--check"}, true, "N",
       {"--layout", "tokens"}, "data.npz"},
      {"dana24", "dana24", {"dana24"}, {"N", "S", "T"}, "dana24", {"heads", "dh", "d"}, {}, {}, false, "T"},
      {"claim", "", {}, {}, "", {"instances"}, {}, {}, false, ""},
  };
  return t;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// "H" is the papers' name for --heads; accept both, store "heads".
std::string key_canonical(const std::string& k) { return k == "H" ? "heads" : k; }

std::int64_t param_int(const nlohmann::json& p, const std::string& key, const std::string& where) {
  auto it = p.find(key);
  if (it == p.end() || !it->is_number_integer())
    throw InputError(where + ": expected the grid to give an integer \"" + key + "\" for this formula");
  return it->get<std::int64_t>();
}

// JSON pointer escaping (RFC 6901) of one key.
std::string pointer_token(const std::string& k) {
  std::string out;
  for (char c : k) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// nlohmann::json keeps the last of two equal keys in an object without a word; a spec that says
// "n": [4] and later "n": [8] is ambiguous, so the first repeated key is reported with its JSON pointer.
// Returns "" when every object's keys are distinct.
std::string duplicate_key_pointer(const std::string& text) {
  struct Frame {
    bool array;
    std::size_t index;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> stack;
  std::string found;
  auto here = [&]() {
    std::string p;
    for (const auto& f : stack) p += "/" + (f.array ? std::to_string(f.index) : pointer_token(f.key));
    return p;
  };
  // Called after an element of the innermost container ended: an array moves to its next index.
  auto element_done = [&]() {
    if (!stack.empty() && stack.back().array) ++stack.back().index;
  };
  using E = nlohmann::json::parse_event_t;
  nlohmann::json::parser_callback_t cb = [&](int, E ev, nlohmann::json& parsed) {
    switch (ev) {
      case E::object_start: stack.push_back({false, 0, "", {}}); break;
      case E::array_start: stack.push_back({true, 0, "", {}}); break;
      case E::key: {
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second && found.empty()) found = here();
        break;
      }
      case E::object_end:
      case E::array_end:
        stack.pop_back();
        element_done();
        break;
      case E::value: element_done(); break;
    }
    return true;  // keep everything: a discarded container would hide its children from this callback
  };
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text, cb);
    (void)parsed;
  } catch (const nlohmann::json::exception&) {
  }
  return found;
}

}  // namespace

const TaskDef* task_find(const std::string& name) {
  std::string n = name.rfind("claim:", 0) == 0 ? "claim" : name;
  for (const auto& t : tasks())
    if (t.name == n) return &t;
  return nullptr;
}

std::int64_t size_resolve(const nlohmann::json& v, const nlohmann::json& params, const std::string& where) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (!v.is_string()) throw InputError(where + ": expected an integer or a size formula such as \"T*\"");
  std::string s;
  for (char c : v.get<std::string>())
    if (c != ' ') s += c;
  static const char* bases[] = {"H(n-1)+1", "H(d-1)+1", "H(r-1)+1", "T*", "H*d"};
  for (const char* b : bases) {
    std::string base = b;
    if (s.rfind(base, 0) != 0) continue;
    std::string rest = s.substr(base.size());
    std::int64_t offset = 0;
    if (!rest.empty()) {
      bool ok = rest.size() >= 2 && (rest[0] == '+' || rest[0] == '-') &&
                std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; }) && rest.size() < 12;
      if (!ok) break;
      offset = std::stoll(rest.substr(1)) * (rest[0] == '-' ? -1 : 1);
    }
    std::int64_t H = params.contains("heads") ? param_int(params, "heads", where) : param_int(params, "H", where);
    std::int64_t val = 0;
    if (base == "H(n-1)+1") val = mahdavi24::t_star(H, param_int(params, "n", where));
    else if (base == "H(d-1)+1") val = mahdavi24::t_star(H, param_int(params, "d", where));
    else if (base == "H*d") val = mahdavi24::rank_z_bound(H, param_int(params, "d", where));
    else {  // T* = H(r-1)+1 with r = min(n, dh): Theorem 1's target
      std::int64_t r = param_int(params, "n", where);
      if (params.contains("dh")) r = mahdavi24::theorem1_r(r, param_int(params, "dh", where));
      val = mahdavi24::t_star(H, r);
    }
    return val + offset;
  }
  throw InputError(where + ": expected an integer or one of \"T*\", \"H(n-1)+1\", \"H(d-1)+1\", \"H*d\" (optionally +K or -K), got \"" +
                   v.get<std::string>() + "\"");
}

Spec spec_parse(const std::string& file, const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file + ": byte " + std::to_string(e.byte) + ": expected valid JSON");
  }
  auto fail = [&](const std::string& ptr, const std::string& what) { return InputError(file + ": " + ptr + ": expected " + what); };
  if (std::string dup = duplicate_key_pointer(text); !dup.empty()) throw fail(dup, "each key once in its object, got it twice");
  if (!j.is_object()) throw fail("/", "a JSON object {\"task\", \"grid\", \"seeds\"}");
  static const std::set<std::string> known = {"task", "data", "grid", "seeds", "capacity"};
  for (auto& [k, v] : j.items())
    if (!known.count(k)) throw fail("/" + k, "one of the keys task, data, grid, seeds, capacity");
  Spec s;
  if (!j.contains("task") || !j["task"].is_string())
    throw fail("/task", "\"theorem1\", \"ks\", \"dana24\" or \"claim:<id>\"");
  s.task = j["task"].get<std::string>();
  // The papers' names of the tasks and of the generate kind are the v1 names (docs/SWEEP.md): recorded
  // as those, so a spec by either name resumes the other's output directory.
  if (s.task == "mahdavi24") s.task = "theorem1";
  else if (s.task == "ks25") s.task = "ks";
  s.def = task_find(s.task);
  if (!s.def) throw fail("/task", "\"theorem1\", \"ks\", \"dana24\" or \"claim:<id>\", got \"" + s.task + "\"");
  if (s.def->name == "claim") {
    s.claim_id = s.task.substr(6);
    if (s.claim_id.empty()) throw fail("/task", "a claim id after \"claim:\" (see memcert claims list)");
    if (!proofs::claim_find(s.claim_id))
      throw fail("/task", "\"claim:<id>\" with a registered claim id (see memcert claims list), got an unknown id");
  }
  if (j.contains("data")) {
    const std::string data = j["data"].is_string() && j["data"] == "mahdavi24" && s.def->name == "theorem1"
                                 ? std::string("theorem1")
                                 : j["data"].is_string() ? j["data"].get<std::string>() : std::string();
    if (!j["data"].is_string() || !contains(s.def->data_kinds, data))
      throw fail("/data", s.def->data_kinds.empty() ? "no \"data\" for this task"
                                                    : "one of the generate kinds of task " + s.def->name);
    s.data = data;
  } else if (!s.def->data_kinds.empty()) {
    s.data = s.def->data_kinds.front();
  }
  if (!j.contains("grid") || !(j["grid"].is_object() || (j["grid"].is_array() && !j["grid"].empty())))
    throw fail("/grid", "an object {\"<option>\": [values], ...} or a non-empty list of such objects");
  // The spec's key order fixes the cell order (nlohmann::json sorts object keys; ordered_json keeps them).
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text);
  const bool listed = j["grid"].is_array();
  for (std::size_t gi = 0; gi < (listed ? j["grid"].size() : 1); ++gi) {
    const std::string gptr = listed ? "/grid/" + std::to_string(gi) : "/grid";
    const auto& gj = listed ? j["grid"][gi] : j["grid"];
    if (!gj.is_object()) throw fail(gptr, "an object {\"<option>\": [values], ...}");
    std::vector<std::string> order;
    for (auto& [k, v] : (listed ? ordered["grid"][gi] : ordered["grid"]).items()) order.push_back(k);
    Spec::Grid grid;
    std::set<std::string> seen;
    for (const auto& k : order) {
      std::string ptr = gptr + "/" + k;
      std::string key = key_canonical(k);
      bool is_flag = contains(s.def->construct_flags, key);
      if (!contains(s.def->generate_options, key) && !contains(s.def->construct_options, key) && !is_flag)
        throw fail(ptr, "an option of task " + s.def->name + "'s generate or construct command");
      if (!seen.insert(key).second) throw fail(ptr, "each option once (H and heads are the same option)");
      const auto& vals = gj[k];
      if (!vals.is_array() || vals.empty()) throw fail(ptr, "a non-empty list of values");
      std::vector<nlohmann::json> vs;
      for (std::size_t i = 0; i < vals.size(); ++i) {
        const auto& v = vals[i];
        std::string at = ptr + "/" + std::to_string(i);
        if (is_flag) {
          if (!v.is_boolean()) throw fail(at, "true or false");
        } else if (key == "tolerance") {
          const auto tol = v.is_string() ? rational_parse(v.get<std::string>()) : std::nullopt;
          if (!tol || *tol < 0) throw fail(at, "an exact non-negative number as a string, e.g. \"1e-6\"");
        } else if (key == "beyond") {
          if (!v.is_string() || (v.get<std::string>() != "generic" && v.get<std::string>() != "off"))
            throw fail(at, "\"generic\" or \"off\"");
        } else if (key == s.def->size_key && v.is_string()) {
          size_resolve(v, nlohmann::json{{"heads", 1}, {"n", 2}, {"d", 2}, {"dh", 2}}, file + ": " + at);  // syntax only
        } else if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > kMaxOptionValue) {
          throw fail(at, "an integer in [1, 1e8]" + std::string(key == s.def->size_key ? " or a size formula such as \"T*\"" : ""));
        }
        vs.push_back(v);
      }
      grid.emplace_back(key, vs);
    }
    s.grids.push_back(grid);
  }
  if (!j.contains("seeds")) {
    s.seeds = {1};
  } else {
    if (!j["seeds"].is_array() || j["seeds"].empty()) throw fail("/seeds", "a non-empty list of non-negative integers");
    for (std::size_t i = 0; i < j["seeds"].size(); ++i) {
      if (!j["seeds"][i].is_number_unsigned()) throw fail("/seeds/" + std::to_string(i), "a non-negative integer");
      s.seeds.push_back(j["seeds"][i].get<std::uint64_t>());
    }
  }
  if (j.contains("capacity")) {
    const auto& c = j["capacity"];
    if (s.def->size_key.empty()) throw fail("/capacity", "no capacity search for task " + s.def->name);
    if (!c.is_object() || !c.contains("from") || !c.contains("to") || c.size() != 2)
      throw fail("/capacity", "{\"from\": SIZE, \"to\": SIZE} (integers or formulas such as \"T*\", \"H(d-1)+1\")");
    for (const char* k : {"from", "to"}) {
      const auto& v = c[k];
      if (v.is_string()) {
        size_resolve(v, nlohmann::json{{"heads", 1}, {"n", 2}, {"d", 2}, {"dh", 2}}, file + ": /capacity/" + k);  // syntax only
      } else if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > kMaxOptionValue) {
        throw fail(std::string("/capacity/") + k, "an integer in [1, 1e8] or a size formula such as \"T*\"");
      }
    }
    s.capacity = true;
    s.capacity_from = c["from"];
    s.capacity_to = c["to"];
  }
  // Each cell needs its size: from the grid, or from the capacity search.
  for (std::size_t gi = 0; gi < s.grids.size(); ++gi) {
    const auto& grid = s.grids[gi];
    bool has_size = s.def->size_key.empty() || s.capacity ||
                    std::any_of(grid.begin(), grid.end(), [&](auto& g) { return g.first == s.def->size_key; });
    if (!has_size)
      throw fail(j["grid"].is_array() ? "/grid/" + std::to_string(gi) : "/grid",
                 "a \"" + s.def->size_key + "\" option (or a \"capacity\" search)");
  }
  s.canonical = {{"task", s.task}, {"seeds", s.seeds}};
  if (!s.data.empty()) s.canonical["data"] = s.data;
  nlohmann::json gs = nlohmann::json::array();
  for (const auto& grid : s.grids) {
    nlohmann::json g = nlohmann::json::array();
    for (auto& [k, vs] : grid) g.push_back({k, vs});
    gs.push_back(g);
  }
  s.canonical["grid"] = gs;
  if (s.capacity) s.canonical["capacity"] = {{"from", s.capacity_from}, {"to", s.capacity_to}};
  return s;
}

std::vector<Cell> spec_cells(const Spec& s) {
  constexpr std::size_t kMaxCells = 1000000;
  std::vector<Cell> cells;
  for (const auto& grid : s.grids) {
    std::vector<std::size_t> idx(grid.size(), 0);
    bool more = true;
    while (more) {
      nlohmann::json p = nlohmann::json::object();
      for (std::size_t k = 0; k < grid.size(); ++k) p[grid[k].first] = grid[k].second[idx[k]];
      // Size formulas resolve against the other options of the same grid point.
      if (!s.def->size_key.empty() && p.contains(s.def->size_key) && p[s.def->size_key].is_string()) {
        std::int64_t v = size_resolve(p[s.def->size_key], p, "grid: " + s.def->size_key);
        if (v < 1 || v > std::int64_t(kMaxOptionValue))
          throw InputError("grid: " + s.def->size_key + ": expected a formula giving a size in [1, 1e8], got " + std::to_string(v));
        p[s.def->size_key] = v;
      }
      for (auto seed : s.seeds) cells.push_back({cells.size(), p, seed});
      if (cells.size() > kMaxCells)  // a typo'd grid should not fill the disk with directories
        throw InputError("grid: expected at most " + std::to_string(kMaxCells) + " cells (grid x seeds), got more");
      // Odometer: the last key varies fastest.
      more = false;
      for (std::size_t k = grid.size(); k-- > 0;) {
        if (++idx[k] < grid[k].second.size()) { more = true; break; }
        idx[k] = 0;
      }
    }
  }
  return cells;
}

}  // namespace memcert::cli::sweep
