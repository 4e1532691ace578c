/* Descriptor numbers that change meaning where librewind_preload.so cannot see it: each case
 * first writes a regular file through descriptor N (the library learns "regular"), then makes
 * N name the program's stdout by a path the library does not see, then writes a line through N.
 * That line must stay a traced write (replay prints it again), so replay's stdout must equal
 * the recording's. Cases:
 * - raw: N closed by a `syscall` instruction of this program (not patched), then dup(1);
 * - vfork: a vfork child points its fd 1 at a regular file and writes to it (the library's
 *   memory is its parent's), then execs (or exits); the parent writes to its own fd 1 as soon
 *   as it runs again;
 * - unshare: a thread unshares its descriptor table (unshare(2), CLONE_FILES) and makes its N
 *   stdout, after the main thread wrote its N (still the file);
 * - clone_files: a child process sharing the table, not the memory (clone(2), CLONE_FILES),
 *   makes N stdout; the parent then writes N.
 * Usage: fd_tables; prints one line per case, the same natively and recorded. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(int fd, const char* s) {
  if (write(fd, s, strlen(s)) != (ssize_t)strlen(s)) _exit(3);
}

/* A scratch regular file, already unlinked, written once through the library. */
static int scratch_file(void) {
  char path[] = "/tmp/rewind-fd-tables-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    exit(2);
  }
  unlink(path);
  say(fd, "scratch\n");
  return fd;
}

/* close(2) by this program's own `syscall` instruction, which the library does not patch. */
static long raw_close(long fd) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_close), "D"(fd) : "rcx", "r11", "memory");
  return r;
}

static void case_raw(void) {
  int f = scratch_file();
  if (raw_close(f) != 0) _exit(4);
  int d = dup(1);
  if (d != f) {
    printf("raw: dup gave %d, not %d\n", d, f);
    exit(5);
  }
  say(d, "raw: written through the reused descriptor\n");
  close(d);
}

static void case_vfork(int exec) {
  int f = scratch_file();
  say(1, "vfork: before\n");
  pid_t c = vfork();
  if (c == 0) {
    dup2(f, 1);
    if (write(1, "x", 1) != 1) _exit(1);
    if (exec) execl("/bin/true", "true", (char*)0);
    _exit(0);
  }
  say(1, "vfork: the parent's stdout after its child's\n");
  int st;
  waitpid(c, &st, 0);
  char b = 0;
  if (pread(f, &b, 1, 8) != 1) _exit(7);
  printf("vfork: the child wrote %c into the file and %s\n", b, exec ? "exec'd" : "exited");
  fflush(stdout);
  close(f);
}

static pthread_barrier_t barrier;
static int unshare_fd;

static void* unshare_thread(void* arg) {
  (void)arg;
  if (unshare(CLONE_FILES) != 0) {
    perror("unshare");
    exit(8);
  }
  close(unshare_fd);
  int d = dup(1);
  pthread_barrier_wait(&barrier); /* the main thread writes its own unshare_fd */
  pthread_barrier_wait(&barrier);
  if (d != unshare_fd) {
    printf("unshare: dup gave %d, not %d\n", d, unshare_fd);
    exit(9);
  }
  say(d, "unshare: the thread's descriptor is its stdout\n");
  return 0;
}

static void case_unshare(void) {
  unshare_fd = scratch_file();
  pthread_barrier_init(&barrier, 0, 2);
  pthread_t th;
  pthread_create(&th, 0, unshare_thread, 0);
  pthread_barrier_wait(&barrier);
  say(unshare_fd, "main's file\n");
  pthread_barrier_wait(&barrier);
  pthread_join(th, 0);
  close(unshare_fd);
}

static int clone_fd;

static int clone_child(void* arg) {
  (void)arg;
  close(clone_fd);
  return dup(1) == clone_fd ? 0 : 1;
}

static void case_clone_files(void) {
  clone_fd = scratch_file();
  static char stack[64 * 1024] __attribute__((aligned(16)));
  pid_t c = clone(clone_child, stack + sizeof stack, CLONE_FILES | SIGCHLD, 0);
  if (c < 0) {
    perror("clone");
    exit(10);
  }
  int st;
  waitpid(c, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    printf("clone_files: the child's dup did not give %d\n", clone_fd);
    exit(11);
  }
  say(clone_fd, "clone_files: the parent's descriptor is stdout now\n");
  close(clone_fd);
}

static void case_repeat(void) {
  int f = scratch_file();
  for (int i = 0; i < 100; ++i) say(f, "line\n");
  printf("repeat: %ld bytes written\n", (long)lseek(f, 0, SEEK_CUR));
  fflush(stdout);
  close(f);
}

int main(void) {
  case_repeat(); /* first: the last case turns the cache off for good */
  case_raw();
  case_vfork(0);
  case_vfork(1);
  case_unshare();
  case_clone_files();
  say(1, "fd_tables done\n");
  return 0;
}
