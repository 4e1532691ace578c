/* Internal declarations shared by the library's C files and entry.S. */
#ifndef REWIND_PRELOAD_H
#define REWIND_PRELOAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rewind_preload_abi.h"

#define RWD_HIDDEN __attribute__((visibility("hidden")))

/* entry.S */
RWD_HIDDEN long rwd_traced_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
/* The same for the library's own calls: at the page's privileged traced stub once
 * rwd_page_ready (rewind_preload_abi.h, RWD_PRIVILEGED_TRACED_INSN). */
RWD_HIDDEN long rwd_library_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
/* 1 once the untraced page holds its stubs (init.c). */
extern int rwd_page_ready RWD_HIDDEN;
/* How rwd_buffered_syscall makes a call (entry.S reads the fields at offsets 0, 8, ... 80):
 * where it points the call's out-parameter, what it keeps of the out-data the kernel wrote
 * into the record, where it copies that, and the desched counter it enables around it. */
struct rwd_commit {
  uint64_t keep_max;    /* bytes at most (0: the call has no out-parameter) */
  uint64_t result_unit; /* 0: keep_max bytes; N: keep_base + result * N bytes, at most
                         * keep_max */
  void* to_user;        /* where the caller wants them, or 0 */
  int64_t out_arg;      /* the argument (0-5) that points at the out-data, or -1 */
  uint64_t in_bytes;    /* bytes of the caller's out-parameter copied into the record before
                         * the call (the kernel reads them: poll's array), or 0 */
  int64_t desched_fd;   /* recording: the counter enabled around the call, or -1 */
  uint64_t keep_base;   /* bytes kept before the result's (recvmsg's header and address) */
  /* Called with the record's data before the call, in record and replay (replaying: 1 when
   * replaying), to point the call's arguments into the record; or 0. */
  void (*prepare)(const struct rwd_commit* how, void* data, long call[7], int replaying);
  /* Called with the record's data and the bytes kept, instead of the copy to to_user, to
   * hand the out-data to the caller; or 0. */
  void (*finish)(const struct rwd_commit* how, const void* data, uint64_t kept);
  void* ctx; /* what prepare and finish need */
  /* 1: replaying, the call is made for real through the untraced page as when recording
   * (the replayer runs it there: rewind_preload_abi.h, RWD_UNTRACED_PAGE); 0: its result is
   * read from the record. */
  uint64_t run_in_replay;
};
/* prepare and finish run inside rwd_buffered_syscall's record (no point may fall there), so
 * they live in the section "rwd_defer" with it; [__start_rwd_defer, __stop_rwd_defer) is the
 * range the recorder never stops a task at a point in. They call nothing outside it. */
#define RWD_DEFERRED __attribute__((section("rwd_defer"), noinline))
RWD_HIDDEN long rwd_buffered_syscall(long call[7], struct rwd_buffer_header* hdr,
                                     const struct rwd_commit* how);
RWD_HIDDEN void rwd_entry(void);
extern char __start_rwd_defer[] RWD_HIDDEN, __stop_rwd_defer[] RWD_HIDDEN;
extern unsigned char rwd_stub_area[] RWD_HIDDEN, rwd_stub_area_end[] RWD_HIDDEN;

/* entry.S: calls fn on the stack whose top is stack_top (16-byte aligned); returns its
 * result. */
RWD_HIDDEN int rwd_call_on_stack(int (*fn)(void), void* stack_top);
/* patch.c: redirects libc's syscall sites to rwd_entry. Returns how many were patched. */
RWD_HIDDEN int rwd_patch_libc(void);

/* hook.c: called by rwd_entry with {nr, a0..a5}; returns the syscall's result. */
RWD_HIDDEN long rwd_hook(const long call[7]);
/* rules.c: 1 when syscall nr may be buffered (under some conditions): a site that makes only
 * this syscall is worth patching. */
RWD_HIDDEN int rwd_may_buffer(long nr);
/* hook.c: registers the calling thread's buffer; 0 when rewind took it. `patch_follows`:
 * the caller patches libc next and then makes RWD_SYS_PATCHED (RWD_FEATURE_PATCH_END). */
RWD_HIDDEN int rwd_register_thread(int patch_follows);
/* hook.c: after fork(3), in the child (pthread_atfork): the inherited desched counter belongs
 * to the parent's thread. */
RWD_HIDDEN void rwd_forked_child(void);
/* hook.c: the key whose destructor (pthread_key_create(3)) closes a thread's desched counter
 * when the thread ends, so that a program that starts and ends threads all its life does not
 * collect one descriptor per thread; rwd_thread_key_ready once it exists. A thread that ends
 * without libc (a raw clone's exit) keeps its counter open. */
extern pthread_key_t rwd_thread_key RWD_HIDDEN;
extern int rwd_thread_key_ready RWD_HIDDEN;
RWD_HIDDEN void rwd_thread_ended(void* unused);
/* hook.c: 1 when threads open no desched counter (REWIND_DESCHED=0). */
extern int rwd_desched_off RWD_HIDDEN;
/* hook.c: 1 once the library is active in this process. */
extern int rwd_enabled RWD_HIDDEN;
/* hook.c: the files behind the recorder's stdout and stderr (their writes stay traced, so
 * that replay can print them again). */
RWD_HIDDEN void rwd_set_output_file(int i, uint64_t dev, uint64_t ino);
/* The device of the recorder's /proc: writes into its files stay traced (a write into
 * /proc/PID/mem changes a process's memory, which the recorder keeps for replay). */
RWD_HIDDEN void rwd_set_proc_device(uint64_t dev);

/* Copies n bytes (rep movsb; no libc call, no vector registers). */
static inline void rwd_copy(void* dst, const void* src, size_t n) {
  __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

#endif
