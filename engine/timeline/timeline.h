// The timeline (DESIGN.md "Checkpoints and reverse execution"): one replay of a trace that a
// debugger moves forwards and backwards, stops at breakpoints and watchpoints, and inspects.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/os/debug_registers.h"
#include "engine/os/proc.h"
#include "engine/timeline/code_site.h"
#include "engine/timeline/timeline_types.h"
#include "engine/trace/event.h"

namespace rwd {

class ReplayController;

/// A trace opened for debugging. All replay work runs on one replay thread owned by the
/// timeline (ptrace binds tracees to a thread); the methods below may be called from any
/// single thread and block until done. Going backwards re-executes from the latest
/// checkpoint before the target (or the trace's start).
class Timeline {
 public:
  /// Opens `trace_dir` and replays up to the program's first instruction (the first exec).
  /// Throws TraceError/DivergenceError if that fails.
  explicit Timeline(const std::string& trace_dir);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  /// The stop the timeline is at.
  StopInfo current() const;

  /// Runs forward to the next breakpoint or watchpoint hit, recorded signal, or the end.
  StopInfo resume_forward();
  /// Executes one instruction of task `tid` (a syscall instruction completes its event).
  StopInfo step_forward(pid_t tid);
  /// Where a reverse run stops for a watchpoint hit.
  enum class WatchStop : uint8_t {
    /// On the writing instruction, before it runs (gdb's reverse semantics). Reaching it
    /// single-steps the task from its last event (or buffered syscall) to the write.
    BeforeWrite,
    /// Just after the write, where a forward run reports it; a write that trapped at the
    /// current point itself is not before now. Costs no single steps.
    AfterWrite,
  };
  /// Runs backward to the last breakpoint or watchpoint hit before now, or the start. A
  /// watchpoint stops where `at` says (by default on the instruction that made the last
  /// write before now, before it runs, as gdb expects in reverse); old_value/new_value are
  /// that write's, as a forward run reports them.
  StopInfo resume_backward(WatchStop at = WatchStop::BeforeWrite);
  /// Goes back exactly one instruction of task `tid`. Back over a syscall, the task is at
  /// that syscall's entry: rip on the `syscall` instruction, rax its number, memory as before
  /// it ran; rcx and r11 hold what the instruction itself put there (the return address and
  /// rflags), their earlier values being lost to the kernel as on real hardware.
  /// With a range [skip_lo, skip_hi) of code (runtime addresses; skip_hi 0: none), the step
  /// goes back past instructions there to the last point before now where the task stood
  /// outside it (one replay, whatever their number), when that point lies after the task's
  /// last event; when the task ran only inside the range since that event, to just after the
  /// event (the caller steps back again from there); else (counting from an earlier pass at
  /// the same instruction found no such point) one instruction back.
  StopInfo step_backward(pid_t tid, uint64_t skip_lo = 0, uint64_t skip_hi = 0);
  /// Goes to the point just after event `event` was replayed (1 = the first exec).
  StopInfo seek(uint64_t event);

  /// Where the timeline stands now, for another timeline of the same trace to recognise
  /// (at_position). A point between events costs a digest of the stopped process's memory.
  TimelinePosition position();
  /// Whether this timeline stands at `p` (a position() of another timeline of the same
  /// trace): the same event and kind, and for a point between events, the same task with
  /// the same registers and memory digest (how the timeline itself finds its points again).
  bool at_position(const TimelinePosition& p);

  /// Asks a running operation (from another thread) to stop as soon as it can; it then
  /// returns with reason Interrupted. A forward run stops at the next event or stop of the
  /// replay. A reverse continue stops at the earliest point it has shown to hold no hit
  /// after it: the checkpoint its last finished scan started from (once its first scan, from
  /// the nearest checkpoint, has ended). Reverse steps complete. Thread-safe.
  void interrupt();

  /// Calls `listener` (on the timeline's replay thread) with the program's stdout/stderr
  /// output as the replay first passes each write: output already shown is not repeated
  /// when the timeline goes back and replays it again. nullptr: no listener.
  void set_output_listener(std::function<void(OutputStream, const std::string&)> listener);

  /// When on, forward runs (resume_forward) also stop with reason CodeMapped just after each
  /// event that maps executable code (an exec; mmap or mprotect with PROT_EXEC that
  /// succeeded), so that a debugger can bind breakpoints pending in a library before any of
  /// its code runs (gdb stops at the dynamic linker's solib event for the same purpose).
  /// Off by default.
  void set_stop_at_code_mappings(bool on);
  /// When on, forward runs (resume_forward) also stop just after each event that makes a
  /// process (reason Forked, in the task that made it, `child` the new process) and after
  /// each exec (reason Execed, in the task that made it, under its tid after the exec), as
  /// a native debugger hears of them (ptrace(2), PTRACE_O_TRACEFORK and PTRACE_O_TRACEEXEC;
  /// gdb's fork and exec events), and just after the event that ends a process while
  /// others live on (reason ProcessExited, as a native debugger reaps a traced child: its
  /// recorded pid and wait status). Off by default.
  void set_stop_at_process_events(bool on);
  /// When not 0, forward runs (resume_forward) also stop just after event `event` is
  /// replayed, with reason Seek (a query arms what it needs only from there). 0: off, the
  /// default.
  void set_stop_after_event(uint64_t event);

  /// The code site of address `addr` in task `tid`'s process at the current point: the
  /// mapped file and offset there, so that a breakpoint follows that code into every process
  /// that maps it (at its own address) and into no other. Throws Error for an unknown task.
  CodeSite code_site(pid_t tid, uint64_t addr);
  /// Software breakpoint at `site` in every replayed process that maps its code (an address
  /// site: in every process where that address is mapped).
  void add_breakpoint(const CodeSite& site);
  void remove_breakpoint(const CodeSite& site);
  /// Watchpoint on `len` bytes at `addr`: in a CPU debug-register slot for 1, 2, 4 or 8
  /// aligned bytes, else (a struct or array, up to kMaxWatchBytes: a wide watch) a write
  /// watch kept in software, which stops where a write changed the bytes or stored onto them
  /// (the runs go with the watched pages read-only: slower where the pages are written
  /// often). Returns false when all slots are taken. Throws Error for a ReadWrite one that is
  /// wide or where the debug registers are kept in software (hardware_debug_registers():
  /// reads cannot be seen there), and for more than kMaxWatchBytes.
  bool add_watchpoint(uint64_t addr, int len, WatchKind kind);
  void remove_watchpoint(uint64_t addr, int len, WatchKind kind);

  /// Registers of task `tid` at the current point. Throws Error for an unknown task.
  Registers registers(pid_t tid);
  /// Floating-point and SSE registers of task `tid` (PTRACE_GETFPREGS); nullopt when the
  /// kernel refuses. Throws Error for an unknown task.
  std::optional<user_fpregs_struct> fp_registers(pid_t tid);
  /// Up to `len` bytes of task `tid`'s memory at `addr` (fewer where unmapped); breakpoint
  /// patches are hidden.
  std::vector<uint8_t> read_memory(pid_t tid, uint64_t addr, size_t len);
  /// Writes `bytes` into task `tid`'s memory at `addr`, and sets its registers. Both happen
  /// in a diversion: a copy of the process made at the first write, which reads then show,
  /// and which is thrown away when the timeline moves; the replay never changes. Throws
  /// Error when no copy can be made (a task inside a fork, memory shared between processes:
  /// ReplaySession::checkpoint).
  void write_memory(pid_t tid, uint64_t addr, const std::vector<uint8_t>& bytes);
  void set_registers(pid_t tid, const Registers& regs);
  /// The live tasks at the current point.
  std::vector<TaskInfo> tasks();
  /// The number of events in the trace.
  uint64_t event_count() const;
  /// Path of the executable the trace started (its saved copy in the trace).
  std::string executable() const;
  /// The raw wait(2) status with which recorded process `pid` ended, from the trace's
  /// summary; nullopt when it did not end in the recording or the trace has no summary.
  std::optional<int> process_exit_status(pid_t pid) const;
  /// Takes a checkpoint here, kept (never thinned) until the timeline ends: a copy of every
  /// live process with all its threads. Only just after an event (after a seek, for
  /// instance) and where the processes can be copied (ReplaySession::checkpoint); returns
  /// false otherwise.
  bool add_checkpoint();
  /// The checkpoints held now.
  CheckpointStats checkpoints();
  /// The auxiliary vector of task `tid`'s process (raw /proc/PID/auxv bytes).
  std::vector<uint8_t> auxv(pid_t tid);
  /// The file task `tid`'s process runs at the current point: the trace's saved copy of its
  /// program (after its last exec so far); empty when /proc cannot tell. Throws Error for an
  /// unknown task.
  std::string program_file(pid_t tid);
  /// The address space of task `tid`'s process as /proc/PID/maps shows it. Mapped files are
  /// the trace's saved copies (files/NAME), which hold the recorded bytes.
  std::vector<ProcMapping> mappings(pid_t tid);

 private:
  std::unique_ptr<ReplayController> engine_;
  mutable uint64_t event_count_ = 0;
};

}  // namespace rwd
