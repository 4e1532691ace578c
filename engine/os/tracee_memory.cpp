#include "tracee_memory.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/arch/registers.h"
#include "engine/errors.h"

namespace rwd {

namespace {
constexpr uint64_t kPage = 4096;

ssize_t read_chunk(pid_t tid, uint64_t addr, uint8_t* out, size_t n) {
  iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
  return process_vm_readv(tid, &local, 1, &remote, 1, 0);
}
}  // namespace

size_t read_memory_into(pid_t tid, uint64_t addr, uint8_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    // Read page by page only after a failure, so one bad page does not lose the rest.
    ssize_t r = read_chunk(tid, addr + done, out + done, n - done);
    if (r <= 0) {
      size_t in_page = kPage - ((addr + done) % kPage);
      r = read_chunk(tid, addr + done, out + done, std::min(in_page, n - done));
      if (r <= 0) break;
    }
    done += size_t(r);
  }
  return done;
}

std::vector<uint8_t> read_memory(pid_t tid, uint64_t addr, size_t n) {
  std::vector<uint8_t> out(n);
  out.resize(read_memory_into(tid, addr, out.data(), n));
  return out;
}

void read_memory_exact(pid_t tid, uint64_t addr, void* out, size_t n) {
  errno = 0;
  // No copy through a vector.
  size_t done = read_memory_into(tid, addr, static_cast<uint8_t*>(out), n);
  if (done != n)
    throw SystemError("read tracee memory at " + hex(addr + done), errno ? errno : EFAULT);
}

void write_memory(pid_t tid, uint64_t addr, const void* p, size_t n) {
  if (n == 0) return;
  // Fast path: one process_vm_writev. It fails on read-only pages, which /proc/PID/mem writes.
  iovec local{const_cast<void*>(p), n}, remote{reinterpret_cast<void*>(addr), n};
  if (process_vm_writev(tid, &local, 1, &remote, 1, 0) == ssize_t(n)) return;
  TraceeMemFile(tid).write(addr, p, n);
}

TraceeMemFile::~TraceeMemFile() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceeMemFile::write(uint64_t addr, const void* p, size_t n) {
  if (fd_ < 0) {
    std::string path = "/proc/" + std::to_string(tid_) + "/mem";
    fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) throw_errno("open " + path);
  }
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::pwrite(fd_, static_cast<const uint8_t*>(p) + done, n - done, off_t(addr + done));
    if (w <= 0)
      throw SystemError("write tracee memory at " + hex(addr + done), w < 0 ? errno : EIO);
    done += size_t(w);
  }
}

std::vector<iovec> read_iovecs(pid_t tid, uint64_t addr, uint64_t count) {
  std::vector<iovec> v(std::min(count, kMaxIovecs));
  if (!v.empty()) read_memory_exact(tid, addr, v.data(), v.size() * sizeof(iovec));
  return v;
}

std::vector<uint8_t> read_gathered(pid_t tid, const std::vector<iovec>& iov, uint64_t n) {
  std::vector<uint8_t> out;
  for (const iovec& one : iov) {
    if (out.size() >= n) break;
    auto bytes = read_memory(tid, reinterpret_cast<uint64_t>(one.iov_base),
                             std::min<uint64_t>(one.iov_len, n - out.size()));
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

}  // namespace rwd
