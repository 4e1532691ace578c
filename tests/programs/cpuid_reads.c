// Reads CPUID leaf 1 on each of the first two CPUs it may run on (sched_setaffinity), and
// takes a branch by whether their APIC ids (EBX bits 31-24) differ: a replay that ran cpuid
// natively, pinned to one CPU, would see one id and take the other branch (another syscall,
// a divergence). rewind replaces cpuid and replays what it read (engine/os/insn_patch.h).
#define _GNU_SOURCE
#include <cpuid.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned apic_id(void) {
  unsigned a, b, c, d;
  __cpuid(1, a, b, c, d);
  return b >> 24;
}

int main(void) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  unsigned ids[2] = {0, 0};
  int n = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && n < 2; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return 1;
    ids[n++] = apic_id();
  }
  sched_setaffinity(0, sizeof allowed, &allowed);
  if (n == 2 && ids[0] != ids[1])
    printf("cpus 2, apic ids differ, pid %d\n", getpid());
  else
    printf("cpus %d, one apic id, ppid %d\n", n, getppid());
  unsigned a, vendor[3];
  __cpuid(0, a, vendor[0], vendor[2], vendor[1]);
  char name[13];
  memcpy(name, vendor, 12);
  name[12] = 0;
  printf("vendor %s, max leaf %u\ncpuid_reads done\n", name, a);
  return 0;
}
