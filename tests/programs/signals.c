// Test program: synchronous signals, handlers, signal frames, restarted syscalls and signals
// between processes, poll interrupted. Usage: signals MODE (see main).
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static sigjmp_buf jump;
static volatile sig_atomic_t handled;

static void on_segv(int sig, siginfo_t* si, void* uc) {
  (void)uc;
  printf("caught %s at %p\n", sigabbrev_np(sig), si->si_addr);
  siglongjmp(jump, 1);
}

static void on_signal(int sig) {
  handled++;
  char msg[64];
  int n = snprintf(msg, sizeof msg, "handler for %s\n", sigabbrev_np(sig));
  write(1, msg, (size_t)n);
}

static void sleep_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

// The parent blocks in read(); the child interrupts it with SIGUSR1, then writes data.
static int interrupted_read(int restart) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigaction(SIGUSR1, &sa, NULL);
  int p[2];
  if (pipe(p) != 0) return 2;
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    sleep_ms(300);  // let the parent block in read()
    kill(parent, SIGUSR1);
    sleep_ms(100);
    write(p[1], "data", 4);
    _exit(0);
  }
  char buf[8] = {0};
  ssize_t n = read(p[0], buf, 4);
  int err = errno;
  if (n < 0)
    printf("read failed: %s\n", strerrorname_np(err));
  else
    printf("read %zd bytes: %s\n", n, buf);
  if (!restart) {
    n = read(p[0], buf, 4);
    printf("second read %zd bytes: %s\n", n, buf);
  }
  int status;
  waitpid(child, &status, 0);
  printf("child exited %d, handled %d\n", WEXITSTATUS(status), (int)handled);
  return 0;
}

// poll() and ppoll() with a timeout on an empty pipe, interrupted by SIGALRM: the kernel
// writes every revents back even then (fs/select.c do_sys_poll), here over a stale value.
// What the program does next depends on it: replay must write it as the recording saw it.
static int interrupted_poll(void) {
  signal(SIGALRM, on_signal);
  int p[2];
  if (pipe(p) != 0) return 2;
  for (int i = 0; i < 2; ++i) {
    struct pollfd pfd = {p[0], POLLIN, 0x5a5a};
    struct itimerval it = {{0, 0}, {0, 100000}};  // 100 ms
    setitimer(ITIMER_REAL, &it, NULL);
    struct timespec ts = {5, 0};
    int n = i == 0 ? poll(&pfd, 1, 5000) : ppoll(&pfd, 1, &ts, NULL);
    int err = errno;
    // A syscall chosen by revents: getppid where it is stale, getpid where the kernel
    // cleared it (natively), so a stale value in replay is a different syscall there.
    long who = pfd.revents ? syscall(SYS_getppid) : syscall(SYS_getpid);
    printf("%s returned %d (%s), revents %#x, %s\n", i == 0 ? "poll" : "ppoll", n,
           n < 0 ? strerrorname_np(err) : "-", (unsigned)pfd.revents,
           who == getpid() ? "cleared" : "stale");
  }
  printf("handled %d\n", (int)handled);
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  setvbuf(stdout, NULL, _IONBF, 0);
  if (!strcmp(mode, "segv-handler")) {
    static char alt[65536];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    for (int i = 0; i < 3; ++i) {
      if (sigsetjmp(jump, 1) == 0) {
        volatile int* bad = (int*)(uintptr_t)(0x10 * (i + 1));
        printf("value %d\n", *bad);
      }
    }
    printf("recovered three times\n");
    return 0;
  }
  if (!strcmp(mode, "fpe")) {
    volatile int zero = 0;
    printf("%d\n", 10 / zero);
    return 0;
  }
  if (!strcmp(mode, "abort")) {
    printf("about to abort\n");
    abort();
  }
  if (!strcmp(mode, "sigpipe")) {
    int p[2];
    pipe(p);
    close(p[0]);
    printf("writing to a closed pipe\n");
    write(p[1], "x", 1);  // SIGPIPE, default action: killed
    printf("not reached\n");
    return 0;
  }
  if (!strcmp(mode, "sigpipe-handled")) {
    signal(SIGPIPE, on_signal);
    int p[2];
    pipe(p);
    close(p[0]);
    ssize_t n = write(p[1], "x", 1);
    printf("write returned %zd (%s), handled %d\n", n, strerrorname_np(errno), (int)handled);
    return 0;
  }
  if (!strcmp(mode, "mask")) {
    signal(SIGUSR2, on_signal);
    sigset_t set, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    raise(SIGUSR2);
    sigpending(&pending);
    printf("pending while blocked: %d, handled %d\n", sigismember(&pending, SIGUSR2), (int)handled);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("after unblocking: handled %d\n", (int)handled);
    return 0;
  }
  if (!strcmp(mode, "restart")) return interrupted_read(1);
  if (!strcmp(mode, "eintr")) return interrupted_read(0);
  if (!strcmp(mode, "poll-eintr")) return interrupted_poll();
  fprintf(stderr, "unknown mode '%s'\n", mode);
  return 2;
}
