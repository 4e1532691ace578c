#include "socket_options.h"

#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>

namespace rwd {

namespace {
#ifndef SOL_XDP
#define SOL_XDP 283  // include/linux/socket.h
#endif

constexpr RefusedSocketOption kRefused[] = {
    {SOL_PACKET, PACKET_RX_RING, "PACKET_RX_RING"},
    {SOL_PACKET, PACKET_TX_RING, "PACKET_TX_RING"},
    {SOL_XDP, XDP_RX_RING, "XDP_RX_RING"},
    {SOL_XDP, XDP_TX_RING, "XDP_TX_RING"},
    {SOL_XDP, XDP_UMEM_REG, "XDP_UMEM_REG"},
    {SOL_XDP, XDP_UMEM_FILL_RING, "XDP_UMEM_FILL_RING"},
    {SOL_XDP, XDP_UMEM_COMPLETION_RING, "XDP_UMEM_COMPLETION_RING"},
};
}  // namespace

const RefusedSocketOption* refused_socket_option(uint64_t level, uint64_t optname) {
  // The kernel reads both as ints (net/socket.c __sys_setsockopt).
  for (const RefusedSocketOption& o : kRefused)
    if (int(level) == o.level && int(optname) == o.optname) return &o;
  return nullptr;
}

}  // namespace rwd
