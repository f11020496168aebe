#pragma once
// The sweep's use of MPI, behind a tiny interface so the command builds with or without MPI
// (MEMCERT_HAVE_MPI is defined by cmake/sweep_mpi.cmake when MPI was found at configure time).
#include <string>
#include <vector>

namespace memcert::cli::sweep {

// Rank and size of the sweep's process group: (0, 1) without MPI or when not started by mpirun.
struct Group {
  int rank = 0;
  int size = 1;
};

// Initializes MPI when this build has it AND the process was started by an MPI launcher (mpirun sets
// OMPI_COMM_WORLD_SIZE / PMI_SIZE / PMIX_RANK); a plain `memcert sweep` never touches MPI.
Group group_join();
// Blocks until every rank reached it (no-op for a single process).
void group_barrier(const Group& g);
// Rank 0's `value` on every rank.
int group_broadcast_int(const Group& g, int value);
// The largest of every rank's `value`, on every rank (a barrier too).
int group_max_int(const Group& g, int value);
// Every rank's `mine` in rank order, on rank 0 (empty on the others).
std::vector<std::string> group_gather(const Group& g, const std::string& mine);
// Finalizes MPI if group_join initialized it; with `failed` (an exception is escaping this rank) aborts
// the whole group instead (exit status 3, an internal error), so no rank waits forever at a barrier.
void group_leave(const Group& g, bool failed);
// "MPI (OpenMPI ...)" or "no MPI": what this build supports, for --help and the summary.
std::string group_support();

}  // namespace memcert::cli::sweep
