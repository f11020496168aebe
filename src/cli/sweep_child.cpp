// posix_spawn of /proc/self/exe with redirected stdout/stderr. posix_spawn rather than fork(): the sweep
// may run inside an MPI rank, and MPI libraries warn about (or break on) fork() with registered memory.
#include "sweep_child.hpp"

#include "command.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "memcert/data/matrix_io.hpp"

extern char** environ;

namespace memcert::cli::sweep {

ChildResult child_run_self(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path) {
  const std::string self = self_executable();  // /proc/self/exe, or the executable the Python module names
  std::vector<std::string> argv_s{self};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + self + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  ChildResult r;
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = file_read_all(out_path);
  r.err = file_read_all(err_path);
  return r;
}

}  // namespace memcert::cli::sweep
