/* Descriptor numbers a program sees as it sees them natively, though librewind_preload.so
 * opens a desched counter (a perf event descriptor) in every thread that makes a buffered
 * call:
 * - the numbers 3 to 99 are all free at the start (dup2(2) onto each succeeds), as rr's
 *   fds_clean test asks: the counters live at RWD_DESCHED_FD_FLOOR (100) and above;
 * - a program that starts and joins 300 threads, each making buffered calls, finds the same
 *   lowest free number after them as before: each thread's counter is closed at its end;
 * - a listing of /proc/self/fd (and /proc/self/task/TID/fd) while 20 threads live shows no
 *   counter, also in reads of 64 bytes, some of which natively would hold counters only,
 *   and its replay finds the read buffer as the recording left it.
 * Usage: fd_numbers; prints the same lines natively and recorded (programs.sh fd_numbers). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int pipe_fds[2];

static void* worker(void* arg) {
  char c = (char)(long)arg;
  char back = 0;
  if (write(pipe_fds[1], &c, 1) != 1 || read(pipe_fds[0], &back, 1) != 1 || back != c)
    printf("worker %ld: the pipe lost its byte\n", (long)arg);
  return NULL;
}

// Lists the descriptor directory `dir` by getdents64 in reads of 64 bytes (two entries each)
// and prints the numbers it names; on stderr, a hash of the buffer after the last read, which
// a replay must print as its recording did (where the recorder hid counters, the buffer once
// held zeros that replay's did not). Natively the kernel writes no further than each read's
// result; the hash is not compared with a native run's, whose reads split the listing
// otherwise where inherited descriptors lie above the counters' numbers.
static void list_fds(const char* dir) {
  int d = open(dir, O_RDONLY | O_DIRECTORY);
  char buf[64] __attribute__((aligned(8)));
  memset(buf, 0xab, sizeof buf);
  char names[2048] = "";
  int n = 0;
  long got;
  while ((got = syscall(SYS_getdents64, d, buf, sizeof buf)) > 0) {
    for (long at = 0; at < got;) {
      unsigned short reclen;
      memcpy(&reclen, buf + at + 16, sizeof reclen);
      const char* name = buf + at + 19;  // linux_dirent64's d_name (getdents64(2))
      if (name[0] != '.' && strlen(names) + strlen(name) + 2 < sizeof names) {
        strcat(names, " ");
        strcat(names, name);
        ++n;
      }
      at += reclen;
    }
  }
  close(d);
  unsigned hash = 2166136261u;  // FNV-1a
  for (size_t i = 0; i < sizeof buf; ++i) hash = (hash ^ (unsigned char)buf[i]) * 16777619u;
  const char* what = strncmp(dir, "/proc/self/task", 15) ? dir : "its task's";
  printf("%s lists %d descriptors:%s\n", what, n, names);
  fprintf(stderr, "%s: the buffer after the end hashes to %08x\n", what, hash);
}

static pthread_barrier_t listed;
static int zero_fd;

// A thread that makes buffered calls (so that it has a desched counter), then waits while
// main lists its descriptors.
static void* lister_peer(void* arg) {
  char c;
  if (read(zero_fd, &c, 1) != 1) printf("peer %ld: no byte from /dev/zero\n", (long)arg);
  pthread_barrier_wait(&listed);  // all have their counters
  pthread_barrier_wait(&listed);  // the listing is over
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
  // Descriptors above 99 that the caller passed on (a shell's) would lie among the counters'
  // numbers in the listings below; closed, the last reads of each listing hold counters only.
  // They are found by a listing, which shows no counter, so none is closed.
  int high[64], highs = 0, dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
  char entries[4096] __attribute__((aligned(8)));
  long got;
  while ((got = syscall(SYS_getdents64, dir, entries, sizeof entries)) > 0)
    for (long at = 0; at < got;) {
      unsigned short reclen;
      memcpy(&reclen, entries + at + 16, sizeof reclen);
      int fd = atoi(entries + at + 19);
      if (fd > 99 && fd != dir && highs < 64) high[highs++] = fd;
      at += reclen;
    }
  close(dir);
  for (int i = 0; i < highs; ++i) close(high[i]);
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
  zero_fd = open("/dev/zero", O_RDONLY);
  pthread_t peers[20];
  pthread_barrier_init(&listed, NULL, 21);
  for (long i = 0; i < 20; ++i) pthread_create(&peers[i], NULL, lister_peer, (void*)i);
  pthread_barrier_wait(&listed);
  list_fds("/proc/self/fd");
  char task_dir[64];
  snprintf(task_dir, sizeof task_dir, "/proc/self/task/%ld/fd", (long)syscall(SYS_gettid));
  list_fds(task_dir);
  pthread_barrier_wait(&listed);
  for (int i = 0; i < 20; ++i) pthread_join(peers[i], NULL);
  return 0;
}
