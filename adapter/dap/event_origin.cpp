#include "adapter/dap/event_origin.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <string>

#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// Whether a mapping's name is the dynamic loader's file (ld-linux-x86-64.so.2, ld-2.36.so).
bool is_loader_file(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return base.rfind("ld-", 0) == 0 && base.find(".so") != std::string::npos;
}

/// The most events from a buffer's mmap to its register call (rwd_register_thread makes 7).
constexpr size_t kMaxRegistrationEvents = 16;

bool is_syscall(const Event& e, long number) {
  return e.kind == EventKind::Syscall && e.syscallno() == number;
}

}  // namespace

const char* event_origin_name(EventOrigin origin) {
  switch (origin) {
    case EventOrigin::Loader:
      return "loader";
    case EventOrigin::Rewind:
      return "rewind";
    case EventOrigin::Program:
      break;
  }
  return "program";
}

EventOriginTracker::Task& EventOriginTracker::task(pid_t tid) {
  Task& t = tasks_[tid];
  if (!t.loader) t.loader = std::make_shared<std::vector<Range>>();
  return t;
}

bool EventOriginTracker::in_loader(const Task& t, uint64_t rip) const {
  for (const Range& r : *t.loader)
    if (rip >= r.start && rip < r.end) return true;
  return false;
}

void EventOriginTracker::add(const Event& e) {
  size_t index = origins_.size();
  origins_.push_back(EventOrigin::Program);
  Task& t = task(e.tid);
  EventOrigin origin = EventOrigin::Program;
  const Registers& r = e.regs;
  if (e.kind == EventKind::Exec) {
    auto loader = std::make_shared<std::vector<Range>>();
    for (const Mapping& m : e.mappings)
      if ((m.prot & PROT_EXEC) && is_loader_file(m.name)) loader->push_back({m.start, m.end});
    t = Task{};
    t.loader = loader;
  } else if (e.kind == EventKind::Syscall && e.syscallno() >= RWD_SYS_REGISTER_BUFFER) {
    origin = EventOrigin::Rewind;  // rewind's private syscalls
    if (is_syscall(e, RWD_SYS_PATCHED)) t.patching = false;
  } else if (t.patching) {
    origin = EventOrigin::Rewind;
  } else if (is_syscall(e, SYS_mmap) && r.rdi == RWD_UNTRACED_PAGE) {
    origin = EventOrigin::Rewind;
  } else if (is_syscall(e, SYS_mprotect) && r.rdi == RWD_UNTRACED_PAGE) {
    origin = EventOrigin::Rewind;
    t.untraced_page_set_up = true;
  } else if (t.patch_mprotects_left > 0 && is_syscall(e, SYS_mprotect)) {
    origin = EventOrigin::Rewind;
    --t.patch_mprotects_left;
  } else if (t.close_fd >= 0 && is_syscall(e, SYS_close) && int64_t(r.rdi) == t.close_fd) {
    origin = EventOrigin::Rewind;
  } else if (t.unmap_buffer && is_syscall(e, SYS_munmap) && r.rdi == t.unmap_buffer) {
    origin = EventOrigin::Rewind;
  } else if ((e.kind == EventKind::Syscall || e.kind == EventKind::SyscallEntry ||
              is_emulated_insn(e.kind) || e.kind == EventKind::Signal) &&
             in_loader(t, r.rip)) {
    origin = EventOrigin::Loader;
  }
  if (!is_syscall(e, SYS_mprotect)) t.patch_mprotects_left = 0;
  if (!is_syscall(e, SYS_close)) t.close_fd = -1;
  if (!is_syscall(e, SYS_munmap)) t.unmap_buffer = 0;

  // A task's buffer registration (rwd_register_thread): an anonymous read-write mmap of
  // RWD_BUFFER_SIZE bytes, the desched counter's calls, then the register call naming the
  // buffer. Everything the task did from that mmap to the register call was the preload's.
  if (is_syscall(e, SYS_mmap) && r.rdi == 0 && r.rsi == RWD_BUFFER_SIZE &&
      r.rdx == (PROT_READ | PROT_WRITE) && (r.r10 & MAP_ANONYMOUS)) {
    t.buffer = uint64_t(e.result);
    t.since_buffer.clear();
  }
  if (t.buffer) t.since_buffer.push_back(index);
  // The registration is a handful of calls; a program's own mmap of that size is no buffer.
  if (t.since_buffer.size() > kMaxRegistrationEvents) {
    t.buffer = 0;
    t.since_buffer.clear();
  }
  if (is_syscall(e, RWD_SYS_REGISTER_BUFFER)) {
    if (t.buffer && r.rdi == t.buffer) {
      for (size_t i : t.since_buffer) origins_[i] = EventOrigin::Rewind;
      if (e.result != 0 && int64_t(r.r9) >= 0) t.close_fd = int64_t(r.r9);
      if (e.result < 0) t.unmap_buffer = t.buffer;
      // The process's first registration (just after the untraced page) is followed by
      // libc's patching, up to RWD_SYS_PATCHED (a library before that call: two mprotects
      // around the stubs, two around libc's text).
      if (e.result >= 0 && (r.r8 & RWD_FEATURE_PATCH_END))
        t.patching = true;
      else if (t.untraced_page_set_up && e.result >= 0)
        t.patch_mprotects_left = 4;
    }
    t.untraced_page_set_up = false;
    t.buffer = 0;
    t.since_buffer.clear();
  }
  if (origins_[index] == EventOrigin::Program) origins_[index] = origin;
  // A new task: a thread shares its process's loader text; a forked process has a copy (the
  // same addresses).
  if (e.kind == EventKind::Syscall && e.child_tid > 0) task(e.child_tid).loader = t.loader;
}

}  // namespace rwd
