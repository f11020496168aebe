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
#include "memcert/util/error.hpp"

extern char** environ;

namespace memcert::cli::sweep {

ChildResult child_run_self(const std::vector<std::string>& args, const std::string& out_path, const std::string& err_path) {
  const std::string self = self_executable();  // /proc/self/exe, or the executable the Python module names
  std::vector<std::string> argv_s{self};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The output files are opened here, so a cell directory that cannot be written is bad input naming the
  // file (exit 2), not a child that failed to start.
  auto open_out = [](const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError(path + ": expected a writable path, got " + std::strerror(errno));
    return fd;
  };
  const int out_fd = open_out(out_path);
  int err_fd = -1;
  try {
    err_fd = open_out(err_path);
  } catch (...) {
    ::close(out_fd);
    throw;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_fd);
  ::close(err_fd);
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
