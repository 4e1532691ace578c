// Reads the time stamp counter with rdtsc and rdtscp, in its own code and in a library it
// loads with dlopen (argv[1], tsc_reads_lib.c), and prints what it read: a replay must
// print the recorded values, whether the CPU traps rdtsc (PR_SET_TSC) or rewind replaced
// the instructions (engine/os/insn_patch.h). tsc_decoy holds the bytes of rdtsc inside a mov
// immediate, which must stay as they are (emulated_insns_test.cpp looks for both).
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

uint64_t tsc_read_a(void);
uint64_t tsc_read_b(unsigned* aux);
unsigned tsc_decoy(void);
__asm__(
    ".text\n"
    ".globl tsc_read_a\n"
    "tsc_read_a:\n"
    "  rdtsc\n"
    "  shl $32, %rdx\n"
    "  or %rdx, %rax\n"
    "  ret\n"
    ".globl tsc_read_b\n"
    "tsc_read_b:\n"
    "  mov %rdi, %rsi\n"
    "  rdtscp\n"
    "  mov %ecx, (%rsi)\n"
    "  shl $32, %rdx\n"
    "  or %rdx, %rax\n"
    "  ret\n"
    ".globl tsc_decoy\n"
    "tsc_decoy:\n"
    "  mov $0x310f, %eax\n"
    "  ret\n");

int main(int argc, char** argv) {
  uint64_t a = tsc_read_a(), b = tsc_read_a();
  unsigned aux = 0;
  uint64_t c = tsc_read_b(&aux);
  printf("rdtsc %llu %llu rdtscp %llu aux %u\n", (unsigned long long)a, (unsigned long long)b,
         (unsigned long long)c, aux);
  printf("ordered %d decoy %#x\n", a <= b && b <= c, tsc_decoy());
  if (argc > 1) {
    void* lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
      printf("dlopen: %s\n", dlerror());
      return 1;
    }
    uint64_t (*lib_read)(void) = (uint64_t(*)(void))dlsym(lib, "tsc_lib_read");
    uint64_t d = lib_read();
    printf("library rdtsc %llu after %d\n", (unsigned long long)d, d >= c);
  }
  printf("tsc_reads done\n");
  return 0;
}
