/* The contract between librewind_preload.so (in the recorded program) and rewind (the recorder
 * and the replayer): fixed addresses, rewind's own syscall numbers and the layout of a task's
 * syscall buffer. C, so that both the library and the engine include it. See preload/README.md. */
#ifndef REWIND_PRELOAD_ABI_H
#define REWIND_PRELOAD_ABI_H

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

/* A page the library maps at this fixed address, holding `syscall; ret` at its start. The
 * recorder's seccomp filter lets syscalls made from that instruction run without a ptrace
 * stop (the filter is installed before exec, when no library address is known yet). In
 * replay the library makes there only the buffered calls that replay makes for real too
 * (brk): the replayer runs each at its stop and checks its result against the record's. */
#define RWD_UNTRACED_PAGE 0x6ffff000
/* seccomp_data.instruction_pointer of a syscall made there: the address after `syscall`. */
#define RWD_UNTRACED_IP (RWD_UNTRACED_PAGE + 2)
/* `syscall; int3` on the same page, run only in replay: the replayer makes a syscall in a
 * stopped task by pointing rip here and resuming it with PTRACE_CONT, one stop (the int3's
 * SIGTRAP) where PTRACE_SYSCALL's entry and exit stops make two (remote_syscall.cpp). */
#define RWD_TRAP_SYSCALL_INSN (RWD_UNTRACED_PAGE + 8)
/* Two more `syscall; ret` stubs on the page, for the library's own calls (rr's "privileged"
 * syscall entry points). A filter the program installs itself (seccomp(2)) would judge them
 * as the program's own calls: the recorder puts in front of it a test that lets calls made
 * from these two instructions pass (program_filter.cpp), so that a sandbox's filter applies
 * to the program and not to the library. The untraced one (its address after `syscall`,
 * RWD_PRIVILEGED_UNTRACED_IP) runs without a ptrace stop, as RWD_UNTRACED_IP (the desched
 * counter's ioctl); the traced one stops for the recorder as any call (the library's
 * registration, its buffer's mmap, its patching's mprotect). */
#define RWD_PRIVILEGED_UNTRACED_INSN (RWD_UNTRACED_PAGE + 16)
#define RWD_PRIVILEGED_UNTRACED_IP (RWD_PRIVILEGED_UNTRACED_INSN + 2)
#define RWD_PRIVILEGED_TRACED_INSN (RWD_UNTRACED_PAGE + 24)
#define RWD_PRIVILEGED_TRACED_IP (RWD_PRIVILEGED_TRACED_INSN + 2)
/* From here to the page's end the page holds zeros, which the replayer may use while it runs
 * syscalls in a stopped task (the path it opens to map a saved file), and zeroes again. */
#define RWD_REPLAY_SCRATCH (RWD_UNTRACED_PAGE + 64)

/* rewind's own syscall numbers (no kernel syscall has them; without rewind they fail with
 * ENOSYS, and the library stays off). A program's own call of these numbers fails with ENOSYS
 * as natively: rewind tells the library's calls by their registers (a registration's size
 * argument and deferral range in the library's code, a file whose name starts with
 * RWD_LIBRARY_NAME; a pause's or divergence report's r12 pointing at the task's buffer). */
#define RWD_LIBRARY_NAME "librewind_preload.so"
/* register_buffer(buffer, size, defer_start, defer_end, features, desched_fd): the calling
 * task's buffer, the code range where the recorder must not stop the task at an arbitrary
 * point, what this library can do (RWD_FEATURE_*; libraries before the features existed pass
 * 0), and the task's desched counter (RWD_FEATURE_DESCHED; -1 when it has none). Returns 0,
 * or 1 when rewind cannot use the counter (the library closes it and traces the calls that
 * may block). */
#define RWD_SYS_REGISTER_BUFFER 1000
/* Made by the library only in replay, when the next buffered record is not for this call. */
#define RWD_SYS_DIVERGED 1001
/* Made by the library only in replay, when a pause mark follows the record it is about to
 * mark used: rewind stops the task there, puts the records after the mark in place, sets rax
 * to the call's result (the library left it in rbx) and rbx to hdr->pos plus r8 (the
 * record's size), and resumes it after the `syscall`. From there the library's code runs as
 * it does without a pause; the task marks the record used a few instructions later (the
 * first point where hdr->pos counts it, with or without a pause). */
#define RWD_SYS_PAUSE 1002
/* patched(sites): made once by the library after the registration that announced
 * RWD_FEATURE_PATCH_END, when its patching of libc's syscall sites (preload/patch.c) is over,
 * whatever its outcome (`sites` patched, 0 when none). From that registration to this call
 * the library reads libc's text and writes into it: a debugger's int3 there would change
 * what it finds, so a replay keeps breakpoints out of the process's libc text in between.
 * The recorder answers 0; a program's own call of this number fails with ENOSYS. */
#define RWD_SYS_PATCHED 1003

/* Features a library announces at registration. */
/* It makes RWD_SYS_PAUSE at a pause mark. */
#define RWD_FEATURE_PAUSE 1
/* It buffers calls that may block (preload/README.md, "Calls that may block"): recording, it
 * enables its desched counter around them, a software perf event counting the task's context
 * switches (perf_event_open(2), PERF_COUNT_SW_CONTEXT_SWITCHES) that sends it
 * RWD_DESCHED_SIGNAL (si_code POLL_IN, si_fd the counter) when the task is switched out,
 * i.e. when the call blocks. The recorder then makes the interrupted call return
 * RWD_ABORTED; the library abandons its record and makes the call as a traced syscall. */
#define RWD_FEATURE_DESCHED 2
#define RWD_DESCHED_SIGNAL 30 /* SIGPWR */
/* The counter's descriptor is moved to the lowest free number at or above this one
 * (fcntl(2) F_DUPFD_CLOEXEC), out of the numbers a program opens first and may expect free
 * (rr's choice: RR_DESCHED_EVENT_FLOOR_FD); it stays where perf_event_open(2) put it when
 * RLIMIT_NOFILE is lower. Closed when its thread ends through pthread_exit(3) or a return. */
#define RWD_DESCHED_FD_FLOOR 100
/* This registration (the process's first) is followed by the patching of libc, which ends
 * with RWD_SYS_PATCHED. */
#define RWD_FEATURE_PATCH_END 4
/* The header's library_switch is set. rewind writes 0 there when a task creates a process
 * sharing its memory (clone(2) with CLONE_VM, without CLONE_THREAD or CLONE_VFORK): the child
 * runs with its parent's thread-local state (the same buffer, another task's desched
 * counter), so the whole address space's syscalls are traced from then on. */
#define RWD_FEATURE_SWITCH 8
/* The header's fd_cache_switch is set: the library keeps each descriptor's file type (regular
 * or not, behind rewind's stdout/stderr or not) from its last buffered fstat, and forgets a
 * descriptor when its own close, dup2, dup3 or close_range changes it. rewind writes the
 * switch (an int, in the event's memory, which replay writes at the same event) where the
 * library cannot see the change: RWD_FD_CACHE_FORGET after a traced close, close_range, dup2
 * or dup3 (a call from code that was not patched); RWD_FD_CACHE_OFF where another memory
 * shares the descriptor table (clone(2) with CLONE_FILES without CLONE_VM) or this memory is
 * shared with a table of its own (CLONE_VM without CLONE_FILES: threads with their own table,
 * a vfork child until its parent's next event; unshare(2) of CLONE_FILES). */
#define RWD_FEATURE_FD_CACHE 16
#define RWD_FD_CACHE_FORGET 0 /* the library forgets every descriptor, then sets VALID */
#define RWD_FD_CACHE_VALID 1
#define RWD_FD_CACHE_OFF 2 /* every check makes its fstat */
/* The header's shared_files is set: rewind lists there (struct rwd_shared_files, written as
 * the event's memory of the mmap that maps the file, which replay writes at the same event)
 * the files this memory maps MAP_SHARED from a descriptor open for reading and writing. The
 * library keeps the writes to them traced, as those to rewind's output: the recorder keeps
 * the bytes each puts into the file, and replay puts them into its copy of the file, which
 * the mappings show (engine/record/shared_file_writes.cpp). rewind sets the descriptor
 * cache's switch to RWD_FD_CACHE_FORGET with each new entry. */
#define RWD_FEATURE_SHARED_FILES 32
#define RWD_SHARED_FILES 16
/* Replaying, the library makes the buffered rt_sigprocmask calls that block or unblock no
 * signal the kernel may force (RWD_FORCED_SIGNALS) without a syscall: recording, the kernel
 * wrote the old mask into the record; replaying, the library computes the new mask from it
 * (man 2 sigprocmask) and leaves it in the header (pending_mask, mask_pending = 1), and
 * rewind sets it with PTRACE_SETSIGMASK at the task's next ptrace stop, before anything
 * reads or needs the mask (a signal's delivery, its frame, a syscall). Until then the
 * kernel's copy is an older one, which only a signal the kernel forces on the task could
 * see (kernel/signal.c, force_sig_info_to_task: a forced signal that is blocked resets its
 * handler): calls that block or unblock one of those, and SIG_SETMASK calls that would
 * (the library reads the mask first with a buffered query), are made for real in replay
 * too, at RWD_UNTRACED_PAGE. */
#define RWD_FEATURE_LAZY_MASK 64
/* The header's turns_switch is set: the address of the library's turns switch, an int shared
 * by every thread of the address space, RWD_TURNS_SHARED until rewind says otherwise. rewind
 * writes RWD_TURNS_ALONE there at a registration (the event's memory, which replay writes at
 * the same event) while no other task can wait for this memory's turn: its only task, and
 * turns not shared with another process; and RWD_TURNS_SHARED again when another task comes
 * to share them (a thread, a process sharing the memory, a fork that shares writable memory:
 * the clone's event memory, in the child's memory too). While it reads RWD_TURNS_ALONE, the
 * library makes an open (which only a FIFO makes wait) without its desched counter and
 * without reading the signal mask first: a wait there holds up no other task, as natively,
 * and a signal that interrupts it aborts it as it aborts an armed one (README.md, "Calls that
 * may block"). Processes whose turns a shared mapping joins later
 * (engine/record/shared_mappings.cpp) keep their values: such a wait there ends at the time
 * slice's end, as an unarmed open's always did. */
#define RWD_FEATURE_TURNS 128
#define RWD_TURNS_SHARED 0
#define RWD_TURNS_ALONE 1
/* The signals the kernel forces on a task from a fault or trap (bit n-1 for signal n):
 * SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSYS. */
#define RWD_FORCED_SIGNALS                                                         \
  ((1ull << (4 - 1)) | (1ull << (5 - 1)) | (1ull << (7 - 1)) | (1ull << (8 - 1)) | \
   (1ull << (11 - 1)) | (1ull << (31 - 1)))

/* The result the recorder gives a buffered syscall that a signal interrupted (no syscall
 * returns it: errors are -4095..-1). The trace keeps a record with this result where the
 * call was abandoned (an abort mark, always the last record of its event), so that replay's
 * library abandons it at the same place. */
#define RWD_ABORTED (-4096)

/* Record numbers that are marks rather than syscalls (no syscall has them). The end mark
 * follows the last record of an event: any call that reads it makes RWD_SYS_DIVERGED. */
#define RWD_END_MARK 0xffffffffu
#define RWD_PAUSE_MARK 0xfffffffeu

/* A task's buffer: a header page, then records. */
#define RWD_BUFFER_SIZE (1024 * 1024)
/* Bytes [0, RWD_CONTROL_OFFSET) are part of the memory digest (pos); the rest (the control
 * words, which differ between record and replay, and the records, which replay fills in ahead)
 * is not. */
#define RWD_CONTROL_OFFSET 64
#define RWD_DATA_OFFSET 4096

/* The per-site stubs (preload/patch.c), RWD_STUB_SIZE bytes each from the library's
 * rwd_stub_area to rwd_stub_area_end (a symbol of its .symtab, sized to the area). A site jumps to
 * its stub; the stub lowers rsp by RWD_STUB_RED_ZONE bytes, calls rwd_entry and jumps back. The
 * site's address is kept in the stub (8 bytes at RWD_STUB_SITE_OFFSET), so that a debugger shows a
 * task stopped inside the library as the program at that site (engine/symbols/unwinder). */
#define RWD_STUB_SIZE 80
#define RWD_STUB_SITE_OFFSET 72
#define RWD_STUB_RED_ZONE 128

#ifndef __ASSEMBLER__
/* RWD_FEATURE_SHARED_FILES: files by device and inode (as fstat(2) gives them). */
struct rwd_shared_files {
  /* Entries in use; RWD_SHARED_FILES + 1 when more files were mapped than the list holds:
   * the writes to every file are traced then. */
  uint32_t count;
  uint32_t pad;
  struct {
    uint64_t dev, ino;
  } files[RWD_SHARED_FILES];
};

struct rwd_buffer_header {
  uint32_t pos; /* bytes of records written (record) or consumed (replay) */
  uint32_t pad0;
  /* RWD_FEATURE_SHARED_FILES: the address of the library's struct rwd_shared_files, shared by
   * every thread of the address space. Written by the library before its registration. */
  uint64_t shared_files;
  /* RWD_FEATURE_TURNS: the address of the library's turns switch (an int shared by every
   * thread of the address space). Written by the library before its registration. */
  uint64_t turns_switch;
  uint32_t pad[6];
  /* RWD_FEATURE_FD_CACHE: the address of the library's descriptor cache switch (an int shared
   * by every thread of the address space). Written by the library before its registration. */
  uint64_t fd_cache_switch;
  /* RWD_FEATURE_SWITCH: the address of the library's switch, an int shared by every thread
   * of the address space; while it is 0, every syscall is traced. Written by the library
   * before its registration. */
  uint64_t library_switch;
  /* From RWD_CONTROL_OFFSET: written by rewind. */
  uint32_t replaying; /* 1 in replay: results come from the records, no syscall is made
                       * (but the run_in_replay calls, at RWD_UNTRACED_PAGE) */
  /* 1 from when the library has enabled its desched counter until it disables it (set in
   * replay too, where it means nothing); rewind clears it when it disables the counter
   * itself. A stop while it is 1 was a context switch the counter signals. */
  uint32_t desched_armed;
  /* RWD_FEATURE_LAZY_MASK, replaying: 1 when the library has left a mask in pending_mask
   * for rewind to set; rewind sets it back to 0 when it sets the mask. */
  uint32_t mask_pending;
  uint32_t pad1;
  uint64_t pending_mask;
};

/* One buffered syscall; records are packed from RWD_DATA_OFFSET, each 8-byte aligned. */
struct rwd_record {
  uint32_t size;  /* bytes of this record with its data, a multiple of 8 */
  uint32_t nr;    /* syscall number */
  int64_t result; /* rax after the syscall */
  /* followed by the out-data the kernel wrote (the syscall's out-parameter), size - 16 bytes
   * rounded up */
};

/* Whether code at `rip` runs inside a buffered call, where a task's state differs between
 * record and replay (a record placed and not yet committed): on the untraced page, or in the
 * library's section rwd_defer, [defer_start, defer_end), which the task announces when it
 * registers its buffer (0, 0: none). The recorder records no point there; replay takes no
 * checkpoint there. */
static inline int rwd_in_buffered_call_code(uint64_t rip, uint64_t defer_start,
                                            uint64_t defer_end) {
  return (rip >= RWD_UNTRACED_PAGE && rip < RWD_UNTRACED_PAGE + 4096) ||
         (rip >= defer_start && rip < defer_end);
}

#endif

#define RWD_RECORD_HEADER 16

#endif
