// digest_without_dead_stacks (engine/ticks/memory_digest.h) on a real stopped child: bytes below
// the stack's red zone do not change it, bytes in the red zone, above rsp or elsewhere in writable
// memory do, and the full digest_memory sees all of them.
#include "engine/ticks/memory_digest.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>

#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"

using namespace rwd;

namespace {

/// Writes 8 changed bytes into `pid`'s memory at `addr` (process_vm_writev).
void poke(pid_t pid, uint64_t addr, uint64_t value) {
  iovec local{&value, sizeof value}, remote{reinterpret_cast<void*>(addr), sizeof value};
  REQUIRE(process_vm_writev(pid, &local, 1, &remote, 1, 0) == ssize_t(sizeof value));
}

}  // namespace

TEST_CASE("a point's digest leaves out the dead stack below the red zone, and only that",
          "[digest]") {
  // The child is /bin/cat stopped at its exec, not a fork of this test: a sanitizer build's
  // shadow memory (terabytes of writable mappings) would take hours to hash.
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execl("/bin/cat", "cat", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSTOPPED(status));
  uint64_t data_word = 0;  // in the child's writable data (the program's .data or .bss)
  for (const ProcMapping& m : read_proc_maps(child))
    if (!data_word && m.write && !m.shared && m.path != "[stack]" && !m.is_special())
      data_word = m.start;
  REQUIRE(data_word != 0);
  const uint64_t rsp = get_regs(child).rsp;
  const MemoryDigest live = digest_without_dead_stacks(child, {rsp}), full = digest_memory(child);

  // 4 KiB below rsp: unused stack, inside the mapping exec made (it reserves 128 KiB more).
  poke(child, rsp - 4096, 0x5afe5afe5afe5afeull);
  CHECK(digest_without_dead_stacks(child, {rsp}) == live);
  CHECK(digest_memory(child) != full);
  // Just past the red zone's end: still dead.
  poke(child, rsp - 136, 0x1111111111111111ull);
  CHECK(digest_without_dead_stacks(child, {rsp}) == live);

  SECTION("the red zone is live") {
    poke(child, rsp - 64, 0x2222222222222222ull);
    CHECK(digest_without_dead_stacks(child, {rsp}) != live);
  }
  SECTION("the stack above rsp is live") {
    uint64_t word = 0;
    iovec local{&word, 8}, remote{reinterpret_cast<void*>(rsp), 8};
    REQUIRE(process_vm_readv(child, &local, 1, &remote, 1, 0) == 8);
    poke(child, rsp, ~word);
    CHECK(digest_without_dead_stacks(child, {rsp}) != live);
  }
  SECTION("other writable memory is live") {
    poke(child, data_word, 2);
    CHECK(digest_without_dead_stacks(child, {rsp}) != live);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}
