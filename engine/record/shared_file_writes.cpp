// Writes into a file that recorded processes map shared. A program that maps a file
// MAP_SHARED and writes it with write(2) or pwrite(2) (LMDB's pattern: pages written with
// pwrite, read through a read-only shared map) sees the bytes through the mapping at once. The
// write is emulated in replay, which writes no file: the mapping, a replay's copy of the file
// (engine/replay/shared_files.h), would keep its old bytes, and the replayed program would read
// something else than it did. So the recorder keeps, at each such write's event, the bytes
// the call wrote (read from the task's buffers) and the file offset (Event::shared_file,
// Event::written_memory), and replay puts them into its copy at the same event, as rr's
// MmappedFileMonitor records such writes.
//
// The preload library buffers writes to regular files, with no event to keep bytes at: at the
// mmap that maps a file shared, rewind lists it in the library's memory
// (RWD_FEATURE_SHARED_FILES), which then keeps every write to it traced, and makes the
// library forget the descriptor classes it has cached. The list is the event's memory, so the
// replayed library decides the same.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/file_saver.h"
#include "engine/record/record_session.h"
#include "engine/record/syscall_capture.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// The file offset at which task `tid`'s write-like call (registers `entry`, into
/// descriptor `fd`) wrote its `written` bytes, from after the call, or -1 when it cannot be
/// known. man 2 pwrite: on Linux, O_APPEND makes even pwrite append, at the end of the file
/// (`path` names it); so does pwritev2's RWF_APPEND (man 2 pwritev2).
int64_t written_offset(pid_t tid, const Registers& entry, int fd, const std::string& path,
                       int64_t written) {
  const long nr = long(entry.orig_rax);
  const FdInfo info = fd_info(tid, fd);
  if (info.flags < 0) return -1;
  if ((info.flags & O_APPEND) || (nr == SYS_pwritev2 && (entry.r9 & RWF_APPEND))) {
    struct stat after;
    return ::stat(path.c_str(), &after) == 0 ? int64_t(after.st_size) - written : -1;
  }
  // pwritev(2)'s offset is pos_l on x86-64 (pos_h only completes it on 32-bit kernels);
  // pwritev2 with offset -1 writes at the descriptor's position, as writev does.
  if (nr == SYS_pwrite64 || nr == SYS_pwritev || (nr == SYS_pwritev2 && int64_t(entry.r10) != -1))
    return int64_t(entry.r10);
  return info.pos < 0 ? -1 : info.pos - written;
}

/// The path argument at `addr` of task `tid`'s syscall, as this process can reach it (a
/// relative path from the task's working directory); empty where it cannot be read.
std::string path_argument(pid_t tid, uint64_t addr) {
  const std::vector<uint8_t> bytes = read_memory(tid, addr, PATH_MAX);
  const auto end = std::find(bytes.begin(), bytes.end(), uint8_t(0));
  if (end == bytes.end() || end == bytes.begin()) return "";
  std::string path(bytes.begin(), end);
  return path[0] == '/' ? path : "/proc/" + std::to_string(tid) + "/cwd/" + path;
}

/// A call that copies bytes into a descriptor from another file or a pipe, without passing
/// them through the caller's memory: its destination descriptor and the argument pointing at
/// the destination's offset (-1: it writes at the descriptor's position).
struct CopyCall {
  long nr;
  int out_fd_arg;
  int out_offset_arg;
};

/// copy_file_range(2) (fd_in, off_in, fd_out, off_out...), splice(2) (same order),
/// sendfile(2) (out_fd, in_fd, offset of in_fd, count).
constexpr CopyCall kCopyCalls[] = {
    {SYS_copy_file_range, 2, 3}, {SYS_splice, 2, 3}, {SYS_sendfile, 0, -1}};

const CopyCall* copy_call(long nr) {
  for (const CopyCall& c : kCopyCalls)
    if (c.nr == nr) return &c;
  return nullptr;
}

}  // namespace

void RecordSession::list_shared_file(RecordTask& t, const std::string& fd_path, Event& e) {
  const uint64_t at = space(t).shared_files;
  struct stat st;
  if (!at || ::stat(fd_path.c_str(), &st) != 0) return;
  rwd_shared_files list;
  try {
    read_memory_exact(t.tid, at, &list, sizeof list);
  } catch (const SystemError&) {
    return;  // no library reads it then
  }
  const uint32_t n = list.count;
  if (n > RWD_SHARED_FILES) return;  // every file's writes are traced already
  for (uint32_t i = 0; i < n; ++i)
    if (list.files[i].dev == st.st_dev && list.files[i].ino == st.st_ino) return;
  if (n < RWD_SHARED_FILES) list.files[n] = {uint64_t(st.st_dev), uint64_t(st.st_ino)};
  list.count = n + 1;  // RWD_SHARED_FILES + 1 where the list is full: every file
  MemoryRegion m;
  m.addr = at;
  m.bytes.assign(reinterpret_cast<const uint8_t*>(&list),
                 reinterpret_cast<const uint8_t*>(&list) + sizeof list);
  try {
    write_memory(t.tid, at, m.bytes.data(), m.bytes.size());
  } catch (const SystemError&) {
    return;
  }
  e.memory.push_back(std::move(m));
  forget_fd_cache(t, e);  // a descriptor of the file may be cached as a plain regular file
}

void RecordSession::keep_shared_file_write(RecordTask& t, const struct stat& st, Event& e) {
  const uint32_t number = saver_->shared_number(st.st_dev, st.st_ino);
  if (!number || !S_ISREG(st.st_mode) || e.result <= 0) return;
  const int fd = int(t.entry.rdi);
  const std::string path = fd_path(t.tid, fd);
  const int64_t offset = written_offset(t.tid, t.entry, fd, path, e.result);
  if (offset < 0)
    throw Error("cannot tell where a write into " + path +
                ", a file mapped shared, went: the recording cannot go on");
  // The bytes the call sent, from the task's buffers (a regular file takes them all at the
  // offset): what the file holds there now, as the mapping shows it.
  const long nr = long(t.entry.orig_rax);
  const uint64_t n = uint64_t(e.result);
  e.shared_file = number;
  e.written_memory.addr = uint64_t(offset);
  e.written_memory.bytes =
      nr == SYS_write || nr == SYS_pwrite64
          ? read_memory(t.tid, t.entry.rsi, n)
          : read_gathered(t.tid, read_iovecs(t.tid, t.entry.rsi, t.entry.rdx), n);
}

void RecordSession::keep_shared_file_size(RecordTask& t, Event& e) {
  if (!saver_->saved_shared()) return;
  const std::string path = long(t.entry.orig_rax) == SYS_truncate
                               ? path_argument(t.tid, t.entry.rdi)
                               : fd_path(t.tid, int(t.entry.rdi));
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (const uint32_t number = saver_->shared_number(st.st_dev, st.st_ino)) {
    e.shared_file = number;
    e.written_memory.addr = uint64_t(st.st_size);
  }
}

void RecordSession::keep_shared_file_copy(RecordTask& t, Event& e) {
  const CopyCall* call = copy_call(long(t.entry.orig_rax));
  if (!call || e.result <= 0 || !saver_->saved_shared()) return;
  const auto args = syscall_args(t.entry);
  const int fd = int(args[call->out_fd_arg]);
  const std::string path = fd_path(t.tid, fd);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const uint32_t number = saver_->shared_number(st.st_dev, st.st_ino);
  if (!number) return;
  // Where the bytes went: after an offset the caller passed (which the kernel moved past
  // them), else before the descriptor's position, or the end of an O_APPEND file.
  int64_t offset = -1;
  if (call->out_offset_arg >= 0 && args[call->out_offset_arg]) {
    int64_t after = 0;
    read_memory_exact(t.tid, args[call->out_offset_arg], &after, sizeof after);
    offset = after - e.result;
  } else {
    offset = written_offset(t.tid, t.entry, fd, path, e.result);
  }
  if (offset < 0)
    throw Error("cannot tell where a copy into " + path +
                ", a file mapped shared, went: the recording cannot go on");
  // The bytes came from another file or a pipe: read them where they now are.
  std::vector<uint8_t> bytes(size_t(e.result));
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw_errno("open " + path);
  const ssize_t got = ::pread(in, bytes.data(), bytes.size(), offset);
  ::close(in);
  if (got != ssize_t(bytes.size())) throw_errno("read what a copy wrote into " + path);
  e.shared_file = number;
  e.written_memory.addr = uint64_t(offset);
  e.written_memory.bytes = std::move(bytes);
}

}  // namespace rwd
