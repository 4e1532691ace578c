# A loop that jumps into the bytes a point trampoline patches (engine/replay/point_trampoline.h):
# 2-byte instructions with a jump to every other one, so that a 5-byte jump at most of them
# covers a jump target. Used by tests/programs/spin_loops.c (recorded and replayed) and by
# tests/unit/point_trampoline_test.cpp (run in-process with a trampoline it installs).
#
# uint64_t jumpy_loop(uint64_t n): runs n passes and returns n. It zeroes every other
# general-purpose register first, so that two calls from the same place pass jumpy_loop_point
# with the same registers. It sits in a page of its own: the unit test writes into it.
        .section .text.jumpy_loop, "ax", @progbits
        .balign 4096
        .globl jumpy_loop
        .type jumpy_loop, @function
jumpy_loop:
        push %rbx
        push %rbp
        push %r12
        push %r13
        push %r14
        push %r15
        xor %eax, %eax
        xor %ecx, %ecx
        xor %edx, %edx
        xor %ebx, %ebx
        xor %ebp, %ebp
        xor %esi, %esi
        xor %r8d, %r8d
        xor %r9d, %r9d
        xor %r10d, %r10d
        xor %r11d, %r11d
        xor %r12d, %r12d
        xor %r13d, %r13d
        xor %r14d, %r14d
        xor %r15d, %r15d
1:
        .globl jumpy_loop_point
jumpy_loop_point:
        inc %eax
        jmp 2f          # to the next instruction: inside a patch at jumpy_loop_point
2:
        inc %ecx
        jmp 3f
3:
        cmp %edi, %eax
        jb 1b
        mov %ecx, %eax
        pop %r15
        pop %r14
        pop %r13
        pop %r12
        pop %rbp
        pop %rbx
        ret
        .size jumpy_loop, . - jumpy_loop
        .balign 4096

        .section .note.GNU-stack, "", @progbits
