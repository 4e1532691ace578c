// Test program for stepping across signal handlers: raise(SIGUSR1) three times; the handler
// counts the deliveries in a global.
#include <signal.h>
#include <stdio.h>

volatile int delivered;

__attribute__((noinline)) void on_usr1(int sig) {
  (void)sig;
  delivered++;
}

int main(void) {
  signal(SIGUSR1, on_usr1);
  for (int i = 0; i < 3; ++i) raise(SIGUSR1);
  printf("delivered %d\n", delivered);
  return 0;
}
