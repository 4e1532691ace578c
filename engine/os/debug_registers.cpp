#include "debug_registers.h"

#include <sys/ptrace.h>
#include <sys/user.h>

#include <cstddef>
#include <string>

#include "engine/errors.h"

namespace rwd {

namespace {
long poke(pid_t tid, int reg, uint64_t v) {
  return ptrace(PTRACE_POKEUSER, tid, offsetof(struct user, u_debugreg) + reg * sizeof(long), v);
}
}  // namespace

void set_exec_breakpoint(pid_t tid, uint64_t addr) {
  if (poke(tid, 0, addr) != 0 || poke(tid, 7, 1) != 0)
    throw_errno("set a hardware breakpoint in task " + std::to_string(tid));
}

void clear_exec_breakpoint(pid_t tid) {
  poke(tid, 7, 0);
  poke(tid, 0, 0);
}

}  // namespace rwd
