// allreduce: Janus's dist::allreduce (an engine operation on the comm lane, waited for) against
// the communication library called directly on the same buffer in the same processes: Gloo's
// ring allreduce on a Gloo context of its own (default backend), and MPI_Allreduce on
// MPI_COMM_WORLD (JANUS_DIST_BACKEND=mpi, under mpirun). float32 arrays of 4 KB to 64 MB, 2
// processes on this machine; the two calls alternate, so both see the same load, and each
// figure is rank 0's median.
//
// ratio_vs_gloo (ratio_vs_mpi) = direct time / Janus time: 1 when Janus adds nothing, the
// target is >= 0.9. Janus pays an engine push, a hand-over to the comm-lane thread and the wait;
// on MPI it also runs the nonblocking MPI_Iallreduce polled against the timeout where the
// direct call is the blocking MPI_Allreduce (both on Open MPI's ring: mpi_backend.cc asks its
// nonblocking collectives for it).
//
// The floor: bus bandwidth (bytes x 2(N-1)/N / time, with N = 2: bytes / time) cannot exceed
// the bandwidth of one memory copy, since every byte a rank receives is written into its memory
// at least once. Both processes share this machine's memory system, so the bandwidth of a memcpy
// of the same size (measured in the same run, in cache for the small sizes) is the floor; Gloo
// over loopback TCP copies each byte twice (into the kernel's socket buffer and out of it), Open
// MPI's shared-memory transport once or twice, and the sum reads both operands and writes one,
// so these paths reach a fraction of it well below 1 (`fraction` in the table). `--quick`: 4 KB
// and 1 MB, few repetitions.
//
// The benchmark starts its own processes: it re-executes this program (the path of
// /proc/self/exe, running this benchmark only) as 2, then 4 ranks with JANUS_ALLREDUCE_BENCH_CHILD
// set, forked with JANUS_RANK etc. for Gloo, and under `mpirun -np 2` for MPI.
#include <fcntl.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <mpi.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "janus/dist/collectives.h"
#include "janus/dist/free_port.h"
#include "janus/dist/process_group.h"
#include "janus/janus.h"

#include "bench_util.h"
#include "self_job.h"
#include "suite.h"

namespace {

using janus::NDArray;

constexpr int kRankCounts[] = {2, 4};  // the jobs measured, the 2 and 4 processes

std::vector<int64_t> sizes_bytes(const bench::Options& options) {
  if (options.quick) return {4 << 10, 1 << 20};
  return {4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20};
}

int reps_for(int64_t bytes, bool quick) {
  if (quick) return 3;
  if (bytes >= (16 << 20)) return 9;
  if (bytes >= (1 << 20)) return 30;
  return 300;
}

// ---- a child: one rank ----

int run_child(const bench::Options& options) {
  const std::string kind = std::getenv("JANUS_ALLREDUCE_BENCH_CHILD");
  const char* out_path = std::getenv("JANUS_ALLREDUCE_BENCH_OUT");
  auto pg = janus::dist::ProcessGroup::from_env();
  // The library called directly: a Gloo context of its own (same TCP device kind, loopback),
  // or MPI's world communicator (MPI is initialised by the group above).
  std::shared_ptr<gloo::Context> gloo_context;
  if (kind == "gloo") {
    auto store =
        std::make_shared<gloo::rendezvous::FileStore>(std::getenv("JANUS_ALLREDUCE_BENCH_STORE"));
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto context = std::make_shared<gloo::rendezvous::Context>(pg->rank(), pg->size());
    auto device = gloo::transport::tcp::CreateDevice(attr);
    context->connectFullMesh(*store, device);
    gloo_context = context;
  }
  auto direct = [&](float* data, size_t n) {
    if (gloo_context) {
      gloo::AllreduceOptions opts(gloo_context);
      opts.setOutput(data, n);
      opts.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      gloo::allreduce(opts);
    } else {
      MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
  };
  std::ostringstream out;
  for (const int64_t bytes : sizes_bytes(options)) {
    const int64_t n = bytes / 4;
    // Zeros: the sums stay zero, so every repetition does the same arithmetic.
    NDArray a = janus::zeros({n});
    janus::wait_to_read(a);
    std::vector<double> janus_s, direct_s;
    const int reps = reps_for(bytes, options.quick);
    for (int rep = -1; rep < reps; ++rep) {  // rep -1: a warm-up of both
      bench::Timer t;
      janus::dist::allreduce(*pg, a);
      janus::wait_to_read(a);
      const double j = t.seconds();
      t.reset();
      direct(static_cast<float*>(a.raw_data()), static_cast<size_t>(n));
      const double d = t.seconds();
      if (rep >= 0) {
        janus_s.push_back(j);
        direct_s.push_back(d);
      }
    }
    out << bytes << ' ' << bench::median(janus_s) << ' ' << bench::median(direct_s) << '\n';
  }
  if (pg->rank() == 0) std::ofstream(out_path) << out.str();
  return 0;
}

// ---- the parent: starts the ranks of each backend and prints the table ----

struct Row {
  int64_t bytes = 0;
  double janus_s = 0, direct_s = 0;
};

std::vector<Row> read_rows(const std::string& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  Row r;
  while (in >> r.bytes >> r.janus_s >> r.direct_s) rows.push_back(r);
  std::filesystem::remove(path);
  return rows;
}

std::string temp_path(const std::string& what) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("janus_allreduce_bench_{}_{}", ::getpid(), what))
      .string();
}

// Gloo: `ranks` forked processes with JANUS_RANK etc.; a file store for the direct context.
std::vector<Row> run_gloo(int ranks, const std::vector<std::string>& args, int timeout_s) {
  const std::string out_path = temp_path("gloo");
  const std::string store = temp_path("store");
  std::filesystem::remove_all(store);
  std::filesystem::create_directories(store);
  const int port = janus::dist::free_loopback_port();
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("JANUS_ALLREDUCE_BENCH_CHILD", "gloo", 1);
      ::setenv("JANUS_ALLREDUCE_BENCH_OUT", out_path.c_str(), 1);
      ::setenv("JANUS_ALLREDUCE_BENCH_STORE", store.c_str(), 1);
      ::setenv("JANUS_RANK", std::to_string(r).c_str(), 1);
      ::setenv("JANUS_WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      ::setenv("JANUS_MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("JANUS_MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("JANUS_DIST_TIMEOUT", "120", 1);
      ::setenv("OMP_NUM_THREADS", "1", 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, STDOUT_FILENO);  // the children's own bench headers; errors go to stderr
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
    pids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids) ::kill(p, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::filesystem::remove_all(store);
  std::vector<Row> rows = read_rows(out_path);
  if (!ok) std::fprintf(stderr, "allreduce: a Gloo rank failed\n");
  return ok ? rows : std::vector<Row>{};
}

// MPI: `mpirun -np ranks` of this program, under `timeout`.
std::vector<Row> run_mpi(int ranks, const std::vector<std::string>& args, int timeout_s) {
  const std::string out_path = temp_path("mpi");
  std::string command = fmt::format(
      "timeout -k 5 {} '{}' --allow-run-as-root --oversubscribe -np {} -x "
      "JANUS_DIST_BACKEND=mpi -x JANUS_ALLREDUCE_BENCH_CHILD=mpi -x "
      "JANUS_ALLREDUCE_BENCH_OUT='{}' -x JANUS_DIST_TIMEOUT=120 -x OMP_NUM_THREADS=1",
      timeout_s, JANUS_MPIEXEC, ranks, out_path);
  for (const std::string& a : args) command += fmt::format(" '{}'", a);
  command += " >/dev/null </dev/null";
  const int status = std::system(command.c_str());
  std::vector<Row> rows = read_rows(out_path);
  if (status != 0) std::fprintf(stderr, "allreduce: mpirun failed (status %d)\n", status);
  return status == 0 ? rows : std::vector<Row>{};
}

// Bytes per second of a memcpy of `bytes` between two buffers already touched (median of
// several), in this process: the floor at that size (in cache for the small ones).
double copy_bandwidth(int64_t bytes) {
  std::vector<char> src(static_cast<size_t>(bytes), 1), dst(static_cast<size_t>(bytes), 0);
  std::vector<double> times;
  const int reps = bytes >= (16 << 20) ? 9 : 50;
  for (int i = 0; i < reps; ++i) {
    bench::Timer t;
    std::memcpy(dst.data(), src.data(), src.size());
    times.push_back(t.seconds());
  }
  return static_cast<double>(bytes) / bench::median(times);
}

int run(const bench::Options& options) {
  if (std::getenv("JANUS_ALLREDUCE_BENCH_CHILD") != nullptr) return run_child(options);
  if (std::getenv("JANUS_RANK") != nullptr || std::getenv("OMPI_COMM_WORLD_RANK") != nullptr) {
    // A rank of some job already (another benchmark's child under `janus bench --all`): this
    // benchmark starts jobs of its own, and not from inside one.
    std::printf("allreduce: skipped in a process that is a rank of a job already\n");
    return 0;
  }
  const size_t sizes = sizes_bytes(options).size();
  const std::vector<std::string> args = bench::alone_command("allreduce");
  struct Largest {
    double ratio_gloo = 0, ratio_mpi = 0, gloo_busbw = 0, mpi_busbw = 0, small_gloo = 0,
           small_mpi = 0;
  } at[std::size(kRankCounts)];
  double largest_bytes = 0, copy_gbps = 0;
  for (size_t k = 0; k < std::size(kRankCounts); ++k) {
    const int ranks = kRankCounts[k];
    const std::vector<Row> gloo = run_gloo(ranks, args, 600);
    const std::vector<Row> mpi = run_mpi(ranks, args, 600);
    if (gloo.size() != sizes || mpi.size() != sizes) return 1;
    const double bus = 2.0 * (ranks - 1) / ranks;  // bytes each rank sends and receives per byte
    std::printf("Allreduce (sum, float32) across %d processes on this machine, rank 0's median:\n",
                ranks);
    std::printf("%-5s %10s %11s %11s %10s %8s %9s\n", "lib", "bytes", "janus ms", "direct ms",
                "busbw GB/s", "ratio", "fraction");
    auto print = [&](const char* lib, const std::vector<Row>& rows) {
      for (const Row& r : rows) {
        const double copy = copy_bandwidth(r.bytes);
        const double busbw = static_cast<double>(r.bytes) * bus / r.janus_s;
        std::printf("%-5s %10lld %11.4f %11.4f %10.3f %8.3f %9.3f\n", lib,
                    static_cast<long long>(r.bytes), r.janus_s * 1e3, r.direct_s * 1e3, busbw / 1e9,
                    r.direct_s / r.janus_s, busbw / copy);
      }
    };
    print("gloo", gloo);
    print("mpi", mpi);
    const Row& g = gloo.back();
    const Row& m = mpi.back();
    at[k] = {g.direct_s / g.janus_s,
             m.direct_s / m.janus_s,
             static_cast<double>(g.bytes) * bus / g.janus_s / 1e9,
             static_cast<double>(m.bytes) * bus / m.janus_s / 1e9,
             gloo[0].direct_s / gloo[0].janus_s,
             mpi[0].direct_s / mpi[0].janus_s};
    largest_bytes = static_cast<double>(g.bytes);
    if (k == 0) copy_gbps = copy_bandwidth(g.bytes) / 1e9;
  }
  std::printf(
      "ratio = direct / janus (1: the engine adds nothing); fraction = Janus's bus bandwidth / "
      "the bandwidth of a memcpy of that size (the floor: every received byte is written once)\n");
  // The fields of 2 processes keep their names; those of 4 end in _4.
  bench::print_json_line("allreduce", {{"bytes", largest_bytes},
                                       {"ratio_vs_gloo", at[0].ratio_gloo},
                                       {"ratio_vs_mpi", at[0].ratio_mpi},
                                       {"gloo_busbw_gbps", at[0].gloo_busbw},
                                       {"mpi_busbw_gbps", at[0].mpi_busbw},
                                       {"copy_gbps", copy_gbps},
                                       {"small_ratio_vs_gloo", at[0].small_gloo},
                                       {"small_ratio_vs_mpi", at[0].small_mpi},
                                       {"ratio_vs_gloo_4", at[1].ratio_gloo},
                                       {"ratio_vs_mpi_4", at[1].ratio_mpi},
                                       {"gloo_busbw_gbps_4", at[1].gloo_busbw},
                                       {"mpi_busbw_gbps_4", at[1].mpi_busbw},
                                       {"small_ratio_vs_gloo_4", at[1].small_gloo},
                                       {"small_ratio_vs_mpi_4", at[1].small_mpi}});
  return 0;
}

const bench::Registration reg{"allreduce",
                              "dist::allreduce of 4 KB-64 MB on 2 and 4 processes vs Gloo's and "
                              "MPI's allreduce called directly",
                              run};

}  // namespace
