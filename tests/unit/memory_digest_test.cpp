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
  static uint64_t data_word = 1;  // in the child's writable data
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    raise(SIGSTOP);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSTOPPED(status));
  const uint64_t rsp = get_regs(child).rsp;
  const MemoryDigest live = digest_without_dead_stacks(child, {rsp}), full = digest_memory(child);

  // 4 KiB below rsp: a frame that returned long ago (the initial stack mapping is larger).
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
    poke(child, uint64_t(&data_word), 2);
    CHECK(digest_without_dead_stacks(child, {rsp}) != live);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}
