// `janus launch`: fork and exec one process per rank, relay their output line by line with a
// rank prefix, and watch them (signalfd + poll, one thread) until all have ended.
#include "launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>

#include "janus/base/error.h"

extern char** environ;

namespace janus::tools {
namespace {

using Clock = std::chrono::steady_clock;

// The variables that the launcher sets; a value inherited from the caller's environment is
// replaced.
constexpr const char* kOwnVariables[] = {
    "JANUS_RANK",        "JANUS_WORLD_SIZE", "JANUS_LOCAL_RANK",  "JANUS_MASTER_ADDR",
    "JANUS_MASTER_PORT", "JANUS_ROLE",       "JANUS_NUM_WORKERS", "JANUS_NUM_SERVERS",
};

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

bool is_own_variable(std::string_view entry) {
  for (const char* name : kOwnVariables) {
    const std::string_view n(name);
    if (entry.size() > n.size() && entry.starts_with(n) && entry[n.size()] == '=') return true;
  }
  return false;
}

// Writes all of `text` to `fd`, retrying short writes; output that cannot be written (a closed
// pipe) is dropped, as the job must go on.
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

void say(const std::string& line) { write_all(STDERR_FILENO, "janus launch: " + line + "\n"); }

// One output stream of one process: the read end of its pipe and the unfinished line.
struct Stream {
  int fd = -1;
  int out_fd = STDOUT_FILENO;  // where its lines go
  std::string partial;
};

struct Child {
  int rank = 0;
  std::string label;  // "worker 0", "server 1"
  pid_t pid = -1;
  bool running = false;
  Stream out, err;
};

class Job {
 public:
  explicit Job(const LaunchOptions& o) : o_(o) {}

  int run() {
    block_signals();
    start_children();
    watch();
    restore_signals();
    if (interrupted_ != 0) return 128 + interrupted_;
    return failed_ ? 1 : 0;
  }

 private:
  void block_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    // A signal ignored when the launcher started (nohup, a background job of a script) stays
    // ignored, by the launcher and by the processes: it is not forwarded.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      sigaddset(&set, sig);
    }
    JANUS_CHECK(::sigprocmask(SIG_BLOCK, &set, &old_mask_) == 0, IOError,
                "janus launch: sigprocmask failed: {}", std::strerror(errno));
    signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    JANUS_CHECK(signal_fd_ >= 0, IOError, "janus launch: signalfd failed: {}",
                std::strerror(errno));
  }

  void restore_signals() {
    if (signal_fd_ < 0) return;
    ::close(signal_fd_);
    signal_fd_ = -1;
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }

  // The environment of rank `rank`: the caller's, with the launcher's variables set.
  std::vector<std::string> environment_of(int rank) const {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!is_own_variable(*e)) env.emplace_back(*e);
    }
    const bool worker = rank < o_.workers;
    env.push_back(fmt::format("JANUS_RANK={}", rank));
    env.push_back(fmt::format("JANUS_WORLD_SIZE={}", o_.workers + o_.servers));
    env.push_back(fmt::format("JANUS_LOCAL_RANK={}", rank));  // one machine: all ranks local
    env.push_back("JANUS_MASTER_ADDR=127.0.0.1");
    env.push_back(fmt::format("JANUS_MASTER_PORT={}", port_));
    env.push_back(fmt::format("JANUS_ROLE={}", worker ? "worker" : "server"));
    env.push_back(fmt::format("JANUS_NUM_WORKERS={}", o_.workers));
    env.push_back(fmt::format("JANUS_NUM_SERVERS={}", o_.servers));
    return env;
  }

  void start_children() {
    port_ = o_.port != 0 ? o_.port : free_port();
    const int n = o_.workers + o_.servers;
    children_.resize(static_cast<size_t>(n));
    for (int rank = 0; rank < n; ++rank) {
      Child& c = children_[static_cast<size_t>(rank)];
      c.rank = rank;
      c.label = rank < o_.workers ? fmt::format("worker {}", rank)
                                  : fmt::format("server {}", rank - o_.workers);
      try {
        start(c);
      } catch (...) {
        stop_all(SIGKILL);
        reap_blocking();
        restore_signals();
        throw;
      }
    }
  }

  // Forks and execs one rank. Everything the child needs is built before fork: after it, the
  // child calls only async-signal-safe functions.
  void start(Child& c) {
    const std::vector<std::string> env = environment_of(c.rank);
    std::vector<char*> envp, argv;
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    for (const std::string& a : o_.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string exec_failed = fmt::format("janus launch: cannot run '{}': ", o_.command[0]);

    int out[2], err[2];
    JANUS_CHECK(::pipe2(out, O_CLOEXEC) == 0, IOError, "janus launch: pipe failed: {}",
                std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0) {
      ::close(out[0]);
      ::close(out[1]);
      JANUS_THROW(IOError, "janus launch: pipe failed: {}", std::strerror(errno));
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      // A group of its own: a signal to the group reaches whatever the command starts, and the
      // terminal's Ctrl-C reaches only the launcher, which forwards it once.
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphans if the launcher itself is killed
      if (::getppid() != parent) ::_exit(1);
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
      ::execvpe(argv[0], argv.data(), envp.data());
      const char* reason = std::strerror(errno);
      write_all(STDERR_FILENO, exec_failed);
      write_all(STDERR_FILENO, reason);
      write_all(STDERR_FILENO, "\n");
      ::_exit(127);
    }
    const int fork_errno = errno;
    ::close(out[1]);
    ::close(err[1]);
    if (pid < 0) {
      ::close(out[0]);
      ::close(err[0]);
      JANUS_THROW(IOError, "janus launch: fork failed for {}: {}", c.label,
                  std::strerror(fork_errno));
    }
    ::setpgid(pid, pid);  // also here, so that no signal can come before the child's own call
    c.pid = pid;
    c.running = true;
    c.out = Stream{.fd = out[0], .out_fd = STDOUT_FILENO};
    c.err = Stream{.fd = err[0], .out_fd = STDERR_FILENO};
  }

  void watch() {
    std::optional<Clock::time_point> drain_deadline;
    while (true) {
      std::vector<pollfd> fds{{.fd = signal_fd_, .events = POLLIN, .revents = 0}};
      std::vector<Stream*> streams;
      for (Child& c : children_) {
        for (Stream* s : {&c.out, &c.err}) {
          if (s->fd < 0) continue;
          fds.push_back({.fd = s->fd, .events = POLLIN, .revents = 0});
          streams.push_back(s);
        }
      }
      const bool any_running = running_count() > 0;
      if (!any_running && streams.empty()) return;
      // Every process has ended: the job is over, and whatever they started and left in their
      // groups goes too (no orphans). It may have held their pipes: a second more for the last
      // lines, then the launcher stops reading.
      if (!any_running && !drain_deadline) {
        for (const Child& c : children_) ::kill(-c.pid, SIGKILL);
        drain_deadline = Clock::now() + std::chrono::seconds(1);
      }
      if (drain_deadline && Clock::now() >= *drain_deadline) {
        for (Stream* s : streams) close_stream(*s, "");
        return;
      }
      const int rc = ::poll(fds.data(), fds.size(), poll_timeout_ms(drain_deadline));
      JANUS_CHECK(rc >= 0 || errno == EINTR, IOError, "janus launch: poll failed: {}",
                  std::strerror(errno));
      if (fds[0].revents != 0) handle_signals();
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) read_stream(*streams[i - 1]);
      }
      if (kill_deadline_ && Clock::now() >= *kill_deadline_) {
        stop_all(SIGKILL);
        kill_deadline_.reset();
      }
    }
  }

  int poll_timeout_ms(const std::optional<Clock::time_point>& drain_deadline) const {
    std::optional<Clock::time_point> next = kill_deadline_;
    if (drain_deadline && (!next || *drain_deadline < *next)) next = drain_deadline;
    if (!next) return -1;
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now()).count();
    return static_cast<int>(std::clamp<int64_t>(ms + 1, 0, 60'000));
  }

  int running_count() const {
    int n = 0;
    for (const Child& c : children_) n += c.running ? 1 : 0;
    return n;
  }

  void handle_signals() {
    signalfd_siginfo info{};
    while (::read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
      const int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGCHLD) {
        reap();
        continue;
      }
      if (interrupted_ != 0) {  // a second signal: no more patience
        say(fmt::format("got {} again; killing the {} processes left", signal_name(sig),
                        running_count()));
        stop_all(SIGKILL);
        continue;
      }
      interrupted_ = sig;
      say(fmt::format("got {}; forwarding it to the {} processes left", signal_name(sig),
                      running_count()));
      stop_all(sig);
      kill_deadline_ = Clock::now() + o_.grace;
    }
  }

  void reap() {
    while (true) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      for (Child& c : children_) {
        if (c.pid == pid && c.running) ended(c, status);
      }
    }
  }

  // Waits for every running child (after SIGKILL), for the error path.
  void reap_blocking() {
    for (Child& c : children_) {
      if (!c.running) continue;
      ::waitpid(c.pid, nullptr, 0);
      c.running = false;
      for (Stream* s : {&c.out, &c.err}) {
        if (s->fd >= 0) ::close(s->fd);
        s->fd = -1;
      }
    }
  }

  void ended(Child& c, int status) {
    c.running = false;
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean || failed_ || interrupted_ != 0) return;
    // The first process to die decides the outcome; those stopped after it are its victims.
    failed_ = true;
    const std::string how = WIFSIGNALED(status)
                                ? fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                                              signal_name(WTERMSIG(status)))
                                : fmt::format("exited with status {}", WEXITSTATUS(status));
    say(fmt::format("{} (pid {}) {}", c.label, c.pid, how));
    const int left = running_count();
    if (left > 0) {
      say(fmt::format("stopping the {} other process{} (SIGTERM, then SIGKILL after {:.1f} s)",
                      left, left == 1 ? "" : "es", static_cast<double>(o_.grace.count()) / 1000));
    }
    // Its own group too: whatever it started must not outlive the job.
    ::kill(-c.pid, SIGKILL);
    stop_all(SIGTERM);
    kill_deadline_ = Clock::now() + o_.grace;
  }

  void stop_all(int sig) {
    for (const Child& c : children_) {
      if (c.running) ::kill(-c.pid, sig);
    }
  }

  Child& owner_of(const Stream& s) {
    for (Child& c : children_) {
      if (&c.out == &s || &c.err == &s) return c;
    }
    JANUS_THROW(InternalError, "janus launch: a stream without a process");
  }

  void read_stream(Stream& s) {
    char buf[1 << 16];
    const ssize_t n = ::read(s.fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    const std::string prefix = fmt::format("[{}] ", owner_of(s).label);
    if (n <= 0) {
      close_stream(s, prefix);
      return;
    }
    s.partial.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl = s.partial.find('\n'); nl != std::string::npos;
         nl = s.partial.find('\n', start)) {
      // One write per line: lines of different processes never mix.
      write_all(s.out_fd, prefix + s.partial.substr(start, nl + 1 - start));
      start = nl + 1;
    }
    s.partial.erase(0, start);
  }

  // End of a stream: its unfinished last line, if any, with a newline.
  void close_stream(Stream& s, const std::string& prefix) {
    if (!s.partial.empty()) {
      write_all(s.out_fd, (prefix.empty() ? fmt::format("[{}] ", owner_of(s).label) : prefix) +
                              s.partial + "\n");
      s.partial.clear();
    }
    ::close(s.fd);
    s.fd = -1;
  }

  const LaunchOptions& o_;
  int port_ = 0;
  std::vector<Child> children_;
  sigset_t old_mask_{};
  int signal_fd_ = -1;
  bool failed_ = false;
  int interrupted_ = 0;  // the signal the launcher got, 0 if none
  std::optional<Clock::time_point> kill_deadline_;
};

void check_options(const LaunchOptions& o) {
  JANUS_CHECK(o.hosts.empty(), NotImplementedError,
              "--hosts {}: starting processes on several machines (over ssh) is not implemented; "
              "start each machine's processes yourself with JANUS_RANK, JANUS_WORLD_SIZE, "
              "JANUS_MASTER_ADDR and JANUS_MASTER_PORT set, or use mpirun",
              o.hosts);
  JANUS_CHECK(o.workers >= 1, ValueError, "-n is {}, expected at least 1 worker", o.workers);
  JANUS_CHECK(o.servers >= 0, ValueError, "-s is {}, expected 0 or more servers", o.servers);
  JANUS_CHECK(o.port >= 0 && o.port <= 65535, ValueError,
              "--port is {}, expected a TCP port in 1..65535 (0: a free one)", o.port);
  JANUS_CHECK(!o.command.empty(), ValueError,
              "no command to run; expected: janus launch -n N -- COMMAND [ARGS...]");
}

}  // namespace

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  JANUS_CHECK(fd >= 0, IOError, "janus launch: socket failed: {}", std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int saved = errno;
  ::close(fd);
  JANUS_CHECK(ok, IOError, "janus launch: no free TCP port on 127.0.0.1: {}", std::strerror(saved));
  return ntohs(addr.sin_port);
}

int launch(const LaunchOptions& options) {
  check_options(options);
  Job job(options);
  return job.run();
}

}  // namespace janus::tools
