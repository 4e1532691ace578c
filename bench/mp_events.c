// Benchmark workload for the timeline on process trees: bench/mt_events.c's work done by four
// fork()ed processes running at once instead of four threads: each makes 30,000 cheap
// syscalls (getppid) with a little computing between them and calls marker(i) every 2,500 of
// its iterations. The parent waits for them in waitpid meanwhile.
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROCESSES 4
#define ITERATIONS 30000

volatile long sink;

__attribute__((noinline)) void marker(long i) {
  sink = i;
}

static void work(unsigned long x) {
  for (long i = 0; i < ITERATIONS; ++i) {
    for (int k = 0; k < 50; ++k) x = x * 6364136223846793005ul + 1442695040888963407ul;
    if (i % 2500 == 1250) marker(i);
    syscall(SYS_getppid);
  }
  sink = (long)x;
}

int main(void) {
  for (long i = 0; i < PROCESSES; ++i) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      work((unsigned long)(i + 1));
      _exit(0);
    }
  }
  int status = 0, failed = 0;
  for (int i = 0; i < PROCESSES; ++i)
    if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  return failed;
}
