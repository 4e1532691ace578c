// Loads the shared library named by argv[1] with dlopen, well after start-up, and calls its
// plugin_scale(): code that is not mapped when the replay starts.
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  int (*scale)(int) = (int (*)(int))dlsym(lib, "plugin_scale");
  int r = scale ? scale(14) : -1;
  printf("plugin says %d\n", r);
  return r == 43 ? 0 : 1;
}
