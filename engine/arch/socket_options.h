// Socket options a recording refuses: those that set up memory the kernel fills or drains
// while the program runs, with no syscall replay could answer (packet(7) PACKET_MMAP rings,
// AF_XDP's rings and user memory, Documentation/networking/af_xdp.rst). setsockopt(2) of
// one fails with ENOPROTOOPT, as under rr (its packet_mmap_disable test): a program that can do
// without the ring reads packets with recvfrom, which is recorded; one that cannot reports the
// error (recent libpcap requires the ring).
#pragma once

#include <cstdint>

namespace rwd {

/// One refused option: setsockopt's `level` and `optname` arguments, and its name.
struct RefusedSocketOption {
  int level;
  int optname;
  const char* name;
};

/// The refused option that setsockopt(fd, level, optname, ...) sets, or nullptr when the
/// kernel may set it (socket_options.cpp holds the table).
const RefusedSocketOption* refused_socket_option(uint64_t level, uint64_t optname);

}  // namespace rwd
