// A file that two processes map shared and write (as SQLite's -shm index is), for
// programs.sh (shared_file): each process opens and maps the file itself, and each reads what
// the other wrote through its own mapping. The file then grows and a third process maps the
// new part. What the processes read decides what they print and how they exit, so a replay
// whose mappings were not shared would diverge. Usage: shared_file PATH
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kPage = 4096 };

static char* map_file(const char* path, size_t len, off_t at) {
  int fd = open(path, O_RDWR);
  if (fd < 0) {
    perror("open");
    exit(1);
  }
  char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at);
  close(fd);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  return p;
}

/// Runs `child` in a new process and returns its exit status.
static int in_child(int (*child)(const char*), const char* path) {
  pid_t pid = fork();
  if (pid == 0) _exit(child(path));
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int first_child(const char* path) {
  char* p = map_file(path, 2 * kPage, 0);
  if (strcmp(p, "ping from the parent") != 0) return 10;
  strcpy(p + kPage, "pong from the first child");
  return 0;
}

static int second_child(const char* path) {
  char* grown = map_file(path, kPage, 2 * kPage);  // the page the file grew by
  if (strcmp(grown, "in the grown part") != 0) return 20;
  strcpy(grown + 100, "seen by the second child");
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: shared_file PATH\n");
    return 2;
  }
  const char* path = argv[1];
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, 2 * kPage) != 0) {
    perror(path);
    return 1;
  }
  close(fd);
  char* p = map_file(path, 2 * kPage, 0);
  strcpy(p, "ping from the parent");
  int st = in_child(first_child, path);
  printf("first child: exit %d, wrote '%s'\n", st, p + kPage);
  if (strcmp(p + kPage, "pong from the first child") != 0) return 3;

  fd = open(path, O_RDWR);
  if (fd < 0 || ftruncate(fd, 3 * kPage) != 0) return 1;
  close(fd);
  char* grown = map_file(path, kPage, 2 * kPage);
  strcpy(grown, "in the grown part");
  st = in_child(second_child, path);
  printf("second child: exit %d, wrote '%s'\n", st, grown + 100);
  if (strcmp(grown + 100, "seen by the second child") != 0) return 4;
  unlink(path);
  puts("shared_file done");
  return 0;
}
