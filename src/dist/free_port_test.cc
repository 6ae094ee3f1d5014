// The port is one this process can listen on at once (what rank 0 of a job does next).
#include "janus/dist/free_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace janus::dist {
namespace {

TEST(FreeLoopbackPort, IsAPortThatCanBeListenedOn) {
  const int port = free_loopback_port();
  ASSERT_GT(port, 0);
  ASSERT_LE(port, 65535);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::listen(fd, 1), 0);
  ::close(fd);
}

}  // namespace
}  // namespace janus::dist
