/* Internal declarations shared by the library's C files and entry.S. */
#ifndef REWIND_PRELOAD_H
#define REWIND_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "rewind_preload_abi.h"

#define RWD_HIDDEN __attribute__((visibility("hidden")))

/* entry.S */
RWD_HIDDEN long rwd_traced_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
/* Where rwd_buffered_syscall points the call's out-parameter, what it keeps of the out-data
 * the kernel wrote into the record, and where it copies it (entry.S reads the fields at
 * offsets 0, 8, 16 and 24). */
struct rwd_commit {
  uint64_t keep_max;       /* bytes at most (0: the call has no out-parameter) */
  uint64_t keep_is_result; /* 1: the result says how many bytes were written */
  void* to_user;           /* where the caller wants them, or 0 */
  int64_t out_arg;         /* the argument (0-5) that points at the out-data, or -1 */
};
RWD_HIDDEN long rwd_buffered_syscall(long call[7], struct rwd_buffer_header* hdr,
                                     const struct rwd_commit* how);
RWD_HIDDEN void rwd_entry(void);
extern char rwd_defer_start[] RWD_HIDDEN, rwd_defer_end[] RWD_HIDDEN;
extern unsigned char rwd_stub_area[] RWD_HIDDEN, rwd_stub_area_end[] RWD_HIDDEN;

/* patch.c: redirects libc's syscall sites to rwd_entry. Returns how many were patched. */
RWD_HIDDEN int rwd_patch_libc(void);

/* hook.c: called by rwd_entry with {nr, a0..a5}; returns the syscall's result. */
RWD_HIDDEN long rwd_hook(const long call[7]);
/* hook.c: 1 when syscall nr may be buffered (under some conditions): a site that makes only
 * this syscall is worth patching. */
RWD_HIDDEN int rwd_may_buffer(long nr);
/* hook.c: registers the calling thread's buffer; 0 when rewind took it. */
RWD_HIDDEN int rwd_register_thread(void);
/* hook.c: 1 once the library is active in this process. */
extern int rwd_enabled RWD_HIDDEN;
/* hook.c: the files behind the recorder's stdout and stderr (their writes stay traced, so
 * that replay can print them again). */
RWD_HIDDEN void rwd_set_output_file(int i, uint64_t dev, uint64_t ino);

/* Copies n bytes (rep movsb; no libc call, no vector registers). */
static inline void rwd_copy(void* dst, const void* src, size_t n) {
  __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

#endif
