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
  if (result <= 0 || (kind != OutputKind::Buffer && kind != OutputKind::Iov)) return {};
  const std::vector<uint8_t> bytes =
      kind == OutputKind::Buffer
          ? read_memory(tid, regs.rsi, uint64_t(result))
          : read_gathered(tid, read_iovecs(tid, regs.rsi, regs.rdx), uint64_t(result));
  return std::string(bytes.begin(), bytes.end());
}

void echo_output(pid_t tid, OutputKind kind, const Registers& regs, int64_t result,
                 OutputStream to) {
  if (result <= 0 || to == OutputStream::None) return;
  std::string bytes = output_bytes(tid, kind, regs, result);
  write_all(to == OutputStream::Stderr ? 2 : 1, reinterpret_cast<const uint8_t*>(bytes.data()),
            bytes.size());
}

}  // namespace rwd
