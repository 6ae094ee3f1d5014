#include "janus/dist/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "janus/base/error.h"

namespace janus::dist {

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  JANUS_CHECK(fd >= 0, IOError, "no free TCP port on 127.0.0.1: socket failed: {}",
              std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int saved = errno;
  ::close(fd);
  JANUS_CHECK(ok, IOError, "no free TCP port on 127.0.0.1: {}", std::strerror(saved));
  return ntohs(addr.sin_port);
}

}  // namespace janus::dist
