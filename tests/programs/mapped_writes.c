// A file written with write(2) and its kin while mapped shared, read back through the mapping
// (LMDB's pattern: pages written with pwrite, read through a read-only shared map), for
// programs.sh (mapped_writes). Written by pwrite (also read through a second mapping, of a
// read-only descriptor), by write after lseek, by writev, by pwritev2, through a descriptor
// that appends and so grows the file into the mapping's second page, through a descriptor
// opened after the mapping, through one whose type the preload library had cached before the
// mapping, and by a forked child; then shrunk by ftruncate (the page past the end faults with
// SIGBUS), grown again (zeros), and a hole punched by fallocate;
// then shrunk and grown by truncate(2) through a relative path, and written by
// copy_file_range (at the descriptor's position, which the preload library would buffer, and
// at an offset), sendfile and splice from a pipe.
// Each value read through the mapping is checked against what was written: a replay whose
// mapping missed a change prints a mismatch and exits 1 (or diverges). Usage: mapped_writes
// PATH
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kPage = 4096, kRounds = 200 };

static int failures;
// The file's mapping (global, so that gdb can always print it).
static const volatile char* map;
static sigjmp_buf fault;

static void on_sigbus(int sig) {
  siglongjmp(fault, sig);
}

// Reads the byte at p: -1 when the read faults with SIGBUS.
static int read_or_fault(const volatile char* p) {
  if (sigsetjmp(fault, 1)) return -1;
  return *p;
}

// Checks that `mapping` shows `want` at `at`.
static void expect(const volatile char* mapping, size_t at, const char* want, const char* how) {
  size_t n = strlen(want);
  for (size_t i = 0; i < n; ++i)
    if (mapping[at + i] != want[i]) {
      if (failures++ < 5) printf("mismatch after %s at %zu: wanted '%s'\n", how, at, want);
      return;
    }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mapped_writes PATH\n");
    return 2;
  }
  // A descriptor written before the file is mapped: the library caches its type then.
  int early = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (early < 0 || ftruncate(early, kPage) != 0) {
    perror("open");
    return 1;
  }
  if (pwrite(early, "before", 6, 100) != 6) return 1;
  map = mmap(NULL, 2 * kPage, PROT_READ, MAP_SHARED, early, 0);
  if (map == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  expect(map, 100, "before", "the write before the mapping");
  long sum = 0;
  char buf[32];
  for (int i = 0; i < kRounds; ++i) {
    snprintf(buf, sizeof buf, "p%05d", i);
    pwrite(early, buf, strlen(buf), 200 + (i % 7) * 10);
    expect(map, 200 + (i % 7) * 10, buf, "pwrite");
    sum += map[200 + (i % 7) * 10 + 5];
  }
  // A mapping of a read-only descriptor sees the writes too.
  int ro = open(argv[1], O_RDONLY);
  const volatile char* ro_map = mmap(NULL, kPage, PROT_READ, MAP_SHARED, ro, 0);
  if (ro_map == MAP_FAILED) {
    perror("mmap read-only");
    return 1;
  }
  for (int i = 0; i < 20; ++i) {
    snprintf(buf, sizeof buf, "r%05d", i);
    pwrite(early, buf, strlen(buf), 400);
    expect(ro_map, 400, buf, "pwrite, read through a read-only descriptor's mapping");
  }
  // A descriptor opened after the mapping, written at its position.
  int late = open(argv[1], O_RDWR);
  for (int i = 0; i < kRounds; ++i) {
    snprintf(buf, sizeof buf, "w%05d", i);
    lseek(late, 1000 + (i % 5) * 8, SEEK_SET);
    write(late, buf, strlen(buf));
    expect(map, 1000 + (i % 5) * 8, buf, "write");
    sum += map[1000 + (i % 5) * 8 + 5];
  }
  struct iovec iov[2] = {{"vec", 3}, {"tor", 3}};
  lseek(late, 2000, SEEK_SET);
  writev(late, iov, 2);
  expect(map, 2000, "vector", "writev");
  struct iovec one = {"pwritev2", 8};
  pwritev2(late, &one, 1, 3000, 0);
  expect(map, 3000, "pwritev2", "pwritev2");
  // Appends grow the file into the mapping's second page, which reads SIGBUS until then.
  int append = open(argv[1], O_WRONLY | O_APPEND);
  char line[100];
  memset(line, '.', sizeof line);
  for (int i = 0; i < 50; ++i) {
    snprintf(line, sizeof line, "line %03d", i);
    write(append, line, sizeof line);
  }
  expect(map, kPage + 40 * 100, "line 040", "an append");
  // A forked child's writes, seen by the parent after it ends.
  pid_t child = fork();
  if (child == 0) {
    pwrite(early, "from the child", 14, 3500);
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  expect(map, 3500, "from the child", "the child's pwrite");
  // Shrunk under the mapping: its second page is past the end, and faults.
  signal(SIGBUS, on_sigbus);
  ftruncate(early, kPage);
  if (read_or_fault(map + kPage + 10) != -1 && failures++ < 5) printf("no SIGBUS past the end\n");
  ftruncate(early, 2 * kPage);  // grown again: zeros there
  if (read_or_fault(map + kPage + 10) != 0 && failures++ < 5) printf("no zeros after growth\n");
  if (fallocate(early, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 3072, 1024) == 0) {
    if (map[3500] != 0 && failures++ < 5) printf("the punched hole is not zeros\n");
  } else if (errno != EOPNOTSUPP) {
    perror("fallocate");
    return 1;
  }
  // truncate(2) through a path relative to the working directory.
  char* slash = strrchr(argv[1], '/');
  const char* name = argv[1];
  if (slash) {
    *slash = 0;
    if (chdir(argv[1]) != 0) return 1;
    name = slash + 1;
  }
  truncate(name, kPage);
  if (read_or_fault(map + kPage + 10) != -1 && failures++ < 5) printf("truncate: no SIGBUS\n");
  truncate(name, 2 * kPage);
  if (read_or_fault(map + kPage + 10) != 0 && failures++ < 5) printf("truncate: no zeros\n");
  // Bytes copied from another file, and from a pipe, without passing through this memory.
  int src = open("mapped_writes.src", O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (src < 0 || write(src, "copy-range|copy-at|sendfile", 27) != 27) return 1;
  lseek(src, 0, SEEK_SET);
  lseek(late, 600, SEEK_SET);
  if (copy_file_range(src, NULL, late, NULL, 10, 0) == 10) {
    expect(map, 600, "copy-range", "copy_file_range");
    loff_t in = 11, out = 700;
    copy_file_range(src, &in, late, &out, 7, 0);
    expect(map, 700, "copy-at", "copy_file_range at an offset");
  } else if (errno != EXDEV && errno != EOPNOTSUPP) {
    perror("copy_file_range");
    return 1;
  }
  off_t from = 19;
  lseek(late, 800, SEEK_SET);
  sendfile(late, src, &from, 8);
  expect(map, 800, "sendfile", "sendfile");
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0 || write(pipe_fds[1], "spliced", 7) != 7) return 1;
  loff_t at = 900;
  splice(pipe_fds[0], NULL, late, &at, 7, 0);
  expect(map, 900, "spliced", "splice");
  close(src);
  unlink("mapped_writes.src");
  printf("mapped_writes: sum %ld, %d mismatches\n", sum, failures);
  return failures ? 1 : 0;
}
