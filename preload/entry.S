/* librewind_preload.so's assembly: the entry that patched syscall sites jump to, the traced
 * and the buffered syscall primitives, and the area the per-site stubs are written into.
 * See preload/README.md for how a site is patched. */
#include "rewind_preload_abi.h"

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
        push %rbp
        mov %rsp, %rbp
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
        ret
        .size rwd_entry, .-rwd_entry

/* long rwd_traced_syscall(long nr, long a0, ..., long a5): a syscall the recorder sees. */
        .globl rwd_traced_syscall
        .hidden rwd_traced_syscall
        .type rwd_traced_syscall, @function
rwd_traced_syscall:
        mov %rdi, %rax
        mov %rsi, %rdi
        mov %rdx, %rsi
        mov %rcx, %rdx
        mov %r8, %r10
        mov %r9, %r8
        mov 8(%rsp), %r9
        syscall
        ret
        .size rwd_traced_syscall, .-rwd_traced_syscall

/* long rwd_buffered_syscall(const long call[7], struct rwd_record *rec,
 *                           const struct rwd_buffer_header *hdr)
 * call = {nr, a0..a5}. Recording: the syscall, made from the untraced page. Replaying: the
 * recorded result of `rec` (after checking its number). Both paths make the same stack
 * writes and leave the same registers, so that the code around them runs identically in
 * record and replay. The recorder never stops a task at a point inside [rwd_defer_start,
 * rwd_defer_end) or the untraced page. */
        .globl rwd_buffered_syscall
        .hidden rwd_buffered_syscall
        .globl rwd_defer_start
        .hidden rwd_defer_start
        .type rwd_buffered_syscall, @function
rwd_defer_start:
rwd_buffered_syscall:
        mov %rsi, %r11
        mov $RWD_UNTRACED_PAGE, %ecx
        lea rwd_replay_result(%rip), %rax
        cmpl $0, RWD_CONTROL_OFFSET(%rdx)
        cmovne %rax, %rcx
        mov 0(%rdi), %rax
        load_syscall_args %rdi
        call *%rcx
        xor %ecx, %ecx
        xor %r11d, %r11d
        ret
        .size rwd_buffered_syscall, .-rwd_buffered_syscall

        .type rwd_replay_result, @function
rwd_replay_result:
        cmp 4(%r11), %eax
        jne 1f
        mov 8(%r11), %rax
        ret
1:      mov %eax, %edi
        mov 4(%r11), %esi
        mov $RWD_SYS_DIVERGED, %eax
        syscall
        ud2
        .size rwd_replay_result, .-rwd_replay_result
        .globl rwd_defer_end
        .hidden rwd_defer_end
rwd_defer_end:

/* Room for the per-site stubs (preload/patch.c writes them at start-up). It sits in this
 * library's text, which the loader places near libc, so that a site's 32-bit jump reaches. */
        .section .text.rwd_stubs, "ax", @progbits
        .balign 4096
        .globl rwd_stub_area
        .hidden rwd_stub_area
rwd_stub_area:
        .fill 65536, 1, 0xcc
        .globl rwd_stub_area_end
        .hidden rwd_stub_area_end
rwd_stub_area_end:

        .section .note.GNU-stack, "", @progbits
