// MPI plumbing of the sweep (see sweep_mpi.hpp). Without MEMCERT_HAVE_MPI every call is the
// single-process identity.
#include "sweep_mpi.hpp"

#include <cstdlib>
#include <stdexcept>

#include "memcert/util/error.hpp"

#ifdef MEMCERT_HAVE_MPI
#include <mpi.h>
#endif

namespace memcert::cli::sweep {

namespace {
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}
}  // namespace

#ifdef MEMCERT_HAVE_MPI
namespace {
bool g_initialized = false;
}

Group group_join() {
  Group g;
  if (!launched_by_mpi()) return g;
  MPI_Init(nullptr, nullptr);
  g_initialized = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g.size);
  return g;
}

void group_barrier(const Group& g) {
  if (g.size > 1) MPI_Barrier(MPI_COMM_WORLD);
}

int group_broadcast_int(const Group& g, int value) {
  if (g.size > 1) MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

int group_max_int(const Group& g, int value) {
  if (g.size > 1) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

std::vector<std::string> group_gather(const Group& g, const std::string& mine) {
  if (g.size <= 1) return {mine};
  if (mine.size() > 0x7fffffffu) throw std::length_error("group_gather: more than 2 GB from one rank");
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(g.rank == 0 ? std::size_t(g.size) : 0), offs(lens.size());
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (g.rank == 0) {
    long long total = 0;
    for (std::size_t r = 0; r < lens.size(); ++r) offs[r] = static_cast<int>(total), total += lens[r];
    if (total > 0x7fffffffLL) throw std::length_error("group_gather: more than 2 GB in all");
    all.resize(std::size_t(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lens.size(); ++r) out.push_back(all.substr(std::size_t(offs[r]), std::size_t(lens[r])));
  return out;
}

void group_leave(const Group& g, bool failed) {
  if (!g_initialized) return;
  if (failed && g.size > 1) MPI_Abort(MPI_COMM_WORLD, 3);  // the CLI's internal-error status (docs/CLI.md)
  MPI_Finalize();
  g_initialized = false;
}

std::string group_support() { return "MPI"; }
#else
Group group_join() {
  // Several copies of a build without MPI would each run every cell into the same directory.
  const char* k = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!k) k = std::getenv("PMI_SIZE");
  if (launched_by_mpi() && k && std::string(k) != "1")
    throw InputError("sweep: mpirun -n " + std::string(k) + ": expected a memcert built with MPI (configure with -DMEMCERT_MPI=ON), got a build without it");
  return {};
}
void group_barrier(const Group&) {}
int group_broadcast_int(const Group&, int value) { return value; }
int group_max_int(const Group&, int value) { return value; }
std::vector<std::string> group_gather(const Group&, const std::string& mine) { return {mine}; }
void group_leave(const Group&, bool) {}
std::string group_support() { return "no MPI"; }
#endif

}  // namespace memcert::cli::sweep
