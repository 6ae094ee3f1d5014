// A rank of src/dist/mpi_test.cc's join test, under `mpirun -np 2` with JANUS_DIST_BACKEND=mpi:
// rank 1 starts MPI but never creates a process group (it sleeps past the timeout); rank 0's
// group must fail with a DistError saying it could not join, within JANUS_DIST_TIMEOUT + 2 s,
// instead of waiting for rank 1 forever. Exits 0 when that held.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "janus/base/error.h"
#include "janus/dist/process_group.h"

int main() {
  const janus::dist::ProcessGroupOptions options = janus::dist::ProcessGroupOptions::from_env();
  if (options.rank == 1) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    std::this_thread::sleep_for(options.timeout + std::chrono::seconds(2));
    MPI_Finalize();
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    janus::dist::ProcessGroup pg(options);
    std::fprintf(stderr, "[rank 0] joined a group that rank 1 never created\n");
    return 1;
  } catch (const janus::DistError& e) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double limit = std::chrono::duration<double>(options.timeout).count() + 2;
    std::fprintf(stderr, "[rank 0] after %.2f s: %s\n", s, e.what());
    const bool named =
        std::string(e.what()).find("rank 0 of 2 could not join the MPI process group within") !=
        std::string::npos;
    return named && s <= limit ? 0 : 1;
  }
}
