#include "shared_files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/trace/saved_files.h"

namespace rwd {

namespace {
/// pread until `n` bytes or the end of the file; returns the count. Throws SystemError.
size_t read_full(int fd, uint8_t* buf, size_t n, off_t at, const std::string& what) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, buf + got, n - got, at + off_t(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_errno("read " + what);
    if (r == 0) break;
    got += size_t(r);
  }
  return got;
}
/// Zeros [offset, offset + length) of the memfd `fd` (a hole: no memory kept for it).
void zero_range(int fd, uint64_t offset, uint64_t length) {
  if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(offset), off_t(length)) !=
      0)
    throw_errno("zero a range of the replay's copy of a shared file");
}
}  // namespace

SharedFiles::~SharedFiles() {
  for (auto& [n, fd] : fds_) ::close(fd);
}

std::string SharedFiles::sync(uint32_t number, const std::string& saved_path) {
  auto it = fds_.find(number);
  if (it == fds_.end()) {
    int fd = memfd_create(kMapName + std::strlen("/memfd:"), MFD_CLOEXEC);
    if (fd < 0) throw_errno("create the replay's copy of a shared file");
    it = fds_.emplace(number, fd).first;
  }
  int copy = it->second;
  int in = ::open(saved_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw_errno("open " + saved_path);
  try {
    struct stat st;
    if (::fstat(in, &st) != 0) throw_errno("stat " + saved_path);
    if (::ftruncate(copy, st.st_size) != 0)
      throw_errno("resize the replay's copy of a shared file");
    // Only the saved file's data extents are read (a sparse file of 64 GiB holds a few
    // blocks): where the copy holds data in the saved file's holes, it is zeroed first.
    const uint64_t size = uint64_t(st.st_size);
    const auto want_data = data_extents(in, size);
    for (auto [lo, hi] : data_extents(copy, size)) {
      for (const auto& [a, b] : want_data) {
        if (b <= lo || a >= hi) continue;
        if (a > lo) zero_range(copy, lo, a - lo);
        lo = std::max(lo, b);
      }
      if (lo < hi) zero_range(copy, lo, hi - lo);
    }
    // 64 KiB at a time: malloc serves that from its heap, whose pages stay mapped between
    // calls (a zero-filled MiB was freshly mapped and faulted in at every call, 5 ms here).
    constexpr size_t kBlock = 4096, kChunk = 64 << 10;
    std::vector<uint8_t> want(kChunk), have(kChunk);
    for (const auto& [from, to] : want_data) {
      for (off_t at = off_t(from); at < off_t(to); at += off_t(kChunk)) {
        size_t n =
            read_full(in, want.data(), std::min<size_t>(kChunk, to - uint64_t(at)), at, saved_path);
        size_t h = read_full(copy, have.data(), n, at, "the replay's copy of a shared file");
        for (size_t b = 0; b < n; b += kBlock) {
          size_t len = std::min(kBlock, n - b);
          if (b + len <= h && std::memcmp(want.data() + b, have.data() + b, len) == 0) continue;
          if (::pwrite(copy, want.data() + b, len, at + off_t(b)) != ssize_t(len))
            throw_errno("write the replay's copy of a shared file");
        }
        if (n == 0) break;
      }
    }
  } catch (...) {
    ::close(in);
    throw;
  }
  ::close(in);
  return fd_path(::getpid(), copy);
}

void SharedFiles::resize(uint32_t number, uint64_t size) {
  auto it = fds_.find(number);
  if (it != fds_.end() && ::ftruncate(it->second, off_t(size)) != 0)
    throw_errno("resize the replay's copy of a shared file");
}

void SharedFiles::zero(uint32_t number, uint64_t offset, uint64_t length) {
  auto it = fds_.find(number);
  if (it != fds_.end()) zero_range(it->second, offset, length);
}

void SharedFiles::write(uint32_t number, uint64_t offset, const std::vector<uint8_t>& bytes) {
  auto it = fds_.find(number);
  if (it == fds_.end()) return;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t r =
        ::pwrite(it->second, bytes.data() + done, bytes.size() - done, off_t(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw_errno("write the replay's copy of a shared file");
    done += size_t(r);
  }
}

std::optional<SharedFiles::Snapshot> SharedFiles::snapshot() {
  const std::string what = "the replay's copy of a shared file";
  uint64_t total = 0;
  std::map<uint32_t, uint64_t> sizes;
  for (const auto& [number, fd] : fds_) {
    struct stat st;
    if (::fstat(fd, &st) != 0) throw_errno("stat " + what);
    sizes[number] = uint64_t(st.st_size);
    total += uint64_t(st.st_size);
  }
  if (total > kSnapshotLimit) return std::nullopt;
  Snapshot out;
  std::vector<uint8_t> block(kSnapshotBlock);
  for (const auto& [number, fd] : fds_) {
    Snapshot::File& file = out.files[number];
    file.size = sizes[number];
    const Snapshot::File* before = nullptr;
    if (auto it = last_.files.find(number); it != last_.files.end()) before = &it->second;
    for (uint64_t at = 0; at < file.size; at += kSnapshotBlock) {
      const size_t n = size_t(std::min(kSnapshotBlock, file.size - at));
      block.resize(read_full(fd, block.data(), n, off_t(at), what));
      const size_t i = size_t(at / kSnapshotBlock);
      if (before && i < before->blocks.size() && *before->blocks[i] == block)
        file.blocks.push_back(before->blocks[i]);
      else
        file.blocks.push_back(std::make_shared<const std::vector<uint8_t>>(block));
      block.resize(kSnapshotBlock);
    }
  }
  last_ = out;
  return out;
}

void SharedFiles::restore(const Snapshot& s) {
  const std::string what = "the replay's copy of a shared file";
  std::vector<uint8_t> have(kSnapshotBlock);
  for (const auto& [number, file] : s.files) {
    auto it = fds_.find(number);
    if (it == fds_.end()) continue;
    const int fd = it->second;
    if (::ftruncate(fd, off_t(file.size)) != 0) throw_errno("resize " + what);
    for (size_t i = 0; i < file.blocks.size(); ++i) {
      const std::vector<uint8_t>& want = *file.blocks[i];
      const off_t at = off_t(i * kSnapshotBlock);
      const size_t h = read_full(fd, have.data(), want.size(), at, what);
      if (h == want.size() && std::memcmp(have.data(), want.data(), h) == 0) continue;
      if (::pwrite(fd, want.data(), want.size(), at) != ssize_t(want.size()))
        throw_errno("write " + what);
    }
  }
}

}  // namespace rwd
