// Joining a process group: options from the environment, then the backend's own joining
// (gloo_backend.cc, mpi_backend.cc).
#include "janus/dist/process_group.h"

#include <charconv>
#include <cstdlib>

#include "janus/base/error.h"
#include "janus/engine/engine.h"

#include "process_group_impl.h"

namespace janus::dist {
namespace {

const char* getenv_nonempty(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

int64_t env_integer(const char* name, std::string_view expected, int64_t lo, int64_t hi) {
  const char* v = getenv_nonempty(name);
  JANUS_CHECK(v != nullptr, ValueError, "dist: {} is not set; expected {}", name, expected);
  const std::string_view s(v);
  int64_t out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  JANUS_CHECK(ec == std::errc() && end == s.data() + s.size() && out >= lo && out <= hi, ValueError,
              "dist: {}='{}' is not valid; expected {}", name, s, expected);
  return out;
}

// `janus_name`, or `mpirun`'s variable of the same meaning when only that one is set (a job
// started by Open MPI's mpirun).
const char* rank_variable(const char* janus_name, const char* ompi_name) {
  return getenv_nonempty(janus_name) == nullptr && getenv_nonempty(ompi_name) != nullptr
             ? ompi_name
             : janus_name;
}

}  // namespace

const char* backend_name(DistBackend backend) {
  return backend == DistBackend::kMpi ? "mpi" : "gloo";
}

ProcessGroupOptions ProcessGroupOptions::from_env() {
  ProcessGroupOptions o;
  if (const char* b = getenv_nonempty("JANUS_DIST_BACKEND")) {
    const std::string_view name(b);
    JANUS_CHECK(name == "gloo" || name == "mpi", ValueError,
                "dist: JANUS_DIST_BACKEND='{}' is not valid; expected 'gloo' (the default: TCP, "
                "rendezvous at JANUS_MASTER_ADDR:JANUS_MASTER_PORT) or 'mpi' (a job started by "
                "mpirun)",
                name);
    o.backend = name == "mpi" ? DistBackend::kMpi : DistBackend::kGloo;
  }
  o.world_size = static_cast<int>(
      env_integer(rank_variable("JANUS_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                  "the number of processes in the job, an integer >= 1", 1, 1 << 20));
  o.rank = static_cast<int>(
      env_integer(rank_variable("JANUS_RANK", "OMPI_COMM_WORLD_RANK"),
                  fmt::format("this process's rank, an integer in 0..{}", o.world_size - 1), 0,
                  o.world_size - 1));
  const char* store = getenv_nonempty("JANUS_DIST_STORE");
  const std::string_view kind = store != nullptr ? store : "tcp";
  if (kind.starts_with("file:") && kind.size() > 5) {
    o.file_store = std::string(kind.substr(5));
  } else {
    JANUS_CHECK(kind == "tcp", ValueError,
                "dist: JANUS_DIST_STORE='{}' is not valid; expected 'tcp' (the default: rank 0 "
                "serves a store at JANUS_MASTER_ADDR:JANUS_MASTER_PORT) or 'file:/path' (a "
                "directory that every rank sees)",
                kind);
  }
  const char* addr = getenv_nonempty("JANUS_MASTER_ADDR");
  // MPI meets through mpirun: no store, no master address.
  const bool tcp = o.file_store.empty() && o.backend == DistBackend::kGloo;
  JANUS_CHECK(addr != nullptr || !tcp, ValueError,
              "dist: JANUS_MASTER_ADDR is not set; expected the host name or address of rank 0's "
              "machine, where rank 0 serves the rendezvous store (e.g. 127.0.0.1)");
  o.master_addr = addr != nullptr ? addr : "";
  if (tcp) {
    o.master_port = static_cast<int>(
        env_integer("JANUS_MASTER_PORT",
                    "the TCP port of the rendezvous store, an integer in 1..65535", 1, 65535));
  }
  if (const char* iface = getenv_nonempty("JANUS_DIST_IFACE")) o.iface = iface;
  if (const char* t = getenv_nonempty("JANUS_DIST_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(t, &end);
    JANUS_CHECK(end != t && *end == '\0' && seconds > 0 && seconds < 1e6, ValueError,
                "dist: JANUS_DIST_TIMEOUT='{}' is not valid; expected a positive number of "
                "seconds",
                t);
    o.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }
  return o;
}

ProcessGroup::Impl::~Impl() {
  // Pending collectives hold this Impl themselves: the var goes after them.
  if (sequence != nullptr) engine().delete_var(sequence, nullptr);
}

std::string ProcessGroup::Impl::describe_gone_ranks() {
  return backend != nullptr ? backend->describe_gone_ranks() : "";
}

ProcessGroup::ProcessGroup(const ProcessGroupOptions& o) : impl_(std::make_shared<Impl>()) {
  JANUS_CHECK(o.world_size >= 1 && o.rank >= 0 && o.rank < o.world_size, ValueError,
              "dist: rank {} of {} processes; expected 0 <= rank < world size", o.rank,
              o.world_size);
  Impl& im = *impl_;
  im.rank = o.rank;
  im.size = o.world_size;
  im.kind = o.backend;
  im.timeout = o.timeout;
  im.sequence = engine().new_var();
  if (o.world_size == 1) return;  // nothing to meet: collectives are local
  im.backend = o.backend == DistBackend::kMpi ? make_mpi_backend(o) : make_gloo_backend(o);
}

ProcessGroup::~ProcessGroup() = default;

std::shared_ptr<ProcessGroup> ProcessGroup::from_env() {
  return std::make_shared<ProcessGroup>(ProcessGroupOptions::from_env());
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::size() const { return impl_->size; }
DistBackend ProcessGroup::backend() const { return impl_->kind; }
std::chrono::milliseconds ProcessGroup::timeout() const { return impl_->timeout; }

void ProcessGroup::wait() { engine().wait_for_var(impl_->sequence); }

ProcessGroup& default_group() {
  // Kept until exit on purpose (never destroyed): collectives still draining at exit hold its
  // backend, and rank 0's store must outlive every other rank's use of it.
  static ProcessGroup* group = new ProcessGroup(ProcessGroupOptions::from_env());
  return *group;
}

}  // namespace janus::dist
