// The program's own seccomp filters under rewind's (seccomp(2), prctl(2) PR_SET_SECCOMP):
// they judge the program's calls, as natively, and not the preload library's own, which a
// sandbox's filter would otherwise refuse, trap or kill (rr rewrites such filters likewise).
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>

#include "engine/arch/siginfo.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/seccomp_filter.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/record_session.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// What the recorder puts in front of a program's filter: calls made from the library's two
/// privileged stubs (rewind_preload_abi.h) pass; for the others the accumulator is 0 again, as
/// at a filter's start, and the program's own instructions follow. Classic BPF jumps are
/// relative, so the program's filter works unchanged behind it.
constexpr uint32_t kIpLow = offsetof(seccomp_data, instruction_pointer);
static_assert(uint64_t(RWD_PRIVILEGED_TRACED_IP) >> 32 == 0 &&
              uint64_t(RWD_PRIVILEGED_UNTRACED_IP) >> 32 == 0);
constexpr sock_filter kPrefix[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow + 4),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RWD_PRIVILEGED_UNTRACED_IP, 1, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RWD_PRIVILEGED_TRACED_IP, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_IMM, 0),
};
constexpr size_t kPrefixLen = sizeof kPrefix / sizeof kPrefix[0];
constexpr size_t kMaxInsns = 4096;  // BPF_MAXINSNS (<linux/bpf_common.h>)
constexpr uint64_t kRedZone = 128;  // bytes below rsp the x86-64 ABI leaves to leaf code

/// SECCOMP_RET_DATA from here on, in a program's filter the recorder rewrote, numbers the
/// action the filter had there (RecordSession::program_actions_); rewind's own is
/// kRecorderSeccompData, below.
constexpr uint32_t kProgramDataBase = 0x6000, kProgramDataEnd = 0x10000;
/// The data of the trace stop that stands for a SECCOMP_RET_USER_NOTIF (rewrite_program_actions).
constexpr uint32_t kUserNotifData = kProgramDataBase - 1;
static_assert(kRecorderSeccompData < kUserNotifData);
/// seccomp_data.instruction_pointer of a call sent again from the library's page so that the
/// program's filter notifies its supervisor (redirect_user_notif).
constexpr uint32_t kNotifIp = RWD_TRAP_SYSCALL_INSN + 2;

/// Whether the call at `r` (syscall entry registers) installs a filter: seccomp
/// SECCOMP_SET_MODE_FILTER, or prctl PR_SET_SECCOMP with SECCOMP_MODE_FILTER. Both take the
/// sock_fprog's address in rdx.
bool installs_filter(const Registers& r) {
  if (r.orig_rax == SYS_seccomp) return r.rdi == SECCOMP_SET_MODE_FILTER;
  return r.orig_rax == SYS_prctl && r.rdi == PR_SET_SECCOMP && r.rsi == SECCOMP_MODE_FILTER;
}

}  // namespace

bool RecordSession::answer_seccomp_prctl(RecordTask& t) {
  if (!seccomp_ || t.entry.orig_rax != SYS_prctl) return false;
  const Registers& r = t.entry;
  if (r.rdi == PR_SET_NO_NEW_PRIVS && r.rsi == 1 && !r.rdx && !r.r10 && !r.r8) {
    t.no_new_privs = true;  // the kernel's answer (0) stands; the bit was set already
    return false;
  }
  if (r.rdi == PR_GET_NO_NEW_PRIVS && !r.rsi && !r.rdx && !r.r10 && !r.r8) {
    // rewind set it for its filter (install_syscall_filter): the program sees its own.
    answer_syscall(t, t.no_new_privs ? 1 : 0);
    return true;
  }
  // rewind's own filter counts as one; a program that installed none natively sees seccomp
  // off (prctl(2): PR_GET_SECCOMP returns 0).
  if (r.rdi != PR_GET_SECCOMP || seccomp_filter_count(t.tid) != 1) return false;
  answer_syscall(t, 0);
  return true;
}

void RecordSession::wrap_program_filter(RecordTask& t) {
  if (!seccomp_ || !installs_filter(t.entry)) return;
  sock_fprog prog{};
  std::vector<uint8_t> head = read_memory(t.tid, t.entry.rdx, sizeof prog);
  if (head.size() != sizeof prog) return;  // the kernel answers EFAULT
  std::memcpy(&prog, head.data(), sizeof prog);
  if (prog.len == 0 || prog.len + kPrefixLen > kMaxInsns) return;  // EINVAL, as natively
  const size_t own = prog.len * sizeof(sock_filter);
  std::vector<uint8_t> bytes = read_memory(t.tid, uint64_t(uintptr_t(prog.filter)), own);
  if (bytes.size() != own) return;  // EFAULT
  std::vector<sock_filter> code(prog.len);
  std::memcpy(code.data(), bytes.data(), own);
  // A user notification is sent again from the library's page (redirect_user_notif), which
  // only a task whose library registered has.
  rewrite_program_actions(code, t.buffer.addr != 0);
  if (code.size() + kPrefixLen > kMaxInsns) return;  // no room: applies to the library too
  // The new sock_fprog and its instructions go on the stack below the red zone, over bytes
  // no code uses (the x86-64 ABI), which are put back at the exit: the recording's memory
  // stays as natively, and replay, which does not make the call, finds the same bytes there.
  const size_t body = code.size() * sizeof(sock_filter);
  const size_t total = sizeof prog + sizeof kPrefix + body;
  const uint64_t at = (t.entry.rsp - kRedZone - total) & ~uint64_t(15);
  std::vector<uint8_t> saved = read_memory(t.tid, at, total);
  if (saved.size() != total) return;  // no room there: the filter applies to the library too
  std::vector<uint8_t> wrapped(total);
  sock_fprog moved{static_cast<unsigned short>(code.size() + kPrefixLen),
                   reinterpret_cast<sock_filter*>(uintptr_t(at + sizeof prog))};
  std::memcpy(wrapped.data(), &moved, sizeof moved);
  std::memcpy(wrapped.data() + sizeof moved, kPrefix, sizeof kPrefix);
  std::memcpy(wrapped.data() + sizeof moved + sizeof kPrefix, code.data(), body);
  write_memory(t.tid, at, wrapped.data(), total);
  Registers r = t.entry;
  r.rdx = at;
  set_regs(t.tid, r);
  t.filter_saved_at = at;
  t.filter_saved = std::move(saved);
}

void RecordSession::rewrite_program_actions(std::vector<sock_filter>& code, bool redirect_notif) {
  // The actions that end a call unrun (an errno, a SIGSYS, a trace stop no tracer asked for)
  // would end it without a stop of rewind's, and the recording would miss the call: each
  // becomes a trace stop whose data names it, and on_program_seccomp_trace does what it says.
  // The others stay: ALLOW and LOG run the call as rewind's filter says; KILL ends the task
  // (its end is recorded); RET A, whose value is known only as it runs, is left to the
  // kernel.
  const size_t n = code.size();
  bool notifies = false;
  for (size_t i = 0; i < n; ++i) {
    sock_filter& f = code[i];
    if (f.code != (BPF_RET | BPF_K)) continue;
    const uint32_t action = f.k & SECCOMP_RET_ACTION_FULL;
    if (action == SECCOMP_RET_USER_NOTIF && !redirect_notif)
      throw UnsupportedError(
          "a seccomp filter that notifies a supervisor (SECCOMP_RET_USER_NOTIF) in a process "
          "without rewind's preload library is not supported yet: record with "
          "--no-syscall-buffer");
    if (action == SECCOMP_RET_USER_NOTIF) {
      // To the tail below: a forward jump (BPF_JA's offset is 32 bits).
      f = sock_filter BPF_STMT(BPF_JMP | BPF_JA, uint32_t(n - i - 1));
      notifies = true;
      continue;
    }
    if (action != SECCOMP_RET_ERRNO && action != SECCOMP_RET_TRAP && action != SECCOMP_RET_TRACE)
      continue;
    auto known = std::find(program_actions_.begin(), program_actions_.end(), f.k);
    size_t index = size_t(known - program_actions_.begin());
    if (known == program_actions_.end()) {
      if (kProgramDataBase + index >= kProgramDataEnd) continue;  // no number left for it
      program_actions_.push_back(f.k);
    }
    f.k = SECCOMP_RET_TRACE | uint32_t(kProgramDataBase + index);
  }
  // SECCOMP_RET_USER_NOTIF outranks rewind's own SECCOMP_RET_TRACE (seccomp(2), "the
  // precedence"): the call would wait for the program's supervisor, and return, without a
  // stop of rewind's. It becomes a trace stop of its own (kUserNotifData), at which the
  // recorder sends the call again from RWD_TRAP_SYSCALL_INSN (redirect_user_notif); from
  // there the filter notifies as the program's did.
  if (notifies) {
    const sock_filter tail[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNotifIp, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | kUserNotifData),
    };
    code.insert(code.end(), std::begin(tail), std::end(tail));
  }
}

void RecordSession::on_program_seccomp_trace(RecordTask& t, uint32_t data) {
  // What the program's filter said (rewrite_program_actions; a filter not rewritten, without
  // rewind's own, says SECCOMP_RET_TRACE with its data). A trace stop its tracer asked for
  // (PTRACE_O_TRACESECCOMP) stops it for that tracer, and the call then goes on (seccomp(2));
  // with no such tracer it fails with ENOSYS unrun.
  if (data == kUserNotifData) return redirect_user_notif(t);
  uint32_t action = SECCOMP_RET_TRACE | (data & SECCOMP_RET_DATA);
  if (data >= kProgramDataBase && data - kProgramDataBase < program_actions_.size())
    action = program_actions_[data - kProgramDataBase];
  const uint32_t value = action & SECCOMP_RET_DATA;
  const bool for_tracer = (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_TRACE && t.tracer > 0 &&
                          (t.tracer_options & PTRACE_O_TRACESECCOMP);
  int64_t result = -ENOSYS;
  if ((action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
    result = -int64_t(std::min<uint32_t>(value, 4095));  // MAX_ERRNO, as the kernel caps it
  const bool trap = (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_TRAP;
  if (t.state == RunState::InSyscall) {
    // After its syscall-entry stop (no seccomp filter of rewind's): the exit records it. Its
    // tracer's stop comes now; replay's copy stands at the call's entry meanwhile.
    // The recorder answered the call at its entry (rseq, a number the kernel lacks: the call
    // skipped, orig_rax -1): the filter judged the skip, natively it judged the call, which
    // the recorder's answer replaces. The answer stands.
    if (int64_t(get_regs(t.tid).orig_rax) == -1) return resume_syscall(t);
    if (for_tracer) {
      // (An exit's event is written already: it ends the task there.)
      if (!t.entry_marked && !syscall_has(long(t.entry.orig_rax), kExit)) mark_entry(t);
      t.seccomp_stop_inside = true;
      t.tracer_event_msg = value;
      return stop_for_tracer(t, SIGTRAP, TracerStop::Seccomp, PTRACE_EVENT_SECCOMP);
    }
    answer_syscall(t, result);
    return resume_syscall(t);
  }
  Registers r = get_regs(t.tid);
  if (r.rip == RWD_UNTRACED_IP) {
    const int64_t nr = int64_t(r.orig_rax);
    r.orig_rax = uint64_t(-1);  // skipped
    // The preload library's buffered call. Trapped, or stopping for its tracer, it is given
    // up (its record too), so that the library makes it traced and this filter judges it
    // there.
    if (trap || for_tracer) {
      give_up_buffered_call(t, r, nr);
    } else {
      r.rax = uint64_t(result);  // its record holds the result, as replay's library reads it
      set_regs(t.tid, r);
    }
    return resume_syscall(t);
  }
  if (for_tracer) {
    t.seccomp_stop_due = uint16_t(value);  // after its syscall-enter-stop, if any
    return on_syscall_entry(t);
  }
  // SECCOMP_RET_TRAP: not run, rax holds the call's number again, and SIGSYS arrives as the
  // call returns, with si_code SYS_SECCOMP, si_errno the filter's data, the call's address,
  // number and architecture (seccomp(2), siginfo_t's _sigsys fields; make_siginfo leaves
  // bytes 16-31 zero).
  t.program_seccomp_answer = trap ? int64_t(r.orig_rax) : result;
  if (trap) {
    SigInfo si = make_siginfo(SIGSYS, 1 /* SYS_SECCOMP */, 0, 0, 0);
    const int32_t errno_field = int32_t(value);
    const uint64_t call_addr = r.rip;
    const int32_t nr = int32_t(r.orig_rax);
    const uint32_t arch = AUDIT_ARCH_X86_64;
    std::memcpy(si.data() + 4, &errno_field, 4);
    std::memcpy(si.data() + 16, &call_addr, 8);
    std::memcpy(si.data() + 24, &nr, 4);
    std::memcpy(si.data() + 28, &arch, 4);
    t.program_seccomp_sigsys = si;
  }
  on_syscall_entry(t);  // answers it
}

void RecordSession::redirect_user_notif(RecordTask& t) {
  Registers r = get_regs(t.tid);
  if (r.rip == RWD_UNTRACED_IP) {
    // A buffered call: given up (no notification was sent), so that the library makes it
    // traced, which stops here again.
    const int64_t nr = int64_t(r.orig_rax);
    r.orig_rax = uint64_t(-1);
    give_up_buffered_call(t, r, nr);
    return resume_syscall(t);
  }
  if (t.state == RunState::InSyscall) return resume_syscall(t);  // taken at its entry already
  // No library page in this image (a static program exec'ed under the filter, or a call of
  // the dynamic loader's before the library started): nowhere to make the call again from.
  if (!t.buffer.addr)
    throw UnsupportedError(std::string("a call of ") + syscall_name(long(r.orig_rax)) +
                           " that a seccomp filter sends to a supervisor "
                           "(SECCOMP_RET_USER_NOTIF), before rewind's preload library started "
                           "in its process, is not supported yet: record with "
                           "--no-syscall-buffer");
  // Skipped here (orig_rax -1), it returns to RWD_TRAP_SYSCALL_INSN with its number in rax
  // and its arguments unchanged; user_notif_stop makes it from there.
  t.user_notif = RecordTask::UserNotif::Skipped;
  t.user_notif_entry = r;
  Registers moved = r;
  moved.orig_rax = uint64_t(-1);
  moved.rax = r.orig_rax;
  moved.rip = RWD_TRAP_SYSCALL_INSN;
  set_regs(t.tid, moved);
  on_syscall_entry(t);  // its entry, with the program's registers (user_notif_entry)
}

bool RecordSession::user_notif_stop(RecordTask& t, bool entry) {
  using UserNotif = RecordTask::UserNotif;
  if (t.user_notif == UserNotif::None) return false;
  if (entry) {
    // The call made again: the filter notifies the supervisor and the kernel waits for its
    // answer; its exit stop follows. A signal that came before it interrupts it there.
    if (t.user_notif != UserNotif::InStub) return false;
    send_put_off(t);
    resume(t.tid, PTRACE_SYSCALL, 0);
    return true;
  }
  Registers r = get_regs(t.tid);
  if (t.user_notif == UserNotif::Skipped && r.rip == RWD_TRAP_SYSCALL_INSN && !t.skip_syscall) {
    t.user_notif = UserNotif::InStub;
    r.rax = t.user_notif_entry.orig_rax;
    set_regs(t.tid, r);
    resume(t.tid, PTRACE_SYSCALL, 0);
    return true;
  }
  // The new call's exit (or the recorder answered the call itself at its entry): the
  // program's own place again, the call's number for a restart, and the rcx and r11 its own
  // `syscall` set (the return address and rflags: Intel SDM, SYSCALL).
  t.user_notif = UserNotif::None;
  r.rip = t.user_notif_entry.rip;
  r.orig_rax = t.user_notif_entry.orig_rax;
  r.rcx = t.user_notif_entry.rcx;
  r.r11 = t.user_notif_entry.r11;
  set_regs(t.tid, r);
  return false;
}

bool RecordSession::notify_signal_before_stub(RecordTask& t, int sig, const SigInfo& si) {
  // Between the skipped call's exit and the new call, a signal stops the task at
  // RWD_TRAP_SYSCALL_INSN, a place the program never is: it waits for the new call, which
  // it then interrupts, as natively it interrupted the wait (seccomp_unotify(2)).
  if (t.user_notif != RecordTask::UserNotif::InStub || get_regs(t.tid).rip != RWD_TRAP_SYSCALL_INSN)
    return false;
  put_off_signal(t, sig, si);
  resume(t.tid, PTRACE_SYSCALL, 0);
  return true;
}

void RecordSession::unwrap_program_filter(RecordTask& t, Registers& regs) {
  if (t.filter_saved_at == 0) return;
  write_memory(t.tid, t.filter_saved_at, t.filter_saved.data(), t.filter_saved.size());
  t.filter_saved_at = 0;
  t.filter_saved.clear();
  regs.rdx = t.entry.rdx;
  set_regs(t.tid, regs);
}

}  // namespace rwd
