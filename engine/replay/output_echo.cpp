#include "output_echo.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {
constexpr uint64_t kMaxIov = 1024;  // IOV_MAX

void write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // our own stdout closed: nothing more to show
    p += w;
    n -= size_t(w);
  }
}
}  // namespace

void echo_output(pid_t tid, OutputKind kind, const Registers& regs, int64_t result,
                 OutputStream to) {
  if (result <= 0 || to == OutputStream::None) return;
  int fd = to == OutputStream::Stderr ? 2 : 1;
  uint64_t left = uint64_t(result);
  if (kind == OutputKind::Buffer) {
    auto bytes = read_memory(tid, regs.rsi, left);
    write_all(fd, bytes.data(), bytes.size());
    return;
  }
  if (kind != OutputKind::Iov) return;
  uint64_t count = std::min<uint64_t>(regs.rdx, kMaxIov);
  std::vector<iovec> iov(count);
  auto raw = read_memory(tid, regs.rsi, count * sizeof(iovec));
  std::copy(raw.begin(), raw.end(), reinterpret_cast<uint8_t*>(iov.data()));
  for (size_t i = 0; i < raw.size() / sizeof(iovec) && left > 0; ++i) {
    uint64_t n = std::min<uint64_t>(iov[i].iov_len, left);
    auto bytes = read_memory(tid, reinterpret_cast<uint64_t>(iov[i].iov_base), n);
    write_all(fd, bytes.data(), bytes.size());
    left -= n;
  }
}

}  // namespace rwd
