/* Processes that write memory they share (MAP_SHARED | MAP_ANONYMOUS, inherited by fork):
 * what each one reads depends on when the others wrote, so a replay shows the same only if
 * the recording ran them in an order it could keep (record_task.h, Turns). Three cases:
 * - handoff: the child yields until the parent, after an mprotect to read-only and back,
 *   sets a flag (rr's mmap_shared_prot test); it prints how many yields that took;
 * - counters: two children each add 1 to a shared counter 300,000 times without a lock or
 *   a syscall, and print the sum of the values they read; the parent prints the final count
 *   (natively lower than 600,000 where their increments overlap);
 * - spin: the child spins, without syscalls, until the parent sets a flag after a 2 ms
 *   sleep; it prints how many passes that took.
 * With the argument `apart FILE`, the processes come to share writable memory after the
 * fork, each by a call of its own: the counters' children each attach one System V segment
 * the parent created (shmat) and count there, then map FILE (MAP_SHARED, open for reading
 * and writing) and count again; in spin, the parent maps FILE shared but read-only before the
 * fork, the child spins reading the flag there, and the parent makes its mapping writable
 * (mprotect) only after its sleep, to set the flag.
 * The numbers differ from run to run; each replay must print the recording's (programs.sh
 * shared_turns). */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
  volatile int flag;
  volatile long counter;
};

static struct shared* sh;
static const char* apart_file; /* the file each process maps for itself, or NULL */
static int segment = -1;       /* the System V segment each counter attaches, or -1 */

/* FILE, mapped shared with protection `prot`. */
static struct shared* map_file(int prot) {
  int fd = open(apart_file, O_RDWR);
  if (fd < 0) _exit(2);
  struct shared* m = mmap(NULL, 4096, prot, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) _exit(2);
  return m;
}

static void wait_child(pid_t child) {
  int status;
  waitpid(child, &status, 0);
}

static void handoff(void) {
  sh->flag = 0;
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    long yields = 0;
    while (!sh->flag) {
      sched_yield();
      ++yields;
    }
    printf("handoff: the child saw the flag after %ld yields\n", yields);
    fflush(stdout);
    _exit(0);
  }
  mprotect(sh, 4096, PROT_READ);
  mprotect(sh, 4096, PROT_READ | PROT_WRITE);
  sh->flag = 1;
  wait_child(child);
}

static void counters(void) {
  if (!apart_file) sh->counter = 0; /* the file and the segment start at 0 */
  pid_t children[2];
  fflush(stdout);
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    if (children[c] == 0) {
      unsigned long sum = 0;
      if (segment >= 0) {
        volatile long* n = shmat(segment, NULL, 0);
        if (n == (void*)-1) _exit(2);
        for (int i = 0; i < 300000; ++i) {
          long v = *n;
          sum += (unsigned long)v;
          *n = v + 1;
        }
        printf("counters: child %d read values summing to %lu in the segment\n", c, sum);
        sum = 0;
      }
      struct shared* m = apart_file ? map_file(PROT_READ | PROT_WRITE) : sh;
      for (int i = 0; i < 300000; ++i) {
        long v = m->counter;
        sum += (unsigned long)v;
        m->counter = v + 1;
      }
      printf("counters: child %d read values summing to %lu\n", c, sum);
      fflush(stdout);
      _exit(0);
    }
  }
  for (int c = 0; c < 2; ++c) wait_child(children[c]);
  if (apart_file) sh = map_file(PROT_READ | PROT_WRITE);
  printf("counters: final count %ld\n", sh->counter);
  if (apart_file) munmap((void*)sh, 4096); /* spin maps the file read-only */
  if (segment >= 0) {
    volatile long* n = shmat(segment, NULL, SHM_RDONLY);
    if (n == (void*)-1) _exit(2);
    printf("counters: final count %ld in the segment\n", *n);
    shmdt((void*)n);
  }
}

static void spin(void) {
  if (apart_file)
    sh = map_file(PROT_READ); /* the file's flag is 0 */
  else
    sh->flag = 0;
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    unsigned long passes = 0;
    while (!sh->flag) ++passes;
    printf("spin: the child passed %lu times\n", passes);
    fflush(stdout);
    _exit(0);
  }
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL);
  if (apart_file && mprotect((void*)sh, 4096, PROT_READ | PROT_WRITE) != 0) _exit(2);
  sh->flag = 1;
  wait_child(child);
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "apart") == 0) {
    apart_file = argv[2];
    int fd = open(apart_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) return 1;
    close(fd);
    segment = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    if (segment < 0) return 1;
    fflush(stdout);
    counters();
    shmctl(segment, IPC_RMID, NULL);
    spin();
    return 0;
  }
  sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return 1;
  handoff();
  counters();
  spin();
  return 0;
}
