#include "engine/os/cpu_affinity.h"

#include <sched.h>

namespace rwd {

int pin_to_current_cpu() {
  int cpu = sched_getcpu();
  if (cpu < 0) return -1;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0 ? cpu : -1;
}

}  // namespace rwd
