#include "exec_restore.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "engine/errors.h"
#include "engine/os/insn_patch.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/os/vdso_symbols.h"
#include "engine/replay/recorded_memory.h"
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

/// The remote syscalls of an exec's restore, run from a page of rewind's own that is made the
/// first time one is needed: an exec whose mappings all came out as recorded needs none.
class ExecCalls {
 public:
  ExecCalls(ReplayTask& t, const Event& e, const std::vector<ProcMapping>& current)
      : t_(t), e_(e), current_(current) {}

  /// Runs syscall `nr` in the task (RemoteSyscall::call), making the page first.
  int64_t call(long nr, std::array<uint64_t, 6> args) { return calls().call(nr, args); }

  /// The address of a page-sized buffer in the task for a path (after the instructions).
  uint64_t path_buffer() {
    calls();
    return scratch_ + 64;
  }

  /// Unmaps the page, where one was made.
  void finish() {
    if (rs_) rs_->call(SYS_munmap, {scratch_, kPage});
  }

 private:
  RemoteSyscall& calls() {
    if (rs_) return *rs_;
    for (uint64_t c : kScratchCandidates) {
      bool busy = false;
      for (const auto& m : e_.mappings) busy |= overlaps(c, c + kPage, m.start, m.end);
      for (const auto& m : current_) busy |= overlaps(c, c + kPage, m.start, m.end);
      if (!busy) {
        scratch_ = c;
        break;
      }
    }
    if (!scratch_) throw DivergenceError(where(e_) + ": no free address for rewind's scratch page");
    // A page of our own holding a syscall instruction, made by borrowing the entry point
    // (`syscall; int3`: RemoteSyscall's one-stop call).
    const Registers regs = get_regs(t_.tid);
    const uint64_t entry = regs.rip;
    errno = 0;
    long saved = ptrace(PTRACE_PEEKTEXT, t_.tid, entry, nullptr);
    if (errno) throw_errno("peek at the entry point");
    long patched = (saved & ~0xffffffL) | 0xcc050f;  // syscall; int3
    if (ptrace(PTRACE_POKETEXT, t_.tid, entry, patched) != 0) throw_errno("poke entry point");
    rs_.emplace(t_, entry, regs);
    int64_t r =
        rs_->call(SYS_mmap, {scratch_, kPage, PROT_READ | PROT_WRITE | PROT_EXEC,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, uint64_t(-1), 0});
    if (ptrace(PTRACE_POKETEXT, t_.tid, entry, saved) != 0) throw_errno("restore entry point");
    check(e_, r, int64_t(scratch_), "mmap of rewind's scratch page");
    const uint8_t insn[] = {0x0f, 0x05, 0xcc};
    write_memory(t_.tid, scratch_, insn, sizeof insn);
    rs_->set_insn(scratch_);
    return *rs_;
  }

  ReplayTask& t_;
  const Event& e_;
  const std::vector<ProcMapping>& current_;
  uint64_t scratch_ = 0;
  std::optional<RemoteSyscall> rs_;
};

/// Whether the mapping `c` that the replay's exec made is already the recorded mapping `m`:
/// the same range, offset and protection, private, and the same file (the trace's copy is a
/// hard link to the file the kernel mapped: the same device and inode; `saved` caches the
/// stat of each saved file) or, for memory of no file, the same label. Such a mapping is kept
/// as the kernel made it instead of being unmapped and mapped again.
bool made_as_recorded(const ProcMapping& c, const Mapping& m, const TraceReader& trace,
                      std::map<std::string, struct stat>& saved) {
  if (c.start != m.start || c.end != m.end || c.shared || m.flags != MAP_PRIVATE ||
      uint32_t(c.prot()) != m.prot)
    return false;
  if (m.file.empty()) return c.inode == 0 && c.path == m.name && m.name != "[stack]";
  if (c.inode == 0 || c.offset != m.offset) return false;
  auto it = saved.find(m.file);
  if (it == saved.end()) {
    struct stat st {};
    if (stat(trace.file_path(m.file).c_str(), &st) != 0) st.st_ino = 0;
    it = saved.emplace(m.file, st).first;
  }
  return it->second.st_ino != 0 && it->second.st_ino == c.inode && it->second.st_dev == c.dev;
}
}  // namespace

void restore_exec(ReplayTask& t, const Event& e, const TraceReader& trace) {
  auto current = read_proc_maps(t.tid);
  ExecCalls rs(t, e, current);

  // 1. Which of the kernel's mappings are the recorded ones already (most are: the same
  // files at the same addresses, as address-space randomisation is off).
  std::map<std::string, struct stat> saved;
  std::vector<bool> kept(current.size()), made(e.mappings.size());
  for (size_t i = 0; i < current.size(); i++)
    for (size_t j = 0; j < e.mappings.size(); j++)
      if (!made[j] && made_as_recorded(current[i], e.mappings[j], trace, saved)) {
        kept[i] = made[j] = true;
        break;
      }

  // 2. Remove the rest of what the kernel mapped, keeping the stack (its top is fixed without
  // ASLR).
  const Mapping* rec_stack = nullptr;
  for (const auto& m : e.mappings)
    if (m.name == "[stack]") rec_stack = &m;
  for (size_t i = 0; i < current.size(); i++) {
    const ProcMapping& m = current[i];
    if (m.is_special() || kept[i]) continue;
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

  // 3. Map the other recorded mappings from the trace's saved files.
  for (size_t j = 0; j < e.mappings.size(); j++) {
    const Mapping& m = e.mappings[j];
    if (&m == rec_stack || made[j]) continue;
    uint64_t len = m.end - m.start;
    if (m.file.empty()) {
      int64_t a = rs.call(SYS_mmap, {m.start, len, m.prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                                     uint64_t(-1), 0});
      check(e, a, int64_t(m.start), "mmap of " + (m.name.empty() ? "anonymous memory" : m.name));
      continue;
    }
    std::string path = trace.file_path(m.file);
    if (path.size() + 1 > kPage - 64) throw Error("trace path too long: " + path);
    const uint64_t path_buf = rs.path_buffer();
    write_memory(t.tid, path_buf, path.c_str(), path.size() + 1);
    int64_t fd = rs.call(SYS_openat, {uint64_t(AT_FDCWD), path_buf, O_RDONLY | O_CLOEXEC});
    if (fd < 0) throw DivergenceError(where(e) + ": replayed task cannot open " + path);
    int64_t a =
        rs.call(SYS_mmap, {m.start, len, m.prot, MAP_PRIVATE | MAP_FIXED, uint64_t(fd), m.offset});
    rs.call(SYS_close, {uint64_t(fd)});
    check(e, a, int64_t(m.start), "mmap of " + m.name);
  }

  // 4. Recorded contents of writable memory, then drop the scratch page and set registers.
  write_recorded(t.tid, e.memory);
  rs.finish();
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
