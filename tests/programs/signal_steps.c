// Signals from another process that arrive while the recorder single-steps a spinning thread
// on to a distinct preemption point (engine/record/preemption_point.cpp), for programs.sh
// (signal_steps). Two threads spin on a counter kept in memory only (their registers repeat at
// each pass, so every preemption steps them); a forked child sends the process SIGUSR1
// 300 times, a millisecond apart, each after the handler's acknowledgement through a pipe. A signal
// the recorder took during its steps and never sent again left the child waiting forever (and the
// recording with it): gdb's SIGSTOP to a spinning inferior thread did so.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kSignals = 300 };

static volatile int received;
static int ack[2];

static void on_usr1(int sig) {
  (void)sig;
  ++received;
  char c = 'x';
  if (write(ack[1], &c, 1) != 1) _exit(3);
}

static void* spin(void* arg) {
  while (received < kSignals) {
  }
  return arg;
}

int main(void) {
  if (pipe(ack) != 0) return 1;
  signal(SIGUSR1, on_usr1);
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < kSignals; ++i) {
      char c;
      usleep(1000);  // the threads spin meanwhile, preempted at every tick
      kill(parent, SIGUSR1);
      if (read(ack[0], &c, 1) != 1) _exit(2);
    }
    _exit(0);
  }
  pthread_t other;
  pthread_create(&other, NULL, spin, NULL);
  spin(NULL);
  pthread_join(other, NULL);
  int status = 0;
  waitpid(child, &status, 0);
  printf("signal_steps: %d signals handled, sender exit %d\n", received,
         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
