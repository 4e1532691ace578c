/* For the syscall buffering test: two threads each write a file, then read it back many times
 * (open, read, fstat, lseek, close, clock_gettime, getpid: the calls librewind_preload.so
 * buffers), and the main thread prints what they saw. Same output in every replay. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char* dir;

static void* worker(void* arg) {
  long id = (long)arg, sum = 0;
  char path[512], buf[100];
  snprintf(path, sizeof path, "%s/file-%ld.txt", dir, id);
  FILE* f = fopen(path, "w");
  for (int i = 0; i < 300; ++i) fprintf(f, "thread %ld line %d\n", id, i);
  fclose(f);
  for (int k = 0; k < 200; ++k) {
    int fd = open(path, O_RDONLY);
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) sum += (unsigned char)buf[n - 1] + n;
    struct stat st;
    fstat(fd, &st);
    sum += st.st_size + lseek(fd, 0, SEEK_CUR);
    close(fd);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sum += ts.tv_nsec % 3 + getpid() % 5;
  }
  return (void*)sum;
}

int main(int argc, char** argv) {
  dir = argc > 1 ? argv[1] : ".";
  pthread_t t[2];
  for (long i = 0; i < 2; ++i) pthread_create(&t[i], 0, worker, (void*)i);
  for (int i = 0; i < 2; ++i) {
    void* r;
    pthread_join(t[i], &r);
    printf("thread %d sum %ld\n", i, (long)r);
  }
  return 0;
}
