#pragma once
// `memcert sweep`: the spec (what to run) and its expansion into cells. Data-driven: a task is one entry
// of the table in sweep_spec.cpp naming the `generate` / `construct` (or `claims run`) commands a cell runs
// and which grid options go to which command, so a new construction is one more entry.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace memcert::cli::sweep {

// The largest value a grid option, a resolved size or a capacity bound may take: a typo such as 2^64-1
// is refused when the spec is read instead of wrapping to -1 or asking a command for 10^19 examples.
inline constexpr std::uint64_t kMaxOptionValue = 100000000;

// One row of the task table.
struct TaskDef {
  std::string name;                              // the spec's "task"
  std::string generate;                          // `generate <kind>` (kind from the spec's "data" when allowed)
  std::vector<std::string> data_kinds;           // allowed "data" values (first = default); empty: no generate
  std::vector<std::string> generate_options;     // grid keys passed as --key V to generate
  std::string construct;                         // `construct <name>`; empty for claims
  std::vector<std::string> construct_options;    // grid keys passed as --key V to construct
  std::vector<std::string> construct_flags;      // boolean grid keys passed as --key when true
  std::vector<std::string> construct_fixed;      // always passed (e.g. --check: the checker re-verifies)
  bool construct_seed;                           // construct takes --seed (the cell's seed is passed)
  std::string size_key;                          // the key a "capacity" search varies ("T"), empty if none
  std::vector<std::string> generate_fixed = {};  // always passed to generate (ks: --layout tokens)
  std::string data_file = "data.json";           // the cell's data set, in its directory
};

// The table; nullptr when `name` is unknown. "claim:<id>" maps to the claims entry.
const TaskDef* task_find(const std::string& name);

// A parsed spec. Grid values are kept as JSON (numbers, booleans, or size formulas such as "T*").
struct Spec {
  std::string task;                              // as written ("theorem1", "claim:mahdavi24/theorem-1", ...)
  const TaskDef* def = nullptr;
  std::string claim_id;                          // for claim:<id>
  std::string data;                              // generate kind
  // "grid" is one object or a list of them; each is a cartesian product over its keys (spec key order).
  using Grid = std::vector<std::pair<std::string, std::vector<nlohmann::json>>>;
  std::vector<Grid> grids;
  std::vector<std::uint64_t> seeds;
  bool capacity = false;                         // search the largest certified size per cell
  nlohmann::json capacity_from, capacity_to;     // size formulas bounding the search
  nlohmann::json canonical;                      // the spec as understood (written to DIR/spec.json)
};

// Parses and validates `text` read from `file`; InputError ("file: /pointer: expected ...") on any defect.
Spec spec_parse(const std::string& file, const std::string& text);

// One cell: the grid point (sizes resolved to integers) and the seed.
struct Cell {
  std::size_t index;
  nlohmann::json params;                         // key -> value, formulas resolved
  std::uint64_t seed;
};

// The cells in a fixed order: the grids in list order, each grid's cartesian product in key order (last
// key fastest), seeds innermost. The order depends only on the spec, so every MPI rank and every resume agree on it.
std::vector<Cell> spec_cells(const Spec& s);

// Resolves a size value: an integer, or one of the formulas "T*" (= H(r-1)+1, r = min(n, dh), the
// Theorem 1 target; H(n-1)+1 when dh is absent or >= n), "H(n-1)+1", "H(d-1)+1", "H*d", each optionally
// followed by "+K" / "-K". `params` supplies H (or heads), n, d, dh. InputError naming `where` otherwise.
std::int64_t size_resolve(const nlohmann::json& v, const nlohmann::json& params, const std::string& where);

}  // namespace memcert::cli::sweep
