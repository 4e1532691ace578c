#include "output_echo.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {

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

std::string output_bytes(pid_t tid, OutputKind kind, const Registers& regs, int64_t result) {
  std::string out;
  if (result <= 0) return out;
  uint64_t left = uint64_t(result);
  auto append = [&](uint64_t addr, uint64_t n) {
    auto bytes = read_memory(tid, addr, n);
    out.append(bytes.begin(), bytes.end());
  };
  if (kind == OutputKind::Buffer) {
    append(regs.rsi, left);
    return out;
  }
  if (kind != OutputKind::Iov) return out;
  uint64_t count = std::min<uint64_t>(regs.rdx, kMaxIovecs);
  std::vector<iovec> iov(count);
  auto raw = read_memory(tid, regs.rsi, count * sizeof(iovec));
  std::copy(raw.begin(), raw.end(), reinterpret_cast<uint8_t*>(iov.data()));
  for (size_t i = 0; i < raw.size() / sizeof(iovec) && left > 0; ++i) {
    uint64_t n = std::min<uint64_t>(iov[i].iov_len, left);
    append(reinterpret_cast<uint64_t>(iov[i].iov_base), n);
    left -= n;
  }
  return out;
}

void echo_output(pid_t tid, OutputKind kind, const Registers& regs, int64_t result,
                 OutputStream to) {
  if (result <= 0 || to == OutputStream::None) return;
  std::string bytes = output_bytes(tid, kind, regs, result);
  write_all(to == OutputStream::Stderr ? 2 : 1, reinterpret_cast<const uint8_t*>(bytes.data()),
            bytes.size());
}

}  // namespace rwd
