// Tracers that attach to a recorded process that is not their child, for programs.sh
// (ptrace_attach): every answer and stop they see, one line each, then "ptrace_attach done".
// Natively and recorded the lines must be the same.
//   1. A crash reporter's helper: the process forks a helper that attaches to it (its parent,
//      PTRACE_ATTACH) while the process waits for the helper's report on a pipe; the helper
//      reads a variable and the registers of the stopped process, detaches and reports.
//   2. A sibling: the process forks a worker that waits on a pipe, then a tracer that seizes
//      the worker (PTRACE_SEIZE), interrupts it in its read (PTRACE_INTERRUPT), reads and
//      writes its variable, lets it go on and follows it to its exit (PTRACE_O_TRACEEXIT),
//      then detaches; the parent reaps both.
//   3. A sibling that spins in user code, interrupted there by its tracer (PTRACE_INTERRUPT),
//      which writes the flag it waits for and detaches.
//   4. A child in a group-stop (it stopped itself with SIGSTOP), attached to by its parent
//      (PTRACE_ATTACH, as gdb attaches to a stopped process): the parent's wait reports the
//      stop at once, resuming it delivers the SIGSTOP the attach sent, and resumed without
//      that signal it runs to its end.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "show_call.h"

static volatile long secret = 42;

// Prints a wait status as a tracer reads it (`r`: what the wait returned).
static void show_status(const char* what, pid_t r, pid_t expected, int status) {
  if (r != expected)
    printf("%s: wait returned %d (%s)\n", what, r, r < 0 ? strerrorname_np(errno) : "other");
  else if (WIFSTOPPED(status))
    printf("%s: stopped by %s event %d\n", what, sigabbrev_np(WSTOPSIG(status)), status >> 16);
  else if (WIFEXITED(status))
    printf("%s: exited %d (%#x)\n", what, WEXITSTATUS(status), status);
  else
    printf("%s: killed by %s\n", what, sigabbrev_np(WTERMSIG(status)));
  fflush(stdout);
}

static void crash_reporter(void) {
  int report[2];
  if (pipe(report) != 0) exit(2);
  secret = 4242;
  const pid_t self = getpid();
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);  // Yama (ptrace_scope 1) lets the helper in
  pid_t helper = fork();
  if (helper == 0) {
    long r = ptrace(PTRACE_ATTACH, self, 0, 0);
    int status;
    pid_t w = waitpid(self, &status, __WALL);
    long seen = ptrace(PTRACE_PEEKDATA, self, (void*)&secret, 0);
    struct user_regs_struct regs;
    long g = ptrace(PTRACE_GETREGS, self, 0, &regs);
    long d = ptrace(PTRACE_DETACH, self, 0, 0);
    char line[200];
    int n = snprintf(line, sizeof line,
                     "helper: attach %ld, wait %s by %s, secret %ld, getregs %ld, detach %ld\n", r,
                     w == self ? "stopped" : "failed",
                     WIFSTOPPED(status) ? sigabbrev_np(WSTOPSIG(status)) : "?", seen, g, d);
    if (write(report[1], line, (size_t)n) != n) _exit(3);
    _exit(0);
  }
  close(report[1]);
  char buf[256];
  ssize_t n = read(report[0], buf, sizeof buf - 1);  // interrupted by the helper's SIGSTOP
  buf[n > 0 ? n : 0] = 0;
  printf("reporter got: %s", buf);
  int status;
  {
    pid_t w = waitpid(helper, &status, 0);
    show_status("helper", w, helper, status);
  }
}

static void sibling(void) {
  int go[2];
  if (pipe(go) != 0) exit(2);
  secret = 7;  // before the fork: the tracer may interrupt the worker before its first step
  pid_t worker = fork();
  if (worker == 0) {
    close(go[1]);
    char c;
    while (read(go[0], &c, 1) == 1) secret += c;  // until EOF
    _exit(secret == 7 + 3 * 'x' ? 5 : 6);
  }
  pid_t tracer = fork();
  if (tracer == 0) {
    close(go[1]);  // the worker's EOF comes when the parent closes its end
    show("seize the worker", ptrace(PTRACE_SEIZE, worker, 0, (void*)PTRACE_O_TRACEEXIT));
    show("interrupt", ptrace(PTRACE_INTERRUPT, worker, 0, 0));
    int status;
    {
      pid_t w = waitpid(worker, &status, __WALL);
      show_status("worker", w, worker, status);
    }
    printf("worker's secret: %ld\n", ptrace(PTRACE_PEEKDATA, worker, (void*)&secret, 0));
    fflush(stdout);
    show("poke", ptrace(PTRACE_POKEDATA, worker, (void*)&secret, (void*)7L));
    show("cont", ptrace(PTRACE_CONT, worker, 0, 0));
    {
      pid_t w = waitpid(worker, &status, __WALL);
      show_status("worker", w, worker, status);
    }
    unsigned long msg = 0;
    ptrace(PTRACE_GETEVENTMSG, worker, 0, &msg);
    printf("exit event message: %#lx\n", msg);
    show("detach", ptrace(PTRACE_DETACH, worker, 0, 0));
    _exit(0);
  }
  // The worker goes on only once the tracer holds it: three bytes, then EOF.
  usleep(100 * 1000);
  if (write(go[1], "xxx", 3) != 3) exit(3);
  close(go[1]);
  int status;
  {
    pid_t w = waitpid(tracer, &status, 0);
    show_status("tracer", w, tracer, status);
  }
  {
    pid_t w = waitpid(worker, &status, 0);
    show_status("worker", w, worker, status);
  }
}

// A worker that spins in user code until its sibling, a tracer, interrupts it there and
// writes the flag it waits for.
static void spinning_sibling(void) {
  static volatile long released;
  pid_t worker = fork();
  if (worker == 0) {
    unsigned long spins = 0, mix = 1;
    while (!released) {  // a body long enough for a trampoline between its jumps
      mix = mix * 6364136223846793005ul + 1442695040888963407ul;
      mix ^= mix >> 29;
      spins += mix & 1;
    }
    _exit((int)released);
  }
  pid_t tracer = fork();
  if (tracer == 0) {
    usleep(50 * 1000);  // the worker spins by now
    show("seize the spinning worker", ptrace(PTRACE_SEIZE, worker, 0, 0));
    show("interrupt it", ptrace(PTRACE_INTERRUPT, worker, 0, 0));
    int status;
    pid_t w = waitpid(worker, &status, __WALL);
    show_status("spinning worker", w, worker, status);
    show("release it", ptrace(PTRACE_POKEDATA, worker, (void*)&released, (void*)9L));
    show("detach", ptrace(PTRACE_DETACH, worker, 0, 0));
    _exit(0);
  }
  int status;
  pid_t w = waitpid(tracer, &status, 0);
  show_status("tracer", w, tracer, status);
  w = waitpid(worker, &status, 0);
  show_status("spinning worker", w, worker, status);
}

// A child that stopped itself (a group-stop), then attached to by its parent.
static void stopped_child(void) {
  static volatile long mark = 7;
  pid_t child = fork();
  if (child == 0) {
    mark = 8;
    raise(SIGSTOP);
    _exit((int)mark);
  }
  int status;
  pid_t w = waitpid(child, &status, WUNTRACED);
  show_status("stopped child, before the attach", w, child, status);
  show("attach to it", ptrace(PTRACE_ATTACH, child, 0, 0));
  w = waitpid(child, &status, 0);
  show_status("stopped child", w, child, status);
  errno = 0;
  long m = ptrace(PTRACE_PEEKDATA, child, (void*)&mark, 0);
  printf("its mark: %ld (errno %d)\n", m, errno);
  show("let it have the attach's SIGSTOP", ptrace(PTRACE_CONT, child, 0, 0));
  w = waitpid(child, &status, 0);
  show_status("stopped child", w, child, status);
  show("set its mark", ptrace(PTRACE_POKEDATA, child, (void*)&mark, (void*)11L));
  show("resume it without the signal", ptrace(PTRACE_CONT, child, 0, 0));
  w = waitpid(child, &status, 0);
  show_status("stopped child", w, child, status);
}

int main(void) {
  setvbuf(stdout, 0, _IOLBF, 0);
  crash_reporter();
  sibling();
  spinning_sibling();
  stopped_child();
  printf("ptrace_attach done\n");
  return 0;
}
