// vfork(2) and posix_spawn(3) from a process that has MAP_SHARED memory, as Python's
// subprocess does after a multiprocessing pool made its semaphores: the recorder makes
// processes that share writable memory take turns, and a vfork parent, which waits for its
// child, must not keep the turn the child needs (a recording that hung). Once with no other
// process, once while a forked child that shares the page waits for the parent's word.
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

/// Runs echo WORD with vfork and execv, then with posix_spawn; returns both exit statuses'
/// sum (0 when both succeed).
static int run_children(const char* word) {
  int status = 0, sum = 0;
  pid_t p = vfork();
  if (p == 0) {
    execl("/bin/echo", "echo", "vfork:", word, (char*)NULL);
    _exit(127);
  }
  if (p < 0 || waitpid(p, &status, 0) != p) return -1;
  sum += WEXITSTATUS(status);
  char* argv[] = {"echo", "posix_spawn:", (char*)word, NULL};
  if (posix_spawn(&p, "/bin/echo", NULL, NULL, argv, environ) != 0) return -1;
  if (waitpid(p, &status, 0) != p) return -1;
  return sum + WEXITSTATUS(status);
}

int main(void) {
  volatile int* shared =
      mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return 1;
  setvbuf(stdout, NULL, _IONBF, 0);
  printf("alone: %d\n", run_children("alone"));
  pid_t waiter = fork();
  if (waiter == 0) {  // waits on the shared page for the parent's word, then counts it
    while (shared[0] == 0) usleep(1000);
    shared[1] = shared[0] + 1;
    _exit(0);
  }
  printf("beside a forked child: %d\n", run_children("beside"));
  shared[0] = 41;
  int status = 0;
  if (waitpid(waiter, &status, 0) != waiter) return 1;
  printf("the forked child read %d and wrote %d\n", shared[0], shared[1]);
  return 0;
}
