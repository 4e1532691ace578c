// System V shared memory between processes, for programs.sh (sysv_shm): recorded and replayed
// twice, the output must be the same each time.
//   sysv_shm create PATH   (run natively first) leaves a segment keyed by ftok(PATH) holding a
//                          message: memory that exists before the recording starts
//   sysv_shm use PATH      reads and removes that segment, then shares a new one with a child
//                          process: the child attaches it again, reads what the parent wrote
//                          and answers through it; the parent reads the answer through its
//                          own attachment and through a read-only one.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char* what) {
  perror(what);
  exit(1);
}

static key_t key_of(const char* path) {
  key_t k = ftok(path, 'r');
  if (k == -1) die("ftok");
  return k;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sysv_shm create|use PATH\n");
    return 2;
  }
  key_t key = key_of(argv[2]);
  if (strcmp(argv[1], "create") == 0) {
    int id = shmget(key, 5000, IPC_CREAT | IPC_EXCL | 0600);
    if (id < 0) die("shmget create");
    char* p = shmat(id, NULL, 0);
    if (p == (void*)-1) die("shmat create");
    strcpy(p, "left before the recording");
    strcpy(p + 4500, "and on its second page");
    return shmdt(p) == 0 ? 0 : 1;
  }

  // A segment that another process filled before the recording started.
  int old = shmget(key, 0, 0);
  if (old < 0) die("shmget key");
  const char* seen = shmat(old, NULL, SHM_RDONLY);
  if (seen == (void*)-1) die("shmat old");
  printf("pre: '%s' '%s'\n", seen, seen + 4500);
  struct shmid_ds ds;
  if (shmctl(old, IPC_STAT, &ds) != 0) die("shmctl IPC_STAT old");
  printf("pre: %zu bytes, %lu attached\n", (size_t)ds.shm_segsz, (unsigned long)ds.shm_nattch);
  if (shmdt(seen) != 0 || shmctl(old, IPC_RMID, NULL) != 0) die("remove old");

  // A new segment shared with a child.
  int id = shmget(IPC_PRIVATE, 10000, IPC_CREAT | 0600);
  if (id < 0) die("shmget");
  char* p = shmat(id, NULL, 0);
  if (p == (void*)-1) die("shmat");
  strcpy(p, "from the parent");
  p[9000] = 'x';
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    char* q = shmat(id, NULL, 0);  // a second attachment, at another address
    if (q == (void*)-1) _exit(3);
    char saw[32];
    snprintf(saw, sizeof saw, "%s", q);
    snprintf(q + 100, 100, "the child saw '%s' and '%c'", saw, q[9000]);
    p[200] = 'c';  // through the attachment the fork inherited
    _exit(shmdt(q) == 0 ? 0 : 4);
  }
  int status;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("child");
  printf("answer: %s, mark '%c'\n", p + 100, p[200]);
  const char* ro = shmat(id, NULL, SHM_RDONLY);
  if (ro == (void*)-1) die("shmat read-only");
  printf("read-only: %s\n", strcmp(ro + 100, p + 100) == 0 ? "the same answer" : ro + 100);
  if (shmctl(id, IPC_STAT, &ds) != 0) die("shmctl IPC_STAT");
  printf("new: %zu bytes, %lu attached\n", (size_t)ds.shm_segsz, (unsigned long)ds.shm_nattch);
  // Attached over memory already mapped there, which it replaces (SHM_REMAP, shmat(2)).
  char* spot = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char* over = shmat(id, spot, SHM_REMAP);
  if (over == (void*)-1) die("shmat SHM_REMAP");
  printf("remap: %s, %s\n", over == spot ? "in place" : "elsewhere",
         strcmp(over + 100, p + 100) == 0 ? "the same answer" : over + 100);
  if (shmdt(over) != 0) die("shmdt remap");
  if (shmdt(ro) != 0 || shmctl(id, IPC_RMID, NULL) != 0 || shmdt(p) != 0) die("remove");
  puts("sysv_shm done");
  return 0;
}
