/* librewind_preload.so's assembly: the entry that patched syscall sites jump to, the traced
 * and the buffered syscall primitives, and the area the per-site stubs are written into.
 * See preload/README.md for how a site is patched. The functions carry CFI, so that a
 * debugger unwinds out of them (the stubs have none: the unwinder knows their layout). */
#include "rewind_preload_abi.h"

/* struct rwd_commit (preload.h): the offsets of its fields. */
#define COMMIT_KEEP_MAX 0
#define COMMIT_RESULT_UNIT 8
#define COMMIT_TO_USER 16
#define COMMIT_OUT_ARG 24
#define COMMIT_IN_BYTES 32
#define COMMIT_DESCHED_FD 40
#define COMMIT_KEEP_BASE 48
#define COMMIT_PREPARE 56
#define COMMIT_FINISH 64
#define COMMIT_RUN_IN_REPLAY 80
/* ioctl(2) and the perf_event_open(2) requests the desched counter needs
 * (linux/perf_event.h: _IO('$', 0) and _IO('$', 1)). */
#define SYS_IOCTL 16
#define PERF_EVENT_IOC_ENABLE 0x2400
#define PERF_EVENT_IOC_DISABLE 0x2401

        .text

/* Loads a syscall's arguments from a call block {nr, a0..a5} (8 bytes each) at `base` into
 * rdi, rsi, rdx, r10, r8, r9; rdi last, so that `base` may be %rdi. */
        .macro load_syscall_args base
        mov 16(\base), %rsi
        mov 24(\base), %rdx
        mov 32(\base), %r10
        mov 40(\base), %r8
        mov 48(\base), %r9
        mov 8(\base), %rdi
        .endm

/* rwd_entry: called from a site's stub with the syscall's registers (rax = number, rdi, rsi,
 * rdx, r10, r8, r9 = arguments) and the red zone already skipped. Returns the result in rax
 * and every other register as a syscall leaves it, except rcx and r11, which are 0 (the
 * kernel's values there would differ between record and replay). */
        .globl rwd_entry
        .hidden rwd_entry
        .type rwd_entry, @function
rwd_entry:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        sub $64, %rsp
        and $-16, %rsp
        mov %rax, 0(%rsp)
        mov %rdi, 8(%rsp)
        mov %rsi, 16(%rsp)
        mov %rdx, 24(%rsp)
        mov %r10, 32(%rsp)
        mov %r8, 40(%rsp)
        mov %r9, 48(%rsp)
        mov %rsp, %rdi
        call rwd_hook
        load_syscall_args %rsp
        xor %ecx, %ecx
        xor %r11d, %r11d
        mov %rbp, %rsp
        pop %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size rwd_entry, .-rwd_entry

/* int rwd_call_on_stack(int (*fn)(void), void *stack_top): calls fn with rsp at stack_top
 * (16-byte aligned) and returns its result, rsp restored. The library's start-up work runs
 * there, so that it writes nothing on the program's stack: a data breakpoint on a local of
 * main, followed back to its earlier writes, does not stop at every call libc's patching
 * made (nor single-step through its scan to land on one). */
        .globl rwd_call_on_stack
        .hidden rwd_call_on_stack
        .type rwd_call_on_stack, @function
rwd_call_on_stack:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        mov %rsi, %rsp
        call *%rdi
        mov %rbp, %rsp
        pop %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size rwd_call_on_stack, .-rwd_call_on_stack

/* From a C call (nr, a0, ..., a5: rdi, rsi, rdx, rcx, r8, r9, the stack) to the registers
 * of a syscall (rax, rdi, rsi, rdx, r10, r8, r9). */
        .macro c_args_to_syscall
        mov %rdi, %rax
        mov %rsi, %rdi
        mov %rdx, %rsi
        mov %rcx, %rdx
        mov %r8, %r10
        mov %r9, %r8
        mov 8(%rsp), %r9
        .endm

/* long rwd_library_syscall(long nr, long a0, ..., long a5): a syscall of the library's own
 * that the recorder sees, made at the page's privileged traced stub once the page is ready
 * (a filter of the program's lets it pass: rewind_preload_abi.h), before that here. */
        .globl rwd_library_syscall
        .hidden rwd_library_syscall
        .type rwd_library_syscall, @function
rwd_library_syscall:
        .cfi_startproc
        c_args_to_syscall
        cmpl $0, rwd_page_ready(%rip)
        je 1f
        mov $RWD_PRIVILEGED_TRACED_INSN, %r11d
        /* The page's stub, reached from straight-line code, so that replay's reverse steps
         * find each instruction before it (pass_steps.cpp) */
        .globl rwd_library_jump
        .hidden rwd_library_jump
        .type rwd_library_jump, @function
rwd_library_jump:
        jmp *%r11                       /* its `ret` returns to our caller */
        /* never run: room for a counting trampoline's jump over the one above, made of
         * instructions it can move (a `syscall` it would not) */
        nop
        nop
        .size rwd_library_jump, .-rwd_library_jump
1:      syscall                         /* before the page exists */
        ret
        .cfi_endproc
        .size rwd_library_syscall, .-rwd_library_syscall

/* long rwd_traced_syscall(long nr, long a0, ..., long a5): a syscall the recorder sees.
 * Kept last in .text here: a signal that interrupts a traced call is delivered right after
 * its `syscall`, where the recorder's point needs room for a trampoline over this `ret` and
 * the padding after it (record_signal.cpp, deliver_signal); code after it would make the
 * recorder step the task instead, and a restarted call would run single-stepped. */
        .globl rwd_traced_syscall
        .hidden rwd_traced_syscall
        .type rwd_traced_syscall, @function
rwd_traced_syscall:
        .cfi_startproc
        c_args_to_syscall
        syscall
        ret
        .cfi_endproc
        .size rwd_traced_syscall, .-rwd_traced_syscall

/* long rwd_buffered_syscall(long call[7], struct rwd_buffer_header *hdr,
 *                           const struct rwd_commit *how)
 * call = {nr, a0..a5}. Places the call's record at hdr->pos (argument how->out_arg, unless it
 * is -1, is pointed at the record's data, after how->in_bytes of the caller's bytes are copied
 * there: poll's in-out array) and makes the call: recording, the syscall, from the untraced
 * page, with the desched counter how->desched_fd enabled around it unless that is -1;
 * replaying, the record's recorded result (after checking its number). Then, in both, fills
 * in the record's number, result and size, copies the out-data it keeps to how->to_user and
 * advances hdr->pos past it. A result of RWD_ABORTED (the recorder interrupted a call that
 * blocked; in replay, the trace's abort mark) abandons the record instead: hdr->pos stays,
 * and the caller makes the call traced. Both paths make the same memory writes and leave the
 * same registers, so that the code around them runs identically in record and replay. The
 * recorder never stops a task at a point inside the section rwd_defer (preload.h) or the
 * untraced page: a record is placed, consumed, committed and copied out with no point in
 * between (the recorder empties the buffer at its stops), so the records an event carries
 * are exactly those its task used before it, and no record's data is needed after its
 * event. */
        .section rwd_defer, "ax", @progbits
        .globl rwd_buffered_syscall
        .hidden rwd_buffered_syscall
        .type rwd_buffered_syscall, @function
rwd_buffered_syscall:
        .cfi_startproc
        push %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbx, 0
        push %r12
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r12, 0
        push %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        push %r14
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r14, 0
        push %r15
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r15, 0
        mov %rsi, %r12                  /* hdr */
        mov %rdx, %r13                  /* how */
        mov %rdi, %r15                  /* call */
        mov 0(%r12), %ebx
        lea RWD_DATA_OFFSET(%r12,%rbx), %rbx    /* rec = the data area + hdr->pos */
        mov COMMIT_OUT_ARG(%r13), %rax
        test %rax, %rax
        js 3f
        lea RWD_RECORD_HEADER(%rbx), %rdi       /* the record's data */
        mov 8(%r15,%rax,8), %rsi        /* the caller's pointer */
        mov %rdi, 8(%r15,%rax,8)        /* call[1 + out_arg] = the record's data */
        /* In-out parameters: the caller's bytes first, when recording (in replay the record
         * already holds what the kernel wrote back; the registers end the same either way). */
        mov COMMIT_IN_BYTES(%r13), %rcx
        xor %edx, %edx
        cmpl $0, RWD_CONTROL_OFFSET(%r12)
        cmovne %rdx, %rcx
        rep movsb
        /* The call's own preparation (readv's iovec, recvmsg's header in the record). */
3:      mov COMMIT_PREPARE(%r13), %rax
        test %rax, %rax
        jz 9f
        mov %r13, %rdi
        lea RWD_RECORD_HEADER(%rbx), %rsi
        mov %r15, %rdx
        mov RWD_CONTROL_OFFSET(%r12), %ecx
        call *%rax
9:      mov 0(%r15), %r14               /* the syscall number */
        /* A call that may block: enable the desched counter (recording). */
        mov COMMIT_DESCHED_FD(%r13), %rdi
        test %rdi, %rdi
        js 4f
        mov $PERF_EVENT_IOC_ENABLE, %esi
        call rwd_desched_ioctl
        movl $1, RWD_CONTROL_OFFSET+4(%r12)     /* desched_armed */
4:      mov %rbx, %r11
        mov $RWD_UNTRACED_PAGE, %ecx
        lea rwd_replay_result(%rip), %rax
        /* Replaying, the record's result, unless the call is made for real in replay too
         * (run_in_replay: the replayer runs it at the untraced page's instruction). */
        cmpq $0, COMMIT_RUN_IN_REPLAY(%r13)
        cmovne %rcx, %rax
        cmpl $0, RWD_CONTROL_OFFSET(%r12)
        cmovne %rax, %rcx
        mov %r14, %rax
        load_syscall_args %r15
        call *%rcx
        /* Disable the counter (recording), keeping the result and the argument registers (the
         * replay path leaves them as the call had them). */
        cmpq $0, COMMIT_DESCHED_FD(%r13)
        jl 6f
        push %rdi
        .cfi_adjust_cfa_offset 8
        push %rsi
        .cfi_adjust_cfa_offset 8
        mov %rax, %r15                  /* the call block is not needed any more */
        movl $0, RWD_CONTROL_OFFSET+4(%r12)     /* desched_armed */
        mov COMMIT_DESCHED_FD(%r13), %rdi
        mov $PERF_EVENT_IOC_DISABLE, %esi
        call rwd_desched_ioctl
        mov %r15, %rax
        pop %rsi
        .cfi_adjust_cfa_offset -8
        pop %rdi
        .cfi_adjust_cfa_offset -8
6:      cmp $RWD_ABORTED, %rax
        je 7f
        /* keep = 0 for an error (-4095..-1), else min(keep_base + result * result_unit,
         * keep_max), or keep_max when result_unit is 0 */
        xor %edx, %edx
        cmp $-4095, %rax
        jae 1f
        mov COMMIT_KEEP_MAX(%r13), %rdx
        mov COMMIT_RESULT_UNIT(%r13), %rcx
        test %rcx, %rcx
        je 1f
        imul %rax, %rcx
        add COMMIT_KEEP_BASE(%r13), %rcx
        cmp %rdx, %rcx
        cmovb %rcx, %rdx
1:      mov %r14d, 4(%rbx)
        mov %rax, 8(%rbx)
        lea RWD_RECORD_HEADER+7(%rdx), %r8
        and $-8, %r8
        mov %r8d, 0(%rbx)
        mov COMMIT_FINISH(%r13), %rcx
        test %rcx, %rcx
        jnz 10f
        mov COMMIT_TO_USER(%r13), %rdi
        test %rdi, %rdi
        jz 2f
        lea RWD_RECORD_HEADER(%rbx), %rsi
        mov %rdx, %rcx
        rep movsb
2:      mov 0(%r12), %ebx
        add %r8d, %ebx                  /* rbx = hdr->pos past this record */
        /* Replaying, a pause mark after this record: stop here (rewind_preload_abi.h,
         * RWD_SYS_PAUSE); the result waits in rbx, which rewind sets back. */
        cmpl $0, RWD_CONTROL_OFFSET(%r12)
        je 5f
        cmpl $RWD_PAUSE_MARK, RWD_DATA_OFFSET+4(%r12,%rbx)
        jne 5f
        mov %rax, %rbx
        mov $RWD_SYS_PAUSE, %eax
        syscall
        /* From here on both paths run the same instructions from the same registers; until
         * the store below, the record is not used yet (hdr->pos is the old one). */
5:      xor %ecx, %ecx
        xor %r11d, %r11d
        mov %ebx, 0(%r12)               /* the record is used */
8:      .cfi_remember_state
        pop %r15
        .cfi_adjust_cfa_offset -8
        pop %r14
        .cfi_adjust_cfa_offset -8
        pop %r13
        .cfi_adjust_cfa_offset -8
        pop %r12
        .cfi_adjust_cfa_offset -8
        pop %rbx
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_restore_state
        /* Abandoned: the record is not used; the caller makes the call traced. */
7:      xor %ecx, %ecx
        xor %edx, %edx                  /* the recording's ioctl cleared it */
        xor %r11d, %r11d
        jmp 8b
        /* The call's own copy to the caller (readv's scatter): finish(how, data, keep). The
         * result waits in r15 (the call block is not needed any more); r8 is the record's
         * size, read back from the record. */
10:     mov %rax, %r15
        mov %r13, %rdi
        lea RWD_RECORD_HEADER(%rbx), %rsi
        call *%rcx
        mov %r15, %rax
        mov 0(%rbx), %r8d
        jmp 2b
        .cfi_endproc
        .size rwd_buffered_syscall, .-rwd_buffered_syscall

/* rwd_desched_ioctl: recording, ioctl(rdi, esi, 0) through the untraced page (enabling or
 * disabling the desched counter); replaying, nothing, through the same calls, so that the
 * stack holds the same return addresses (the memory digests of later points cover it).
 * Expects r12 = the buffer header. Clobbers rax, rcx, rdx, r11. */
        .type rwd_desched_ioctl, @function
rwd_desched_ioctl:
        .cfi_startproc
        xor %edx, %edx
        mov $RWD_PRIVILEGED_UNTRACED_INSN, %ecx
        lea rwd_replay_nothing(%rip), %rax
        cmpl $0, RWD_CONTROL_OFFSET(%r12)
        cmovne %rax, %rcx
        mov $SYS_IOCTL, %eax
        jmp *%rcx                       /* its `ret` returns to our caller */
        .cfi_endproc
        .size rwd_desched_ioctl, .-rwd_desched_ioctl

        .type rwd_replay_nothing, @function
rwd_replay_nothing:
        .cfi_startproc
        ret
        .cfi_endproc
        .size rwd_replay_nothing, .-rwd_replay_nothing

        .type rwd_replay_result, @function
rwd_replay_result:
        .cfi_startproc
        cmp 4(%r11), %eax
        jne 1f
        mov 8(%r11), %rax
        ret
1:      mov %eax, %edi
        mov 4(%r11), %esi
        mov $RWD_SYS_DIVERGED, %eax
        syscall
        ud2
        .cfi_endproc
        .size rwd_replay_result, .-rwd_replay_result

/* Room for the per-site stubs (preload/patch.c writes them at start-up). It sits in this
 * library's text, which the loader places near libc, so that a site's 32-bit jump reaches. */
        .section .text.rwd_stubs, "ax", @progbits
        .balign 4096
        .globl rwd_stub_area
        .hidden rwd_stub_area
        .type rwd_stub_area, @object    /* a sized symbol: debuggers find the stubs by it */
rwd_stub_area:
/* Call frame information for a debugger stopped inside the library (gdb's backtrace from
 * rwd_entry): while a stub's `call rwd_entry` runs, the program's frame has rsp 128 bytes
 * above the stub's (the red zone, put_entry_call in patch.c) and goes on after the syscall
 * instruction the stub stands for, whose address the stub keeps at RWD_STUB_SITE_OFFSET.
 * The return address into the stub tells its kind by the byte 8 past it (after the `lea`
 * that restores rsp): `jmp rel8` (0xeb) in write_stub's layout, whose site word lies 35
 * bytes on, else write_mov_stub's, 57 bytes on. The rule holds at that return address only
 * (a debugger stepping through a stub's own instructions is not shown the program). */
        .cfi_startproc
        .cfi_def_cfa %rsp, 128
        /* DW_CFA_val_expression rip: breg16(8); deref_size 1; const1u 0xeb; eq; bra +5;
         * breg16(57); skip +2; breg16(35); deref; plus_uconst 2 (DWARF 5, 6.4.2 and 2.5) */
        .cfi_escape 0x16, 0x10, 20, 0x80, 0x08, 0x94, 0x01, 0x08, 0xeb, 0x29, 0x28, 0x05, 0x00, 0x80, 0x39, 0x2f, 0x02, 0x00, 0x80, 0x23, 0x06, 0x23, 0x02
        .fill 65536, 1, 0xcc
        .cfi_endproc
        .size rwd_stub_area, .-rwd_stub_area
        .globl rwd_stub_area_end
        .hidden rwd_stub_area_end
rwd_stub_area_end:

        .section .note.GNU-stack, "", @progbits
