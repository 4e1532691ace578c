// Sample: reads a data file that is deleted or rewritten later (a temporary file, a log that
// rotates). Bug: the parser trusts the first line's count and reads past the end when the
// file was cut short, printing garbage — only when a writer truncated it at the wrong time.
// Replay must still work after the file is gone.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[1], "r");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  int count = 0;
  if (fscanf(f, "%d", &count) != 1) return 2;
  long total = 0;
  int read = 0;
  for (int i = 0; i < count; ++i) {
    int v;
    if (fscanf(f, "%d", &v) != 1) break;  // cut short: the bug shows as a wrong total
    total += v;
    ++read;
  }
  fclose(f);
  printf("%d of %d values, total %ld\n", read, count, total);
  return read == count ? 0 : 1;
}
