// A tracer inside a PID namespace (CLONE_NEWPID), as a sandbox's crash reporter or `strace`
// run by `unshare --pid --fork` is: every number it gives and gets is its namespace's, where
// it is pid 1 and its tracee pid 2. The tracer names its tracee by that number to ptrace,
// waitpid and waitid; reads the fork event's new pid (PTRACE_GETEVENTMSG) and follows the new
// child (pid 3) by its number; peeks, pokes and writes with process_vm_writev into its tracee
// by number; and seizes a sleeping child (pid 4) by its number. It keeps what it saw and prints
// it once every tracee has ended, so that the output's order is the same in every run.
// programs.sh ptrace_pidns compares the output with a native run's. Prints
// "no PID namespaces" where the kernel refuses one.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static char seen[4096];  // the tracer's lines, printed at its end

static void note(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t n = strlen(seen);
  vsnprintf(seen + n, sizeof seen - n, fmt, ap);
  va_end(ap);
}

static volatile long secret = 1111;           // peeked, then poked by the tracer
static char message[32] = "not written yet";  // written by process_vm_writev

static int tracee(void) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) return 10;
  raise(SIGSTOP);
  printf("tracee: pid %d, secret %ld, message \"%s\"\n", getpid(), secret, message);
  pid_t c = fork();
  if (c == 0) _exit(5);
  int status = 0;
  pid_t w = waitpid(c, &status, 0);
  printf("tracee: forked %d, reaped %d with exit %d\n", c, w, WEXITSTATUS(status));
  return 7;
}

// Waits for `pid` (its number here) and notes what came.
static int wait_for(pid_t pid, const char* what) {
  int status = 0;
  pid_t w = waitpid(pid, &status, __WALL);
  if (w < 0) {
    note("%s: waitpid(%d) failed: %s\n", what, pid, strerror(errno));
    return -1;
  }
  if (WIFSTOPPED(status))
    note("%s: waitpid -> %d stopped by %d, event %d\n", what, w, WSTOPSIG(status), status >> 16);
  else if (WIFEXITED(status))
    note("%s: waitpid -> %d exited %d\n", what, w, WEXITSTATUS(status));
  else
    note("%s: waitpid -> %d status %#x\n", what, w, status);
  return status;
}

static int tracer(void) {
  note("tracer: pid %d\n", getpid());
  pid_t t = fork();
  if (t == 0) _exit(tracee());
  wait_for(t, "SIGSTOP");
  siginfo_t si;
  if (ptrace(PTRACE_GETSIGINFO, t, 0, &si) == 0)
    note("its siginfo: signal %d from pid %d\n", si.si_signo, si.si_pid);
  long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEEXIT;
  note("SETOPTIONS: %ld\n", ptrace(PTRACE_SETOPTIONS, t, 0, opts));
  errno = 0;
  long word = ptrace(PTRACE_PEEKDATA, t, &secret, 0);
  note("PEEKDATA secret: %ld (%s)\n", word, errno ? strerror(errno) : "ok");
  note("POKEDATA: %ld\n", ptrace(PTRACE_POKEDATA, t, &secret, (void*)2222));
  char text[32] = "written by pid 1";
  struct iovec local = {text, sizeof text}, remote = {message, sizeof message};
  note("process_vm_writev: %zd\n", process_vm_writev(t, &local, 1, &remote, 1, 0));
  struct user_regs_struct regs;
  note("GETREGS: %ld\n", ptrace(PTRACE_GETREGS, t, 0, &regs));
  long cont = ptrace(PTRACE_CONT, 99, 0, 0);  // no such task here
  note("PTRACE_CONT of pid 99: %ld (%s)\n", cont, strerror(errno));
  ptrace(PTRACE_CONT, t, 0, 0);
  int status = wait_for(t, "fork");
  unsigned long msg = 0;
  ptrace(PTRACE_GETEVENTMSG, t, 0, &msg);
  note("fork event's new pid: %lu\n", msg);
  pid_t c = (pid_t)msg;
  (void)status;
  wait_for(c, "new child");  // its SIGSTOP, as a followed task
  ptrace(PTRACE_CONT, c, 0, 0);
  ptrace(PTRACE_CONT, t, 0, 0);
  wait_for(c, "child's exit");
  ptrace(PTRACE_GETEVENTMSG, c, 0, &msg);
  note("its exit event's status: %#lx\n", msg);
  ptrace(PTRACE_CONT, c, 0, 0);
  wait_for(c, "child's end");
  wait_for(t, "tracee's SIGCHLD");  // for its child's end, while it waited for it
  ptrace(PTRACE_CONT, t, 0, SIGCHLD);
  siginfo_t end;  // its exit's event stop: waitid reports a tracee's stops without WSTOPPED
  memset(&end, 0, sizeof end);
  if (waitid(P_PID, t, &end, WEXITED) == 0)
    note("waitid: pid %d code %d status %#x\n", end.si_pid, end.si_code, end.si_status);
  ptrace(PTRACE_GETEVENTMSG, t, 0, &msg);
  note("its exit event's status: %#lx\n", msg);
  ptrace(PTRACE_CONT, t, 0, 0);
  wait_for(t, "tracee's end");
  // A sleeping child, seized by its number and interrupted.
  pid_t s = fork();
  if (s == 0) {
    for (;;) pause();
  }
  note("PTRACE_SEIZE %d: %ld\n", s, ptrace(PTRACE_SEIZE, s, 0, 0));
  note("PTRACE_INTERRUPT: %ld\n", ptrace(PTRACE_INTERRUPT, s, 0, 0));
  wait_for(s, "interrupted");
  kill(s, SIGKILL);
  status = 0;
  pid_t w = waitpid(s, &status, __WALL);
  note("killed: waitpid -> %d, signal %d\n", w, WIFSIGNALED(status) ? WTERMSIG(status) : -1);
  fputs(seen, stdout);
  return 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int flags = CLONE_NEWPID | (geteuid() == 0 ? 0 : CLONE_NEWUSER);
  if (unshare(flags) != 0) {
    printf("no PID namespaces: %s\n", strerror(errno));
    return 0;
  }
  pid_t init = fork();
  if (init == 0) _exit(tracer());
  int status = 0;
  waitpid(init, &status, 0);
  printf("the namespace's first process exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
