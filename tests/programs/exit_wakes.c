// A process that ends while its threads wake (programs.sh exit_wakes): 64 threads wait on one
// futex word; one thread sets it, wakes them all and at once ends the process. The threads'
// returns from FUTEX_WAIT often reach the recorder after that end began (waitpid reports
// the main thread, the recorder's child, first), and replay's end of the process kills them
// before those returns: the recorder must not record them, and replay must not let a thread
// run on before the kill reaches it. argv[1] says how the process ends:
//   exit_group         the main thread calls exit_group(3)
//   abort              the main thread raises SIGABRT (no handler: the process dies)
//   thread_exit_group  the last thread created wakes the others and calls exit_group(3)
//   thread_abort       that thread raises SIGABRT
// Prints one line before the end.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kThreads = 64 };

static int wake_word;  ///< 0 until the ending thread wakes the waiters
static pthread_barrier_t started;
static const char* mode = "exit_group";

/// Wakes every waiter and ends the process as `how` says ("...exit_group" or "...abort").
static void wake_and_end(const char* how) {
  printf("waking %d threads, then %s\n", kThreads, how);
  fflush(stdout);
  __atomic_store_n(&wake_word, 1, __ATOMIC_SEQ_CST);
  syscall(SYS_futex, &wake_word, FUTEX_WAKE, kThreads, NULL, NULL, 0);
  if (strstr(how, "abort")) raise(SIGABRT);
  syscall(SYS_exit_group, 3);
}

/// Waits until wake_word is set, then waits for the end of the process.
static void* waiter(void* unused) {
  pthread_barrier_wait(&started);
  while (__atomic_load_n(&wake_word, __ATOMIC_SEQ_CST) == 0)
    syscall(SYS_futex, &wake_word, FUTEX_WAIT, 0, NULL, NULL, 0);
  for (;;) pause();
  return unused;
}

/// The thread that ends the process in the thread_* modes.
static void* ender(void* unused) {
  pthread_barrier_wait(&started);
  usleep(20000);  // most waiters are in FUTEX_WAIT by now
  wake_and_end(mode);
  return unused;
}

int main(int argc, char** argv) {
  if (argc > 1) mode = argv[1];
  const int from_thread = strncmp(mode, "thread_", 7) == 0;
  pthread_barrier_init(&started, NULL, kThreads + 1);
  for (int i = 0; i < kThreads; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, from_thread && i == kThreads - 1 ? ender : waiter, NULL) != 0)
      return 1;
  }
  pthread_barrier_wait(&started);
  if (from_thread) {
    for (;;) pause();
  }
  usleep(20000);
  wake_and_end(mode);
  return 0;
}
