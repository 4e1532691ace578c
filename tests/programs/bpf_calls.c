// Test program for bpf(2) under rewind (issue 31): an array map and a per-CPU array map
// (create, update, lookup, next key, info), a socket filter program loaded with the
// verifier's log, one the verifier refuses (its log says why), and id iteration. Prints what
// each returned and what it read; the test compares a native run, the recording and its
// replays. With the argument "test_run", it then asks for BPF_PROG_TEST_RUN, which rewind
// refuses by name.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr* attr) {
  return syscall(SYS_bpf, cmd, attr, sizeof *attr);
}

static const char* said(long r) {
  return r >= 0 ? "ok" : strerror(errno);
}

/// Possible CPUs, as the kernel sizes per-CPU values ("0-N" in /sys).
static int possible_cpus(void) {
  FILE* f = fopen("/sys/devices/system/cpu/possible", "r");
  int lo = 0, hi = 0;
  if (!f || fscanf(f, "%d-%d", &lo, &hi) < 1) hi = lo;
  if (f) fclose(f);
  return hi >= lo ? hi - lo + 1 : 1;
}

static int make_map(int type, const char* name) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.map_type = (uint32_t)type;
  a.key_size = 4;
  a.value_size = 8;
  a.max_entries = 4;
  strncpy(a.map_name, name, sizeof a.map_name - 1);
  long fd = bpf(BPF_MAP_CREATE, &a);
  printf("map_create %s: %s\n", name, said(fd));
  return (int)fd;
}

static void array_map(void) {
  int fd = make_map(BPF_MAP_TYPE_ARRAY, "rewind_array");
  if (fd < 0) return;
  uint32_t key = 1;
  uint64_t value = 42, got = 0;
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.map_fd = (uint32_t)fd;
  a.key = (uint64_t)(uintptr_t)&key;
  a.value = (uint64_t)(uintptr_t)&value;
  printf("update key 1 = 42: %s\n", said(bpf(BPF_MAP_UPDATE_ELEM, &a)));
  a.value = (uint64_t)(uintptr_t)&got;
  long r = bpf(BPF_MAP_LOOKUP_ELEM, &a);
  printf("lookup key 1: %s, value %llu\n", said(r), (unsigned long long)got);
  uint32_t next = 0;
  a.next_key = (uint64_t)(uintptr_t)&next;
  r = bpf(BPF_MAP_GET_NEXT_KEY, &a);
  printf("next key after 1: %s, %u\n", said(r), next);
  struct bpf_map_info info;
  memset(&info, 0, sizeof info);
  memset(&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t)fd;
  a.info.info_len = sizeof info;
  a.info.info = (uint64_t)(uintptr_t)&info;
  r = bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
  printf("map info: %s, type %u key %u value %u entries %u name %s, info_len %s\n", said(r),
         info.type, info.key_size, info.value_size, info.max_entries, info.name,
         a.info.info_len > 0 && a.info.info_len <= sizeof info ? "set" : "wrong");
  close(fd);
}

static void percpu_map(void) {
  int fd = make_map(BPF_MAP_TYPE_PERCPU_ARRAY, "rewind_percpu");
  if (fd < 0) return;
  int n = possible_cpus();
  uint64_t values[256] = {0}, got[256] = {0};
  for (int i = 0; i < n && i < 256; ++i) values[i] = 100 + (uint64_t)i;
  uint32_t key = 2;
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.map_fd = (uint32_t)fd;
  a.key = (uint64_t)(uintptr_t)&key;
  a.value = (uint64_t)(uintptr_t)values;
  printf("per-CPU update: %s\n", said(bpf(BPF_MAP_UPDATE_ELEM, &a)));
  a.value = (uint64_t)(uintptr_t)got;
  long r = bpf(BPF_MAP_LOOKUP_ELEM, &a);
  uint64_t sum = 0;
  for (int i = 0; i < n && i < 256; ++i) sum += got[i];
  printf("per-CPU lookup: %s, %d values, sum %s\n", said(r), n,
         sum == (uint64_t)(100 * n + n * (n - 1) / 2) ? "right" : "wrong");
  close(fd);
}

static long load(const struct bpf_insn* insns, uint32_t count, char* log, uint32_t log_size) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  a.insns = (uint64_t)(uintptr_t)insns;
  a.insn_cnt = count;
  a.license = (uint64_t)(uintptr_t) "GPL";
  a.log_level = 1;
  a.log_buf = (uint64_t)(uintptr_t)log;
  a.log_size = log_size;
  return bpf(BPF_PROG_LOAD, &a);
}

static unsigned checksum(const char* s) {
  unsigned h = 0;
  for (; *s; ++s) h = h * 31 + (unsigned char)*s;
  return h;
}

static int programs(void) {
  static char log[65536];
  const struct bpf_insn ok[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},  // r0 = 0
      {.code = BPF_JMP | BPF_EXIT},
  };
  long fd = load(ok, 2, log, sizeof log);
  printf("prog_load: %s, log of %zu bytes, checksum %u\n", said(fd), strlen(log), checksum(log));
  memset(log, 0, sizeof log);
  const struct bpf_insn bad[] = {{.code = BPF_JMP | BPF_EXIT}};  // r0 never set
  long r = load(bad, 1, log, sizeof log);
  printf("prog_load without r0: %s, log mentions R0 %s\n", said(r),
         strstr(log, "R0") ? "yes" : "no");
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.start_id = 0;
  r = bpf(BPF_PROG_GET_NEXT_ID, &a);
  printf("a program id after 0: %s\n", r == 0 && a.next_id > 0 ? "found" : said(r));
  return (int)fd;
}

int main(int argc, char** argv) {
  array_map();
  percpu_map();
  int prog = programs();
  if (argc > 1 && strcmp(argv[1], "test_run") == 0 && prog >= 0) {
    char data[64] = {0};
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.test.prog_fd = (uint32_t)prog;
    a.test.data_in = (uint64_t)(uintptr_t)data;
    a.test.data_size_in = sizeof data;
    printf("test_run: %s\n", said(bpf(BPF_PROG_TEST_RUN, &a)));
  }
  printf("bpf_calls done\n");
  return 0;
}
