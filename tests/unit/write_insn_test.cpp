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

TEST_CASE("the instruction before a point: decoded backwards, not across zero fill") {
  // timeline_loop's .init and .plt (non-PIE, gcc 12): _init ends with `ret` at 0x401016, nine
  // zero bytes fill up to .plt at 0x401020, where PLT0 is `push 0x2fca(%rip)` (ff 35, 6 bytes)
  // then `jmp *0x2fcc(%rip)` at 0x401026. Every decoding syncs on the `ret`, and the zeros then
  // cut `ff 35 ...` one byte in (`add %bh,%bh` at 0x40101f, `xor $0x2fca,%eax` at 0x401021):
  // a unanimous wrong answer, which must not be given.
  std::vector<uint8_t> init = {0x48, 0x83, 0xec, 0x08, 0x48, 0x8b, 0x05, 0xd5,
                               0x2f, 0x00, 0x00, 0x48, 0x85, 0xc0, 0x74, 0x02,
                               0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3};
  std::vector<uint8_t> code(64 - 0x26, 0x90);  // nops before 0x401000
  code.insert(code.end(), init.begin(), init.end());
  code.insert(code.end(), 9, 0x00);
  code.insert(code.end(), {0xff, 0x35, 0xca, 0x2f, 0x00, 0x00});
  REQUIRE(code.size() == 64);
  auto y = insn_before(0x401026, code);
  CHECK((!y || *y == 0x401020));
  // Without the fill (the push right after other code), the push is found.
  std::vector<uint8_t> plain(58, 0x90);
  plain.insert(plain.end(), {0xff, 0x35, 0xca, 0x2f, 0x00, 0x00});
  auto p = insn_before(0x401026, plain);
  REQUIRE(p);
  CHECK(*p == 0x401020);
  // compute_loop.c's loop (-O0, PIE): rip-relative displacements hold zero bytes, which some
  // decodings start on; that is not fill. The instruction before the store to `half` at
  // 0x11b1 is `mov 0x4e4f(%rip),%rax` at 0x11aa.
  std::vector<uint8_t> loop = {0x8b, 0x45, 0xf8, 0x48, 0x01, 0xd0, 0x48, 0x89, 0x05, 0x82, 0x4e,
                               0x00, 0x00, 0x48, 0x8b, 0x05, 0x7b, 0x4e, 0x00, 0x00, 0x48, 0xc1,
                               0xe8, 0x1d, 0x48, 0x89, 0xc2, 0x48, 0x8b, 0x05, 0x6d, 0x4e, 0x00,
                               0x00, 0x48, 0x31, 0xd0, 0x48, 0x89, 0x05, 0x63, 0x4e, 0x00, 0x00,
                               0x48, 0x8b, 0x45, 0xe8, 0x48, 0xd1, 0xe8, 0x48, 0x39, 0x45, 0xf8,
                               0x75, 0x0e, 0x48, 0x8b, 0x05, 0x4f, 0x4e, 0x00, 0x00};
  REQUIRE(loop.size() == 64);
  auto l = insn_before(0x5555555551b1, loop);
  REQUIRE(l);
  CHECK(*l == 0x5555555551aa);
  // Inside a function: mov 0x2ee0(%rip),%rax; mov %rax,%rdx; the one before `end` is the mov.
  std::vector<uint8_t> body(57, 0x90);
  body.insert(body.end(), {0x48, 0x8b, 0x05, 0xe0, 0x2e, 0x00, 0x00});
  auto b = insn_before(0x500000, body);
  REQUIRE(b);
  CHECK(*b == 0x500000 - 7);
}

TEST_CASE("instructions a single step runs plainly are told from those the replay handles") {
  // bench/long_sim.c's advance(), built -O0: i++, the loop's test, its jle back.
  CHECK(plain_to_step({0x83, 0x45, 0xfc, 0x01}, 0x12bd));              // addl $1, -4(%rbp)
  CHECK(plain_to_step({0x0f, 0x8e, 0x50, 0xff, 0xff, 0xff}, 0x12c5));  // jle (back)
  CHECK(plain_to_step({0xe8, 0x00, 0x00, 0x00, 0x00}, 0x1000));        // call
  CHECK_FALSE(plain_to_step({0x0f, 0x05}, 0x1000));                    // syscall
  CHECK_FALSE(plain_to_step({0x0f, 0xa2}, 0x1000));                    // cpuid
  CHECK_FALSE(plain_to_step({0x0f, 0x31}, 0x1000));                    // rdtsc
  CHECK_FALSE(plain_to_step({0xcc}, 0x1000));                          // int3
  CHECK_FALSE(plain_to_step({0xf3, 0xa4}, 0x1000));                    // rep movsb
  CHECK_FALSE(plain_to_step({0x48, 0x8b}, 0x1000));                    // cut short
}

TEST_CASE("plain stores: every mov form to memory, with its address, bytes and next address") {
  Registers r{};
  r.rax = 0x1122334455667788;
  r.rdx = 0x406000;
  r.r9 = 0xa1b2c3d4e5f60718;
  const uint64_t at = 0x4011be;
  auto store = [&](std::vector<uint8_t> code) { return plain_store(code, at, r); };
  using Bytes = std::vector<uint8_t>;

  auto b = store({0x88, 0x42, 0x48});  // mov %al,0x48(%rdx)
  REQUIRE(b);
  CHECK(b->addr == 0x406048);
  CHECK(b->bytes == Bytes{0x88});
  CHECK(b->next == at + 3);
  auto h = store({0x88, 0x62, 0x49});  // mov %ah,0x49(%rdx)
  REQUIRE(h);
  CHECK(h->bytes == Bytes{0x77});
  auto w = store({0x66, 0x89, 0x42, 0x4c});  // mov %ax,0x4c(%rdx)
  REQUIRE(w);
  CHECK(w->bytes == Bytes{0x88, 0x77});
  CHECK(w->next == at + 4);
  auto d = store({0x89, 0x42, 0x50});  // mov %eax,0x50(%rdx)
  REQUIRE(d);
  CHECK(d->bytes == Bytes{0x88, 0x77, 0x66, 0x55});
  auto q = store({0x4c, 0x89, 0x0a});  // mov %r9,(%rdx)
  REQUIRE(q);
  CHECK(q->addr == 0x406000);
  CHECK(q->bytes == Bytes{0x18, 0x07, 0xf6, 0xe5, 0xd4, 0xc3, 0xb2, 0xa1});
  // movq $-5,0x60(%rdx): an imm32 sign-extended to 8 bytes.
  auto n = store({0x48, 0xc7, 0x42, 0x60, 0xfb, 0xff, 0xff, 0xff});
  REQUIRE(n);
  CHECK(n->addr == 0x406060);
  CHECK(n->bytes == Bytes{0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  auto i8 = store({0xc6, 0x42, 0x4a, 0x5a});  // movb $0x5a,0x4a(%rdx)
  REQUIRE(i8);
  CHECK(i8->bytes == Bytes{0x5a});
  // movl $1,0x2ee0(%rip): rip-relative, from the next instruction.
  auto rel = store({0xc7, 0x05, 0xe0, 0x2e, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00});
  REQUIRE(rel);
  CHECK(rel->addr == at + 10 + 0x2ee0);
  CHECK(rel->bytes == Bytes{1, 0, 0, 0});

  // Anything else is run, not made: a load, an add (flags), a locked or string store, a
  // segment register, a vector store, 32-bit addressing, undecodable bytes.
  CHECK_FALSE(store({0x48, 0x8b, 0x02}));        // mov (%rdx),%rax
  CHECK_FALSE(store({0x48, 0x01, 0x02}));        // add %rax,(%rdx)
  CHECK_FALSE(store({0xf0, 0x48, 0x01, 0x02}));  // lock add %rax,(%rdx)
  CHECK_FALSE(store({0x48, 0x87, 0x02}));        // xchg %rax,(%rdx)
  CHECK_FALSE(store({0xf3, 0xaa}));              // rep stos %al,(%rdi)
  CHECK_FALSE(store({0x8c, 0x02}));              // mov %es,(%rdx)
  CHECK_FALSE(store({0xf3, 0x0f, 0x7f, 0x02}));  // movdqu %xmm0,(%rdx)
  CHECK_FALSE(store({0x67, 0x89, 0x02}));        // mov %eax,(%edx)
  CHECK_FALSE(store({0x48, 0x89, 0xc2}));        // mov %rax,%rdx
  CHECK_FALSE(store({0x0f, 0x0b}));              // ud2
  CHECK_FALSE(store({0x48}));                    // cut short
}
