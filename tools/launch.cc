// `janus launch`: fork and exec one process per rank (directly, or through a remote-shell agent
// on the hosts of a hosts file), relay their output line by line with a rank prefix, and watch
// them (signalfd + poll, one thread) until all have ended.
#include "launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "janus/base/error.h"
#include "janus/dist/free_port.h"

extern char** environ;

namespace janus::tools {
namespace {

using Clock = std::chrono::steady_clock;
// How long the first failure waits for the other processes that end with it (reap()).
constexpr auto kFailureWindow = std::chrono::milliseconds(500);

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

// `s` as one word of a POSIX shell command line.
std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (const char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

constexpr int kHostsDefaultPort = 29500;
constexpr const char* kDefaultAgent = "ssh -o BatchMode=yes";

// The agent's words for `host`: `{host}` replaced, else the host appended.
std::vector<std::string> agent_words(const std::string& agent, const std::string& host) {
  std::vector<std::string> words = split_words(agent);
  bool placed = false;
  for (std::string& w : words) {
    for (size_t at = w.find("{host}"); at != std::string::npos; at = w.find("{host}", at)) {
      w.replace(at, 6, host);
      at += host.size();
      placed = true;
    }
  }
  if (!placed) words.push_back(host);
  return words;
}

// The shell command line that a remote rank runs: into the launcher's directory (the home
// directory, with a warning, where the host has no such directory), a relay of the signal
// names that the launcher writes to stdin (fd 3: an asynchronous list's stdin is /dev/null),
// then `exec env VARIABLES COMMAND`, so the command keeps the shell's pid, which the relay
// signals. When stdin ends (the launcher or the connection is gone) the relay kills the
// command: no orphan outlives the job on a remote host.
std::string remote_command_line(const std::vector<std::string>& variables,
                                const std::vector<std::string>& command) {
  const std::string cwd = std::filesystem::current_path().string();
  std::string line = fmt::format(
      "cd {0} 2>/dev/null || {{ echo \"janus launch: no directory {0} here; running in $HOME\" "
      ">&2; cd; }}; exec 3<&0; pid=$$; (while read -r sig; do kill -s \"$sig\" $pid; done; "
      "kill -s KILL $pid) <&3 >/dev/null 2>&1 & exec 3<&- </dev/null; exec env",
      shell_quote(cwd));
  for (const auto* words : {&variables, &command}) {
    for (const std::string& w : *words) {
      line += ' ';
      line += shell_quote(w);
    }
  }
  return line;
}

// One output stream of one process: the read end of its pipe and the unfinished line.
struct Stream {
  int fd = -1;
  int out_fd = STDOUT_FILENO;  // where its lines go
  std::string partial;
};

struct Child {
  int rank = 0;
  std::string label;           // "worker 0", "server 1"
  const Host* host = nullptr;  // with a hosts file: where it runs
  int local_rank = 0;
  pid_t pid = -1;
  bool running = false;
  Stream out, err;
  int signal_fd = -1;  // with a hosts file: the agent's stdin, which carries signal names
};

class Job {
 public:
  Job(const LaunchOptions& o, std::vector<Host> hosts) : o_(o), hosts_(std::move(hosts)) {
    agent_ = o.agent;
    if (agent_.empty()) {
      const char* env = std::getenv("JANUS_LAUNCH_AGENT");
      agent_ = env != nullptr && *env != '\0' ? env : kDefaultAgent;
    }
  }

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

  // The launcher's variables for child `c`.
  std::vector<std::string> own_variables(const Child& c) const {
    const bool worker = c.rank < o_.workers;
    return {
        fmt::format("JANUS_RANK={}", c.rank),
        fmt::format("JANUS_WORLD_SIZE={}", o_.workers + o_.servers),
        fmt::format("JANUS_LOCAL_RANK={}", c.local_rank),
        fmt::format("JANUS_MASTER_ADDR={}", hosts_.empty() ? "127.0.0.1" : hosts_[0].address),
        fmt::format("JANUS_MASTER_PORT={}", port_),
        fmt::format("JANUS_ROLE={}", worker ? "worker" : "server"),
        fmt::format("JANUS_NUM_WORKERS={}", o_.workers),
        fmt::format("JANUS_NUM_SERVERS={}", o_.servers),
    };
  }

  // The environment of child `c` here: the caller's, with the launcher's variables set (on
  // this machine), or as it is (an agent, which gets the variables in its command line).
  std::vector<std::string> environment_of(const Child& c) const {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!is_own_variable(*e)) env.emplace_back(*e);
    }
    if (c.host != nullptr) return env;
    for (std::string& v : own_variables(c)) env.push_back(std::move(v));
    return env;
  }

  // What child `c` executes: the command, or the agent that runs it on its host.
  std::vector<std::string> argv_of(const Child& c) const {
    if (c.host == nullptr) return o_.command;
    std::vector<std::string> variables = own_variables(c);
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const bool passed = (entry.starts_with("JANUS_") && !is_own_variable(entry) &&
                           !entry.starts_with("JANUS_LAUNCH_AGENT=")) ||
                          entry.starts_with("OMP_NUM_THREADS=");
      if (passed) variables.emplace_back(entry);
    }
    std::vector<std::string> argv = agent_words(agent_, c.host->name);
    argv.push_back(remote_command_line(variables, o_.command));
    return argv;
  }

  void start_children() {
    port_ = o_.port != 0     ? o_.port
            : hosts_.empty() ? dist::free_loopback_port()
                             : kHostsDefaultPort;
    const int n = o_.workers + o_.servers;
    children_.resize(static_cast<size_t>(n));
    size_t host = 0;
    int on_host = 0;
    for (int rank = 0; rank < n; ++rank) {
      Child& c = children_[static_cast<size_t>(rank)];
      c.rank = rank;
      c.label = rank < o_.workers ? fmt::format("worker {}", rank)
                                  : fmt::format("server {}", rank - o_.workers);
      c.local_rank = rank;    // one machine: every rank is local
      if (!hosts_.empty()) {  // fill each host's slots in order
        if (on_host == hosts_[host].slots) {
          ++host;
          on_host = 0;
        }
        c.host = &hosts_[host];
        c.local_rank = on_host++;
      }
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
    const std::vector<std::string> env = environment_of(c);
    const std::vector<std::string> args = argv_of(c);
    std::vector<char*> envp, argv;
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string exec_failed = fmt::format("janus launch: cannot run '{}': ", args[0]);

    int out[2], err[2];
    int in[2] = {-1, -1};  // with an agent: its stdin, a socket (send without SIGPIPE)
    JANUS_CHECK(::pipe2(out, O_CLOEXEC) == 0, IOError, "janus launch: pipe failed: {}",
                std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0 ||
        (c.host != nullptr && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)) {
      const int saved = errno;
      for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
      JANUS_THROW(IOError, "janus launch: pipe failed: {}", std::strerror(saved));
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
      if (in[1] >= 0) ::dup2(in[1], STDIN_FILENO);
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
    if (in[1] >= 0) ::close(in[1]);
    if (pid < 0) {
      ::close(out[0]);
      ::close(err[0]);
      if (in[0] >= 0) ::close(in[0]);
      JANUS_THROW(IOError, "janus launch: fork failed for {}: {}", c.label,
                  std::strerror(fork_errno));
    }
    ::setpgid(pid, pid);  // also here, so that no signal can come before the child's own call
    c.pid = pid;
    c.running = true;
    c.out = Stream{.fd = out[0], .out_fd = STDOUT_FILENO};
    c.err = Stream{.fd = err[0], .out_fd = STDERR_FILENO};
    c.signal_fd = in[0];
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
    std::vector<std::pair<Child*, int>> reaped;
    reap_exited(reaped);
    // A failure's own victims can end first: a server that sees its worker's connection close
    // may exit, and be reaped, before the worker's exit completes. So before the first failure
    // is judged, the others get a moment to end too, and all of them are reported together.
    const bool first_failure = !failed_ && interrupted_ == 0 &&
                               std::any_of(reaped.begin(), reaped.end(), [](const auto& r) {
                                 return !(WIFEXITED(r.second) && WEXITSTATUS(r.second) == 0);
                               });
    if (first_failure) {
      const auto until = Clock::now() + kFailureWindow;
      while (running_count() > 0 && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        reap_exited(reaped);
      }
    }
    ended(reaped);
  }

  // Reaps every child that has exited, without waiting, into `reaped`.
  void reap_exited(std::vector<std::pair<Child*, int>>& reaped) {
    while (true) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      for (Child& c : children_) {
        if (c.pid != pid || !c.running) continue;
        drain(c);  // its last words come before the launcher's line about its end
        c.running = false;
        close_signal_channel(c);  // the relay on its host ends with its stdin
        reaped.emplace_back(&c, status);
      }
    }
  }

  // Waits for every running child (after SIGKILL), for the error path.
  void reap_blocking() {
    for (Child& c : children_) {
      if (!c.running) continue;
      ::waitpid(c.pid, nullptr, 0);
      c.running = false;
      close_signal_channel(c);
      for (Stream* s : {&c.out, &c.err}) {
        if (s->fd >= 0) ::close(s->fd);
        s->fd = -1;
      }
    }
  }

  // The first process to die decides the outcome; those stopped after it are its victims.
  // Processes reaped together ended before the launcher could tell their order (a server that
  // sees its worker go may exit before the launcher reaps the worker), so every failure among
  // them is reported: the cause is always named.
  void ended(const std::vector<std::pair<Child*, int>>& reaped) {
    if (failed_ || interrupted_ != 0) return;
    for (const auto& [c, status] : reaped) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      failed_ = true;
      say(fmt::format("{} {}", describe(*c), how_it_ended(*c, status)));
      // Its own group too: whatever it started must not outlive the job.
      ::kill(-c->pid, SIGKILL);
    }
    if (!failed_) return;
    const int left = running_count();
    if (left > 0) {
      say(fmt::format("stopping the {} other process{} (SIGTERM, then SIGKILL after {:.1f} s)",
                      left, left == 1 ? "" : "es", static_cast<double>(o_.grace.count()) / 1000));
    }
    stop_all(SIGTERM);
    kill_deadline_ = Clock::now() + o_.grace;
  }

  std::string describe(const Child& c) const {
    if (c.host == nullptr) return fmt::format("{} (pid {})", c.label, c.pid);
    return fmt::format("{} on host '{}' (agent pid {})", c.label, c.host->name, c.pid);
  }

  std::string how_it_ended(const Child& c, int status) const {
    if (WIFSIGNALED(status)) {
      return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                         signal_name(WTERMSIG(status)));
    }
    const int code = WEXITSTATUS(status);
    std::string how = fmt::format("exited with status {}", code);
    if (c.host == nullptr) return how;
    // Through an agent, a remote death by signal N arrives as the remote shell's 128 + N, and
    // the agent's own failure (ssh: host unreachable, refused, unknown) as 255.
    if (code == 255) {
      return how + fmt::format(
                       " (the agent '{}' could not run the command on host '{}': "
                       "see its message above; is the host reachable?)",
                       agent_, c.host->name);
    }
    if (code > 128 && code < 128 + 65) {
      return how + fmt::format(" (on its host: killed by signal {} ({}))", code - 128,
                               signal_name(code - 128));
    }
    return how;
  }

  // Sends `sig` to every running process: to its process group here, or, through an agent,
  // by name to the relay on its host (a remote shell forwards no signals). SIGKILL goes to the
  // agent's group here: the closed connection makes the relay kill the command.
  void stop_all(int sig) {
    for (Child& c : children_) {
      if (!c.running) continue;
      if (c.signal_fd < 0 || sig == SIGKILL) {
        ::kill(-c.pid, sig);
        continue;
      }
      const std::string name = signal_name(sig).substr(3) + "\n";  // "TERM\n"
      if (::send(c.signal_fd, name.data(), name.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        ::kill(-c.pid, SIGKILL);  // the agent no longer reads: nothing else reaches it
      }
    }
  }

  static void close_signal_channel(Child& c) {
    if (c.signal_fd >= 0) ::close(c.signal_fd);
    c.signal_fd = -1;
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

  // Relays what is already in the pipes of a process that has ended, without waiting for
  // more (whatever it started may still hold them).
  void drain(Child& c) {
    for (Stream* s : {&c.out, &c.err}) {
      while (s->fd >= 0) {
        pollfd p{.fd = s->fd, .events = POLLIN, .revents = 0};
        if (::poll(&p, 1, 0) <= 0) break;
        read_stream(*s);
      }
    }
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
  std::vector<Host> hosts_;
  std::string agent_;
  int port_ = 0;
  std::vector<Child> children_;
  sigset_t old_mask_{};
  int signal_fd_ = -1;
  bool failed_ = false;
  int interrupted_ = 0;  // the signal the launcher got, 0 if none
  std::optional<Clock::time_point> kill_deadline_;
};

void check_options(const LaunchOptions& o) {
  JANUS_CHECK(o.hosts.empty() || o.agent.empty() || !split_words(o.agent).empty(), ValueError,
              "--launcher-agent is blank; expected a command such as 'ssh' or "
              "'ip netns exec {{host}} sh -c'");
  JANUS_CHECK(o.workers >= 1, ValueError, "-n is {}, expected at least 1 worker", o.workers);
  JANUS_CHECK(o.servers >= 0, ValueError, "-s is {}, expected 0 or more servers", o.servers);
  JANUS_CHECK(o.port >= 0 && o.port <= 65535, ValueError,
              "--port is {}, expected a TCP port in 1..65535 (0: a free one)", o.port);
  JANUS_CHECK(!o.command.empty(), ValueError,
              "no command to run; expected: janus launch -n N -- COMMAND [ARGS...]");
}

}  // namespace

int launch(const LaunchOptions& options) {
  check_options(options);
  std::vector<Host> hosts;
  if (!options.hosts.empty()) {
    hosts = read_hosts(options.hosts);
    int slots = 0;
    for (const Host& h : hosts) slots += h.slots;
    const int needed = options.workers + options.servers;
    JANUS_CHECK(slots >= needed, ValueError,
                "--hosts {}: its {} host{} give{} {} slot{}, but the job has {} processes ({} "
                "workers, {} servers); add hosts or slots=N",
                options.hosts, hosts.size(), hosts.size() == 1 ? "" : "s",
                hosts.size() == 1 ? "s" : "", slots, slots == 1 ? "" : "s", needed, options.workers,
                options.servers);
  }
  Job job(options, std::move(hosts));
  return job.run();
}

std::vector<Host> read_hosts(const std::string& path) {
  std::ifstream in(path);
  JANUS_CHECK(in, IOError, "--hosts {}: cannot read it: {}", path, std::strerror(errno));
  constexpr const char* kExpected = "expected NAME [slots=N] [addr=ADDRESS]";
  std::vector<Host> hosts;
  std::vector<int> lines;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const std::vector<std::string> words = split_words(line);
    if (words.empty()) continue;
    Host h{.name = words[0], .address = words[0], .slots = 1};
    JANUS_CHECK(words[0].find('=') == std::string::npos, FormatError,
                "{}:{}: '{}' is not a host name; {}", path, line_no, words[0], kExpected);
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w.starts_with("addr=") && w.size() > 5) {
        h.address = w.substr(5);
        continue;
      }
      if (w.starts_with("slots=")) {
        const std::string n = w.substr(6);
        const bool digits =
            !n.empty() && n.size() <= 4 && n.find_first_not_of("0123456789") == std::string::npos;
        JANUS_CHECK(digits && std::stoi(n) >= 1, FormatError,
                    "{}:{}: '{}' is not valid; expected slots=N with N a whole number of "
                    "processes, at least 1",
                    path, line_no, w);
        h.slots = std::stoi(n);
        continue;
      }
      JANUS_THROW(FormatError, "{}:{}: unexpected '{}' after host '{}'; {}", path, line_no, w,
                  h.name, kExpected);
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      JANUS_CHECK(hosts[i].name != h.name, FormatError,
                  "{}:{}: host '{}' is listed again (first on line {}); give it slots=N instead",
                  path, line_no, h.name, lines[i]);
    }
    hosts.push_back(std::move(h));
    lines.push_back(line_no);
  }
  JANUS_CHECK(!hosts.empty(), FormatError, "{}: names no host; {} on each line", path, kExpected);
  return hosts;
}

}  // namespace janus::tools
