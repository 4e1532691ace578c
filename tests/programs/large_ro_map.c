// A file of 32 MiB of data mapped MAP_SHARED from a read-only descriptor while a child
// process, which does not map it, writes into it with pwrite (programs.sh large_ro_map): the
// mapping shows the child's bytes, natively, recorded and replayed. Such a file is saved as a
// shared file (its replay copy takes the recorded writes) up to 64 MiB of data; over 16 MiB it
// once was replayed from a private copy and the replay diverged. Usage: large_ro_map FILE
// (created, 32 MiB, removed at the end). Prints what the mapping holds after the write.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kMiB = 1 << 20, kSize = 32 * kMiB, kAt = 20 * kMiB + 100 };

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* path = argv[1];
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  static char block[kMiB];
  memset(block, 7, sizeof block);
  for (int i = 0; i < kSize / kMiB; ++i)
    if (write(fd, block, sizeof block) != kMiB) return 1;
  close(fd);
  int ro = open(path, O_RDONLY);
  const char* m = mmap(NULL, kSize, PROT_READ, MAP_SHARED, ro, 0);
  if (m == MAP_FAILED) return 1;
  pid_t child = fork();
  if (child == 0) {  // the writer, with a descriptor of its own and no mapping
    int w = open(path, O_WRONLY);
    _exit(pwrite(w, "HELLO", 5, kAt) == 5 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  unsigned sum = 0;
  for (int i = 0; i < kSize; ++i) sum = sum * 31 + (unsigned char)m[i];
  printf("child exit %d; mapped at 20 MiB + 100: %.5s; sum %u\n", WEXITSTATUS(status), m + kAt,
         sum);
  unlink(path);
  return 0;
}
