// A parent and a fork()ed worker alive at once, talking over two pipes: the parent sends
// JOBS jobs (3 unless the build says otherwise), the worker squares each in worker_step() and
// sends it back, the parent adds each answer in parent_got(). Both processes run the same
// program (no exec), so one breakpoint in each function is hit only in its own process. For
// the tests of breakpoints per process in both directions (DAP, gdb), of checkpoints of
// process trees, and the timeline's random walk over two processes (built with more JOBS).
// Arguments are ignored.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef JOBS
#define JOBS 3
#endif

static long total;

__attribute__((noinline)) long worker_step(long job) {
  long answer = job * job;  // the worker's line
  return answer;
}

__attribute__((noinline)) void parent_got(long answer) {
  total += answer;  // the parent's line
}

int main(void) {
  int to_worker[2], to_parent[2];
  if (pipe(to_worker) != 0 || pipe(to_parent) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(to_worker[1]);
    close(to_parent[0]);
    long job;
    while (read(to_worker[0], &job, sizeof job) == sizeof job) {
      long answer = worker_step(job);
      if (write(to_parent[1], &answer, sizeof answer) != sizeof answer) _exit(1);
    }
    _exit(0);
  }
  close(to_worker[0]);
  close(to_parent[1]);
  long expected = 0;
  for (long job = 1; job <= JOBS; ++job) {
    expected += job * job;
    long answer = 0;
    if (write(to_worker[1], &job, sizeof job) != sizeof job) return 1;
    if (read(to_parent[0], &answer, sizeof answer) != sizeof answer) return 1;
    parent_got(answer);
  }
  close(to_worker[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  printf("total %ld, worker status %d\n", total, WEXITSTATUS(status));
  return total == expected ? 0 : 1;
}
