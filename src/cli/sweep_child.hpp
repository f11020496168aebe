#pragma once
// Runs one memcert command as a child process (the sweep's unit of work): the cell gets a fresh process,
// so a crash, a leak or a stray global in one construction cannot affect another cell or the merge.
#include <string>
#include <vector>

namespace memcert::cli::sweep {

struct ChildResult {
  int exit = 0;         // the child's exit status; 128 + signal when it was killed by a signal
  std::string out;      // its stdout (a command run with --json prints one JSON line)
  std::string err;      // its stderr
};

// Runs this very binary (/proc/self/exe) with `args` (without argv[0]), stdout and stderr captured in
// `out_path` / `err_path` (overwritten), waits for it and returns what it printed.
ChildResult child_run_self(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path);

}  // namespace memcert::cli::sweep
