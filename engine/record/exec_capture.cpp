#include "exec_capture.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <climits>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {
constexpr uint64_t kMaxArgs = 1 << 20;
}  // namespace

void disable_vdso(pid_t tid, const Registers& regs) {
  // Initial stack (System V x86-64 ABI 3.4.1): argc, argv[], NULL, envp[], NULL, auxv pairs.
  uint64_t p = regs.rsp, argc = 0;
  read_memory_exact(tid, p, &argc, 8);
  if (argc > kMaxArgs) return;
  p += 8 * (argc + 2);
  for (uint64_t v = 1, n = 0; v != 0 && n < kMaxArgs; ++n, p += 8) read_memory_exact(tid, p, &v, 8);
  for (int n = 0; n < 64; ++n, p += 16) {
    uint64_t type = 0;
    read_memory_exact(tid, p, &type, 8);
    if (type == AT_NULL) return;
    if (type == AT_SYSINFO_EHDR) {
      uint64_t ignore = AT_IGNORE;
      write_memory(tid, p, &ignore, 8);
    }
  }
}

Event capture_exec(pid_t tid, FileSaver& saver) {
  Event e;
  e.kind = EventKind::Exec;
  e.tid = tid;
  e.regs = get_regs(tid);
  disable_vdso(tid, e.regs);
  std::string proc = "/proc/" + std::to_string(tid);
  char exe[PATH_MAX] = {};
  ssize_t n = ::readlink((proc + "/exe").c_str(), exe, sizeof exe - 1);
  if (n < 0) throw_errno("readlink " + proc + "/exe");
  e.file = saver.save(proc + "/exe", strip_deleted_suffix(exe));
  for (const ProcMapping& m : read_proc_maps(tid)) {
    if (m.is_special()) continue;
    Mapping out;
    out.start = m.start;
    out.end = m.end;
    out.offset = m.offset;
    out.prot = uint32_t(m.prot());
    out.flags = m.shared ? MAP_SHARED : MAP_PRIVATE;
    out.name = m.path;
    bool file_backed = !m.path.empty() && m.path[0] != '[' && m.inode != 0;
    if (file_backed) {
      char range[64];
      snprintf(range, sizeof range, "/map_files/%lx-%lx", (unsigned long)m.start,
               (unsigned long)m.end);
      out.file = saver.save(proc + range, strip_deleted_suffix(m.path));
    }
    if (m.write || out.file.empty()) {
      MemoryRegion r;
      r.addr = m.start;
      r.bytes = read_memory(tid, m.start, m.end - m.start);
      e.memory.push_back(std::move(r));
    }
    e.mappings.push_back(std::move(out));
  }
  e.argv = read_proc_cmdline(tid);
  return e;
}

}  // namespace rwd
