// How processes end and stop, for programs.sh (process_ends): a child stopped with SIGSTOP and
// continued (waitpid with WUNTRACED and WCONTINUED), a child killed by a sibling while the
// parent waits for it, and a process whose threads all end with exit(2) rather than
// exit_group, the main thread first. Each line says what the parent saw. Arguments are
// ignored.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
/// The last thread of its process: it ends it with exit(2), status 7. It waits until the main
/// thread has ended (a zombie in /proc), so that it is the last: natively, when the main
/// thread's exit(0) came after this one's (1 run in 300 with a sleep of 1 ms here), wait(2)
/// reported 0, and the test compares the recording with that native run.
static void* last(void* a) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
  for (int i = 0; i < 5000; i++) {
    char state = 0;
    FILE* f = fopen(path, "r");
    if (!f) break;
    if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1) state = 0;
    fclose(f);
    if (state == 'Z') break;
    usleep(1000);
  }
  syscall(SYS_exit, 7);
  return a;
}
int main(void) {
  pid_t c = fork();
  if (c == 0) {
    for (int i = 0; i < 50; i++) usleep(2000);
    _exit(3);
  }
  kill(c, SIGSTOP);
  int st;
  pid_t r = waitpid(c, &st, WUNTRACED);
  printf("stopped: %d sig %d\n", r == c && WIFSTOPPED(st), WIFSTOPPED(st) ? WSTOPSIG(st) : 0);
  kill(c, SIGCONT);
  r = waitpid(c, &st, WCONTINUED);
  printf("continued: %d\n", r == c && WIFCONTINUED(st));
  r = waitpid(c, &st, 0);
  printf("exited: %d status %d\n", r == c && WIFEXITED(st), WEXITSTATUS(st));
  // a child killed while the parent is blocked in waitpid
  c = fork();
  if (c == 0) {
    pause();
    _exit(0);
  }
  pid_t k = fork();
  if (k == 0) {
    usleep(20000);
    kill(c, SIGKILL);
    _exit(0);
  }
  r = waitpid(c, &st, 0);
  printf("killed: %d sig %d\n", r == c && WIFSIGNALED(st), WTERMSIG(st));
  waitpid(k, &st, 0);
  // a process whose last thread ends with exit, not exit_group
  c = fork();
  if (c == 0) {
    pthread_t t;
    pthread_create(&t, 0, last, 0);
    syscall(SYS_exit, 0);
  }
  waitpid(c, &st, 0);
  printf("last thread exit: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}
