// The debug registers a recorded program's own debugger sets in its tracee (gdb's hardware
// watchpoints: PTRACE_POKEUSER of u_debugreg). rewind is the tracee's real tracer, so the
// recorder makes the writes on the real task, where the CPU watches for the debugger; a hit's
// SIGTRAP (si_code TRAP_HWBKPT) is then the tracee's stop for its tracer at a point of its
// own (TracerStop::Fault), as a single step's is. Replay brings its copy of the tracee to that
// point and never arms the registers (the tracer's reads of them are recorded answers).
//
// An execute slot (gdb's hbreak) traps before its instruction: the kernel sets the resume
// flag (RF) in the tracee's saved flags so that it goes on without trapping again there, a
// flag that comparisons of registers leave out (registers.h kTransientFlags).
#include <sys/types.h>

#include <cerrno>
#include <string>

#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/record_session.h"

namespace rwd {

namespace {

/// DR7's enabled slots (L0/G0 .. L3/G3, bits 0-7; Intel SDM vol. 3, 17.2.4) as a mask of
/// DR6's B0-B3 bits.
uint64_t enabled_slots(uint64_t dr7) {
  uint64_t slots = 0;
  for (int i = 0; i < 4; ++i)
    if (dr7 & (3ull << (2 * i))) slots |= 1ull << i;
  return slots;
}

}  // namespace

int64_t RecordSession::debug_register_write(RecordTask& tracee, int dr, uint64_t value,
                                            const std::string& name) {
  // arch/x86/kernel/ptrace.c ptrace_set_debugreg: DR0-3 hold addresses, DR6 the status, DR4
  // and DR5 do not exist (EIO). The kernel checks the rest as the write is made on the real
  // task below, and answers as it would natively.
  if (dr == 4 || dr == 5) return -EIO;
  if (dr == 7 && enabled_slots(value) != 0 && !hardware_debug_registers())
    throw UnsupportedError(name +
                           " enabling a hardware breakpoint or watchpoint (debug register 7): "
                           "this machine's debug registers do not stop programs");
  // Slot 0 serves the recorder too, for a signal put off past a string instruction
  // (record_signal.cpp); it uses an int3 instead while the tracer has slot 0 on.
  if (tracee.deferred_at && tracee.deferred_byte < 0 && (dr == 0 || dr == 7))
    throw UnsupportedError(name + " of debug register " + std::to_string(dr) +
                           " while rewind uses that slot for a signal it put off is not "
                           "supported yet");
  if (long r = poke_debug_register(tracee.tid, dr, value); r != 0) return r;
  tracee.tracer_debug_registers[size_t(dr)] = value;
  return 0;
}

bool RecordSession::tracer_slot0_armed(const RecordTask& t) {
  return (enabled_slots(t.tracer_debug_registers[7]) & 1) != 0;
}

void RecordSession::note_tracer_debug_status(RecordTask& t) {
  const uint64_t armed = enabled_slots(t.tracer_debug_registers[7]);
  uint64_t dr6 = 0;
  if (!armed || !peek_debug_register(t.tid, 6, dr6)) return;
  // The kernel's DR6 for a tracer (thread.virtual_dr6) gathers the slots that fired until
  // the tracer writes it, without the recorder's own slot 0 where the tracer has not armed
  // it.
  t.tracer_debug_registers[6] = armed & 1 ? dr6 : dr6 & ~uint64_t(1);
}

bool RecordSession::dismiss_tracer_watch_hit(RecordTask& t) {
  const uint64_t armed = enabled_slots(t.tracer_debug_registers[7]);
  uint64_t dr6 = 0;
  if (!armed || !peek_debug_register(t.tid, 6, dr6) || !(dr6 & armed)) return false;
  if (t.tracer <= 0)
    throw UnsupportedError("task " + std::to_string(t.tid) +
                           " hit a hardware watchpoint its former tracer left armed: not "
                           "supported yet");
  // A write by rewind's preload library, copying a buffered syscall's result to where the
  // program asked for it (inside its buffered-call code, preload.h RWD_DEFERRED): natively the
  // kernel writes there, which no watchpoint sees.
  if (t.buffer.must_not_stop_at(get_regs(t.tid).rip)) {
    poke_debug_register(t.tid, 6, t.tracer_debug_registers[6]);
    return true;
  }
  note_tracer_debug_status(t);  // for the tracer's read of DR6
  return false;
}

}  // namespace rwd
