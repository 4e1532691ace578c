// The main thread ends with pthread_exit while a second thread runs on and ends the process
// (exit status 0 natively): recorded and replayed, also under gdb (programs.sh leader_exit).
// Arguments are ignored.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void* worker(void* arg) {
  (void)arg;
  usleep(10000);
  printf("the worker ends the process\n");
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  printf("the main thread exits alone\n");
  fflush(stdout);
  pthread_exit(NULL);
}
