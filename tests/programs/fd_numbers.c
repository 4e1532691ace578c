/* Descriptor numbers a program sees as it sees them natively, though librewind_preload.so
 * opens a desched counter (a perf event descriptor) in every thread that makes a buffered
 * call:
 * - the numbers 3 to 99 are all free at the start (dup2(2) onto each succeeds), as rr's
 *   fds_clean test asks: the counters live at RWD_DESCHED_FD_FLOOR (100) and above;
 * - a program that starts and joins 300 threads, each making buffered calls, finds the same
 *   lowest free number after them as before: each thread's counter is closed at its end.
 * Usage: fd_numbers; prints the same lines natively and recorded (programs.sh fd_numbers). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int pipe_fds[2];

static void* worker(void* arg) {
  char c = (char)(long)arg;
  char back = 0;
  if (write(pipe_fds[1], &c, 1) != 1 || read(pipe_fds[0], &back, 1) != 1 || back != c)
    printf("worker %ld: the pipe lost its byte\n", (long)arg);
  return NULL;
}

static int lowest_free(void) {
  int fd = open("/dev/null", O_RDONLY);
  close(fd);
  return fd;
}

int main(void) {
  int first = 0;
  for (int fd = 3; fd < 100 && !first; ++fd)
    if (dup2(2, fd) != fd) first = fd;
  for (int fd = 3; fd < 100; ++fd) close(fd);
  if (first)
    printf("dup2 onto %d failed\n", first);
  else
    printf("descriptors 3 to 99 free\n");
  if (pipe(pipe_fds) != 0) return 1;
  int before = lowest_free();
  for (long i = 0; i < 300; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, (void*)i) != 0) {
      printf("pthread_create %ld failed\n", i);
      return 1;
    }
    pthread_join(t, NULL);
  }
  int after = lowest_free();
  printf("lowest free descriptor: %d before 300 threads, %d after\n", before, after);
  return 0;
}
