// A process that shares its parent's memory (issue 31): clone(2) with CLONE_VM but neither
// CLONE_THREAD nor CLONE_VFORK, as some runtimes' spawn helpers do. The child has its own pid
// and its own descriptor table, but every write of one is seen by the other.
//   clone_vm turns   parent and child take turns through two pipes, each adding to a shared
//                    counter; then both spin on a second shared counter at the same time
//                    (its total depends on how they interleaved); the parent waits for the
//                    child's exit status
//   clone_vm exec    the child writes into the shared memory, then execs this program
//                    again ("clone_vm after"), which leaves the parent's memory alone
//   clone_vm shared  LinuxThreads' way: CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND;
//                    the child opens a pipe the parent then reads (one descriptor table),
//                    installs a SIGUSR1 handler, and signals the parent, which runs it (one
//                    handler table)
// Lines that do not depend on the interleaving are the same natively and recorded; the racy
// total must be the same in every replay of one recording.
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kRounds = 5, kStack = 256 * 1024 };
// Thousands of increments each process makes to the racy total. The random walk's build
// (not position-independent, where a preemption point in this loop is found by a stop at
// every pass) makes fewer.
#ifndef SPIN_ROUNDS
#define SPIN_ROUNDS 20000
#endif

static volatile long turns_total;  // written by both, one at a time
static volatile long racy_total;   // written by both at once
static volatile int child_done_spinning;
static int to_child[2], to_parent[2];
static char self[4096];
static int child_pipe[2] = {-1, -1};
static volatile sig_atomic_t handled;

// write(2) of a formatted line: stdio's buffers would be shared by both processes.
static void say(const char* fmt, long a, long b) {
  char line[160];
  int n = snprintf(line, sizeof line, fmt, a, b);
  if (write(1, line, (size_t)n) != n) _exit(3);
}

static void spin(int rounds) {
  for (int i = 0; i < rounds; ++i)
    for (int k = 0; k < 1000; ++k) racy_total = racy_total + 1;  // not atomic on purpose
}

static int child_turns(void* arg) {
  (void)arg;
  for (int i = 0; i < kRounds; ++i) {
    char c;
    if (read(to_child[0], &c, 1) != 1) return 20;
    turns_total += 10;
    say("child: round %ld, total %ld\n", i, turns_total);
    if (write(to_parent[1], "c", 1) != 1) return 21;
  }
  spin(SPIN_ROUNDS);
  child_done_spinning = 1;
  return 7;
}

static int child_exec(void* arg) {
  (void)arg;
  turns_total = 42;  // the parent sees it: the same memory until the exec
  char* argv[] = {self, "after", NULL};
  execv(self, argv);
  return 30;  // the exec failed
}

static void on_usr1(int sig) {
  handled = sig;
}

static int child_shared(void* arg) {
  (void)arg;
  if (pipe(child_pipe) != 0) return 40;
  if (write(child_pipe[1], "from the child", 14) != 14) return 41;
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return 42;
  if (kill(getppid(), SIGUSR1) != 0) return 43;
  return 9;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "after") == 0) {
    say("after exec: pid differs from the parent's: %ld (%ld)\n", getpid() != getppid(), 0);
    return 5;
  }
  const char* mode = argc > 1 ? argv[1] : "turns";
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 2;
  if (pipe(to_child) != 0 || pipe(to_parent) != 0) return 2;
  char* stack = mmap(NULL, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return 2;
  int (*fn)(void*) = strcmp(mode, "exec") == 0     ? child_exec
                     : strcmp(mode, "shared") == 0 ? child_shared
                                                   : child_turns;
  int flags = CLONE_VM | SIGCHLD;
  if (fn == child_shared) flags |= CLONE_FS | CLONE_FILES | CLONE_SIGHAND;
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, NULL);  // until the child's handler is in place
  pid_t child = clone(fn, stack + kStack, flags, NULL);
  if (child < 0) {
    perror("clone");
    return 2;
  }
  say("parent: child started, own pid %ld\n", child != getpid(), 0);
  if (fn == child_turns) {
    for (int i = 0; i < kRounds; ++i) {
      if (write(to_child[1], "p", 1) != 1) return 4;
      char c;
      if (read(to_parent[0], &c, 1) != 1) return 4;
      turns_total += 1;
      say("parent: round %ld, total %ld\n", i, turns_total);
    }
    spin(SPIN_ROUNDS);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 4;
  if (fn == child_shared) {
    sigprocmask(SIG_UNBLOCK, &usr1, NULL);  // the child's handler runs here
    char got[32] = {0};
    ssize_t n = child_pipe[0] >= 0 ? read(child_pipe[0], got, sizeof got - 1) : -1;
    char line[128];
    int len =
        snprintf(line, sizeof line, "parent: handler ran for signal %d, read %zd bytes (%s)\n",
                 (int)handled, n, got);
    if (write(1, line, (size_t)len) != len) return 4;
  }
  say("parent: child exited with %ld, total %ld\n", WEXITSTATUS(status), turns_total);
  if (fn == child_turns)
    say("racy total %ld (child done spinning: %ld)\n", racy_total, child_done_spinning);
  return 0;
}
