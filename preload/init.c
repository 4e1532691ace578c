/* librewind_preload.so start-up: runs in every process rewind records (LD_PRELOAD), maps the
 * untraced syscall page, registers the main thread's buffer and patches libc's syscall
 * sites. Any step that fails leaves the library off: every syscall stays traced. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "preload.h"

static void parse_outputs(const char* s) {
  /* "DEV:INO,DEV:INO" in decimal, set by the recorder. */
  for (int i = 0; s && *s && i < 2; ++i) {
    char* end;
    uint64_t dev = strtoull(s, &end, 10);
    if (*end != ':') return;
    uint64_t ino = strtoull(end + 1, &end, 10);
    rwd_set_output_file(i, dev, ino);
    if (*end != ',') return;
    s = end + 1;
  }
}

int rwd_page_ready;

static int map_untraced_page(void) {
  long p = rwd_traced_syscall(SYS_mmap, RWD_UNTRACED_PAGE, 4096, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p != RWD_UNTRACED_PAGE) return -1;
  /* syscall; ret, then int3 up to RWD_TRAP_SYSCALL_INSN's syscall; int3, and the two
   * privileged stubs' syscall; ret (rewind_preload_abi.h) */
  static const unsigned char code[] = {0x0f, 0x05, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0x0f,
                                       0x05, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0x0f, 0x05,
                                       0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0x0f, 0x05, 0xc3};
  _Static_assert(RWD_TRAP_SYSCALL_INSN - RWD_UNTRACED_PAGE == 8, "the stub's place");
  _Static_assert(RWD_PRIVILEGED_UNTRACED_INSN - RWD_UNTRACED_PAGE == 16, "the stub's place");
  _Static_assert(RWD_PRIVILEGED_TRACED_INSN - RWD_UNTRACED_PAGE == 24, "the stub's place");
  rwd_copy((void*)RWD_UNTRACED_PAGE, code, sizeof code);
  if (rwd_traced_syscall(SYS_mprotect, RWD_UNTRACED_PAGE, 4096, PROT_READ | PROT_EXEC, 0, 0, 0))
    return -1;
  rwd_page_ready = 1;
  return 0;
}

__attribute__((constructor)) static void rwd_init(void) {
  const char* off = getenv("REWIND_SYSCALL_BUFFER");
  if (off && off[0] == '0') return;
  if (map_untraced_page() != 0) return;
  parse_outputs(getenv("REWIND_OUTPUT_FILES"));
  const char* proc = getenv("REWIND_PROC_DEV");
  if (proc && *proc) rwd_set_proc_device(strtoull(proc, 0, 10));
  /* REWIND_DESCHED=0: no desched counters (calls that may block stay traced), as where
   * perf_event_open(2) is refused; for tests of that case. */
  const char* desched = getenv("REWIND_DESCHED");
  rwd_desched_off = desched && desched[0] == '0';
  rwd_thread_key_ready = pthread_key_create(&rwd_thread_key, rwd_thread_ended) == 0;
  if (rwd_register_thread(1) != 0) return;
  pthread_atfork(0, 0, rwd_forked_child);
  rwd_enabled = 1;
  /* On a stack of its own: the patching writes nothing on the program's stack (entry.S). */
  static unsigned char patch_stack[64 * 1024] __attribute__((aligned(16)));
  int sites = rwd_call_on_stack(rwd_patch_libc, patch_stack + sizeof patch_stack);
  /* The end of the stretch where a replay keeps breakpoints out (RWD_SYS_PATCHED). */
  rwd_library_syscall(RWD_SYS_PATCHED, sites, 0, 0, 0, 0, 0);
}
