// Finding the instruction that made a watched write (engine/arch/write_insn.h), on real
// encodings: the store of tests/programs/queue_race.c's put() as gcc -O0 emits it.
#include "engine/arch/write_insn.h"

#include <catch2/catch.hpp>

using namespace rwd;

namespace {

/// 64 bytes of code ending at `end`: no-ops, then `tail`.
std::vector<uint8_t> code_ending_with(std::vector<uint8_t> tail) {
  std::vector<uint8_t> code(64 - tail.size(), 0x90);
  code.insert(code.end(), tail.begin(), tail.end());
  return code;
}

}  // namespace

TEST_CASE("the store before a watchpoint trap is found, not the suffix that decodes alike") {
  // shl $5,%rax; sub %rdx,%rax; lea 0x7(%rax),%rdx; mov -0x18(%rbp),%rax;
  // mov %rdx,0x8(%rax) -- whose last three bytes (89 50 08) decode as mov %edx,0x8(%rax).
  auto code = code_ending_with({0x48, 0xc1, 0xe0, 0x05, 0x48, 0x29, 0xd0, 0x48, 0x8d, 0x50, 0x07,
                                0x48, 0x8b, 0x45, 0xe8, 0x48, 0x89, 0x50, 0x08});
  const uint64_t end = 0x5555555552b7;
  Registers after{};
  after.rax = 0x555555558100;  // the slot
  after.rdx = 1234;
  auto w = writing_insn_before(end, code, after, 0x555555558108, 8);
  REQUIRE(w);
  CHECK(*w == end - 4);
  // A write elsewhere was not this instruction's.
  CHECK_FALSE(writing_insn_before(end, code, after, 0x555555558200, 8));
}

TEST_CASE("rip-relative stores count; pushes and calls are not told") {
  // movl $1,0x2ee0(%rip): c7 05 e0 2e 00 00 01 00 00 00 (10 bytes).
  auto code = code_ending_with({0xc7, 0x05, 0xe0, 0x2e, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00});
  const uint64_t end = 0x401000;
  Registers after{};
  auto w = writing_insn_before(end, code, after, end + 0x2ee0, 4);
  REQUIRE(w);
  CHECK(*w == end - 10);
  // push %rbp writes the stack without a memory operand: the caller falls back.
  after.rsp = 0x7ffc0000;
  CHECK_FALSE(writing_insn_before(end, code_ending_with({0x55}), after, 0x7ffc0000, 8));
}

TEST_CASE("code that may write memory is told from code that only reads and computes") {
  // The spin of queue_race.c's put(): mov 0x2ee0(%rip),%rax; mov %rax,%rdx; cmp $0xf,%rdx.
  std::vector<uint8_t> reads = {0x48, 0x8b, 0x05, 0xe0, 0x2e, 0x00, 0x00, 0x48,
                                0x89, 0xc2, 0x48, 0x83, 0xfa, 0x0f, 0x90, 0x90};
  CHECK_FALSE(may_write_memory(reads, 0x401000, 14));
  // The store mov %rdx,0x8(%rax), and a push, a call, a string store and a locked add.
  CHECK(may_write_memory({0x48, 0x89, 0x50, 0x08}, 0x401000, 4));
  CHECK(may_write_memory({0x55}, 0x401000, 1));
  CHECK(may_write_memory({0xe8, 0x00, 0x00, 0x00, 0x00}, 0x401000, 5));
  CHECK(may_write_memory({0xf3, 0x48, 0xab}, 0x401000, 3));
  CHECK(may_write_memory({0xf0, 0x48, 0x01, 0x07}, 0x401000, 4));
  // Only instructions that start in the range count: the store after it does not.
  CHECK_FALSE(may_write_memory({0x48, 0x89, 0xc2, 0x48, 0x89, 0x50, 0x08}, 0x401000, 3));
  // Bytes that do not decode (an instruction cut short) are taken to write.
  CHECK(may_write_memory({0x48, 0x8b}, 0x401000, 2));  // cut short
}
