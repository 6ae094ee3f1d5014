// A TCP port for a job's rendezvous when the user names none (`janus launch`, the dist tests
// and benchmarks). Layer: dist.
#pragma once

namespace janus::dist {

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0, bound then
/// closed). Another process may take it before rank 0 listens; rank 0's listen then fails
/// with a DistError naming the port. IOError when no socket can be bound.
int free_loopback_port();

}  // namespace janus::dist
