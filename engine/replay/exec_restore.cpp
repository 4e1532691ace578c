#include "exec_restore.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "engine/errors.h"
#include "engine/os/insn_patch.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/os/vdso_symbols.h"
#include "engine/replay/remote_syscall.h"
#include "engine/trace/trace_reader.h"

namespace rwd {

namespace {
constexpr uint64_t kPage = 4096;
// Candidate addresses for rewind's temporary page; the first free in both address spaces wins.
constexpr uint64_t kScratchCandidates[] = {0x70000000, 0x60000000, 0x50000000, 0x200000000,
                                           0x10000000000};

bool overlaps(uint64_t s, uint64_t e, uint64_t a, uint64_t b) {
  return s < b && a < e;
}

std::string where(const Event& e) {
  return "replay diverged at event " + std::to_string(e.number) + " (task " +
         std::to_string(e.tid) + ", exec)";
}

void check(const Event& e, int64_t got, int64_t want, const std::string& what) {
  if (got != want)
    throw DivergenceError(where(e) + ": " + what + " returned " + std::to_string(got) +
                          ", expected " + std::to_string(want));
}
}  // namespace

void restore_exec(ReplayTask& t, const Event& e, const TraceReader& trace) {
  Registers now = get_regs(t.tid);
  auto current = read_proc_maps(t.tid);

  uint64_t scratch = 0;
  for (uint64_t c : kScratchCandidates) {
    bool busy = false;
    for (const auto& m : e.mappings) busy |= overlaps(c, c + kPage, m.start, m.end);
    for (const auto& m : current) busy |= overlaps(c, c + kPage, m.start, m.end);
    if (!busy) {
      scratch = c;
      break;
    }
  }
  if (!scratch) throw DivergenceError(where(e) + ": no free address for rewind's scratch page");

  // 1. A page of our own holding a syscall instruction, made by borrowing the entry point.
  errno = 0;
  long saved = ptrace(PTRACE_PEEKTEXT, t.tid, now.rip, nullptr);
  if (errno) throw_errno("peek at the entry point");
  long patched = (saved & ~0xffffL) | 0x050f;  // syscall
  if (ptrace(PTRACE_POKETEXT, t.tid, now.rip, patched) != 0) throw_errno("poke entry point");
  RemoteSyscall rs(t, now.rip, now);
  int64_t r =
      rs.call(SYS_mmap, {scratch, kPage, PROT_READ | PROT_WRITE | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, uint64_t(-1), 0});
  if (ptrace(PTRACE_POKETEXT, t.tid, now.rip, saved) != 0) throw_errno("restore entry point");
  check(e, r, int64_t(scratch), "mmap of rewind's scratch page");
  const uint8_t insn[] = {0x0f, 0x05, 0xcc};
  write_memory(t.tid, scratch, insn, sizeof insn);
  rs.set_insn(scratch);
  const uint64_t path_buf = scratch + 64;

  // 2. Remove what the kernel mapped, keeping the stack (its top is fixed without ASLR).
  const Mapping* rec_stack = nullptr;
  for (const auto& m : e.mappings)
    if (m.name == "[stack]") rec_stack = &m;
  for (const auto& m : current) {
    if (m.is_special() || m.start == scratch) continue;
    if (m.path == "[stack]" && rec_stack) {
      if (m.end != rec_stack->end)
        throw DivergenceError(where(e) + ": the stack ends at " + hex(m.end) +
                              " but was recorded ending at " + hex(rec_stack->end) +
                              " (different kernel address-space layout)");
      if (rec_stack->start < m.start) {
        // Let the kernel grow the stack down to the recorded extent by writing there.
        int64_t g = rs.call(SYS_clock_gettime, {CLOCK_MONOTONIC, rec_stack->start});
        check(e, g, 0, "growing the stack");
      } else if (rec_stack->start > m.start) {
        // The kernel made a larger stack (a longer executable path): trim it, so that the
        // address space, and memory digests, are the recorded ones.
        check(e, rs.call(SYS_munmap, {m.start, rec_stack->start - m.start}), 0,
              "trimming the stack");
      }
      continue;
    }
    check(e, rs.call(SYS_munmap, {m.start, m.end - m.start}), 0, "munmap " + m.path);
  }

  // 3. Map the recorded mappings from the trace's saved files.
  for (const auto& m : e.mappings) {
    if (&m == rec_stack) continue;
    uint64_t len = m.end - m.start;
    if (m.file.empty()) {
      int64_t a = rs.call(SYS_mmap, {m.start, len, m.prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                                     uint64_t(-1), 0});
      check(e, a, int64_t(m.start), "mmap of " + (m.name.empty() ? "anonymous memory" : m.name));
      continue;
    }
    std::string path = trace.file_path(m.file);
    if (path.size() + 1 > kPage - 64) throw Error("trace path too long: " + path);
    write_memory(t.tid, path_buf, path.c_str(), path.size() + 1);
    int64_t fd = rs.call(SYS_openat, {uint64_t(AT_FDCWD), path_buf, O_RDONLY | O_CLOEXEC});
    if (fd < 0) throw DivergenceError(where(e) + ": replayed task cannot open " + path);
    int64_t a =
        rs.call(SYS_mmap, {m.start, len, m.prot, MAP_PRIVATE | MAP_FIXED, uint64_t(fd), m.offset});
    rs.call(SYS_close, {uint64_t(fd)});
    check(e, a, int64_t(m.start), "mmap of " + m.name);
  }

  // 4. Recorded contents of writable memory, then drop the scratch page and set registers.
  for (const auto& region : e.memory)
    write_memory(t.tid, region.addr, region.bytes.data(), region.bytes.size());
  rs.call(SYS_munmap, {scratch, kPage});
  hide_vdso_symbols(t.tid);     // as the recorder did (vdso_symbols.h)
  patch_emulated_insns(t.tid);  // as the recorder did (insn_patch.h)
  set_regs(t.tid, e.regs);
  if (getenv("REWIND_DEBUG_EXEC")) {
    fprintf(stderr, "after exec event %llu:\n", (unsigned long long)e.number);
    for (const auto& m : read_proc_maps(t.tid))
      fprintf(stderr, "  %lx-%lx %s\n", (unsigned long)m.start, (unsigned long)m.end,
              m.path.c_str());
    for (const auto& m : e.mappings)
      fprintf(stderr, "  rec %lx-%lx %s\n", (unsigned long)m.start, (unsigned long)m.end,
              m.name.c_str());
  }
}

}  // namespace rwd
