// The digest of a process's live memory (live_memory: without dead stacks) and
// digest_stack_window (engine/ticks/memory_digest.h) on a real stopped child. The first:
// bytes below the stack's red zone do not change it, bytes in the red zone, above rsp or
// elsewhere in writable memory do, and the full digest_memory sees all of them. The second:
// only the red zone and the page above rsp change it, less the exclusions.
#include "engine/ticks/memory_digest.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"

using namespace rwd;

namespace {

/// Writes 8 changed bytes into `pid`'s memory at `addr` (process_vm_writev).
void poke(pid_t pid, uint64_t addr, uint64_t value) {
  iovec local{&value, sizeof value}, remote{reinterpret_cast<void*>(addr), sizeof value};
  REQUIRE(process_vm_writev(pid, &local, 1, &remote, 1, 0) == ssize_t(sizeof value));
}

/// A child running /bin/cat, stopped at its exec (traced by this process). Not a fork of this
/// test: a sanitizer build's shadow memory (terabytes of writable mappings) would take hours
/// to hash.
pid_t stopped_cat() {
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execl("/bin/cat", "cat", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSTOPPED(status));
  return child;
}

}  // namespace

TEST_CASE("a point's digest leaves out the dead stack below the red zone, and only that",
          "[digest]") {
  pid_t child = stopped_cat();
  uint64_t data_word = 0;  // in the child's writable data (the program's .data or .bss)
  for (const ProcMapping& m : read_proc_maps(child))
    if (!data_word && m.write && !m.shared && m.path != "[stack]" && !m.is_special())
      data_word = m.start;
  REQUIRE(data_word != 0);
  const uint64_t rsp = get_regs(child).rsp;
  // What a timeline point's digest hashes (ReplayController::point_digest).
  auto without_dead_stacks = [&] {
    LiveMemory m = live_memory(child, {rsp});
    return digest_memory(child, m.maps, m.dead);
  };
  const MemoryDigest live = without_dead_stacks(), full = digest_memory(child);

  // 4 KiB below rsp: unused stack, inside the mapping exec made (it reserves 128 KiB more).
  poke(child, rsp - 4096, 0x5afe5afe5afe5afeull);
  CHECK(without_dead_stacks() == live);
  CHECK(digest_memory(child) != full);
  // Just past the red zone's end: still dead.
  poke(child, rsp - 136, 0x1111111111111111ull);
  CHECK(without_dead_stacks() == live);

  SECTION("the red zone is live") {
    poke(child, rsp - 64, 0x2222222222222222ull);
    CHECK(without_dead_stacks() != live);
  }
  SECTION("the stack above rsp is live") {
    uint64_t word = 0;
    iovec local{&word, 8}, remote{reinterpret_cast<void*>(rsp), 8};
    REQUIRE(process_vm_readv(child, &local, 1, &remote, 1, 0) == 8);
    poke(child, rsp, ~word);
    CHECK(without_dead_stacks() != live);
  }
  SECTION("other writable memory is live") {
    poke(child, data_word, 2);
    CHECK(without_dead_stacks() != live);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST_CASE("a point's stack window digest sees the stack near rsp and nothing else", "[digest]") {
  pid_t child = stopped_cat();
  uint64_t data_word = 0;
  for (const ProcMapping& m : read_proc_maps(child))
    if (!data_word && m.write && !m.shared && m.path != "[stack]" && !m.is_special())
      data_word = m.start;
  REQUIRE(data_word != 0);
  const uint64_t rsp = get_regs(child).rsp;
  auto window = [&](const DigestExclusions& ex = {}) {
    return digest_stack_window(child, read_proc_maps(child), ex, rsp);
  };
  const MemoryDigest before = window();
  CHECK(before != digest_memory(child));  // a part only

  SECTION("other writable memory is outside it") {
    poke(child, data_word, 3);
    CHECK(window() == before);
  }
  SECTION("below the red zone is outside it") {
    poke(child, rsp - kStackWindowBelow - 8, 0x3333333333333333ull);
    CHECK(window() == before);
  }
  SECTION("the red zone and the words above rsp are inside it, up to its end") {
    poke(child, rsp - 64, 0x4444444444444444ull);
    MemoryDigest red = window();
    CHECK(red != before);
    // The window's last word, or the stack's where the stack ends first.
    uint64_t top = rsp + kStackWindowAbove;
    for (const ProcMapping& m : read_proc_maps(child))
      if (m.start <= rsp && rsp < m.end) top = std::min(top, m.end);
    poke(child, top - 8, 0x5555555555555555ull);
    CHECK(window() != red);
  }
  SECTION("an excluded range is left out, as from the full digest") {
    const DigestExclusions ex{{rsp + 256, 64}};
    const MemoryDigest kept = window(ex), full = digest_memory(child, read_proc_maps(child), ex);
    poke(child, rsp + 264, 0x6666666666666666ull);
    CHECK(window(ex) == kept);
    CHECK(digest_memory(child, read_proc_maps(child), ex) == full);
    CHECK(window() != before);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

namespace {

/// Pss in KiB of the mapping of process `pid` that holds `addr` (/proc/PID/smaps, proc(5)).
long mapping_pss_kib(pid_t pid, uint64_t addr) {
  FILE* f = fopen(("/proc/" + std::to_string(pid) + "/smaps").c_str(), "r");
  REQUIRE(f);
  char line[512];
  bool in = false;
  long kib = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo = 0, hi = 0;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ') == line + strcspn(line, " "))
      in = addr >= lo && addr < hi;
    else if (in && sscanf(line, "Pss: %ld kB", &kib) == 1)
      break;
  }
  fclose(f);
  return kib;
}

}  // namespace

TEST_CASE("a digest leaves memory shared copy-on-write with a fork shared", "[digest]") {
  // A child with 32 MiB of written heap that forks (as a checkpoint is a fork): each heap page
  // is then in both, and counts half in either's Pss. Reading all of the child's memory for
  // a digest must not give the child copies of its own (process_vm_readv pins what it reads,
  // and pinning a shared anonymous page unshares it: the heap's Pss would double).
  constexpr size_t kHeap = 32u << 20;
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);  // its own group, with its child: both ended by one kill
    char* heap = static_cast<char*>(malloc(kHeap));
    for (size_t i = 0; i < kHeap; i += 4096) heap[i] = char(1 + (i >> 12));
    if (fork() == 0) {
      for (;;) pause();
    }
    uint64_t at = uint64_t(heap) + kHeap / 2;
    (void)!write(ready[1], &at, sizeof at);
    for (;;) pause();
  }
  uint64_t heap = 0;
  REQUIRE(read(ready[0], &heap, sizeof heap) == sizeof heap);
  close(ready[0]);
  close(ready[1]);
  const long before = mapping_pss_kib(child, heap);
  CHECK(before < 20 * 1024);  // shared: about 16 MiB of the 32
  // The digest of the heap's mapping alone: the whole of a sanitizer build's child would be
  // terabytes of shadow mappings, which a read fills in.
  std::vector<ProcMapping> maps;
  for (const ProcMapping& m : read_proc_maps(child))
    if (heap >= m.start && heap < m.end) maps.push_back(m);
  REQUIRE(maps.size() == 1);
  MemoryDigest first = digest_memory(child, maps, {});
  const long after = mapping_pss_kib(child, heap);
  CHECK(after - before < 1024);  // KiB: not the 16 MiB that unsharing the heap adds
  CHECK(digest_memory(child, maps, {}) == first);  // and the same bytes read again
  kill(-child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
}
