// The point trampoline (engine/replay/point_trampoline.h, engine/arch/displaced_code.h): the
// relocation of moved instructions, the search for a jump displacement with int3 bytes, and
// the generated machine code itself, run in this process on loops written in assembly. A
// SIGTRAP handler plays the replayer's part: it checks each trap and sends the thread on to
// the trampoline's copies, as reach_point does through ptrace.
#include "engine/replay/point_trampoline.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "engine/arch/displaced_code.h"
#include "engine/os/proc.h"

using namespace rwd;

extern "C" uint64_t tramp_test_plain(uint64_t n);
extern "C" uint64_t jumpy_loop(uint64_t n);  // tests/programs/jumpy_loop.S
extern "C" char tramp_test_plain_point[], jumpy_loop_point[];
extern "C" uint64_t tramp_test_counter;  ///< counts tramp_test_plain's passes (in memory)
extern "C" uint64_t tramp_test_stack(uint64_t n);
extern "C" char tramp_test_stack_point[];

// A loop in a page of its own (the test writes into it), with a RIP-relative load and store
// after its point. Like jumpy_loop, it zeroes every other general-purpose register, so that
// two calls from the same place pass its point with the same registers.
__asm__(
    ".pushsection .text.tramp_test, \"ax\"\n"
    ".balign 4096\n"
    ".globl tramp_test_plain\n"
    "tramp_test_plain:\n"
    "  push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15\n"
    "  xor %eax, %eax; xor %ecx, %ecx; xor %edx, %edx; xor %ebx, %ebx; xor %ebp, %ebp\n"
    "  xor %esi, %esi; xor %r8d, %r8d; xor %r9d, %r9d; xor %r10d, %r10d; xor %r11d, %r11d\n"
    "  xor %r12d, %r12d; xor %r13d, %r13d; xor %r14d, %r14d; xor %r15d, %r15d\n"
    "1:\n"
    "  add $1, %rax\n"
    ".globl tramp_test_plain_point\n"
    "tramp_test_plain_point:\n"
    "  lea (%rcx,%rax,2), %rcx\n"             // 4 bytes: a boundary inside the jump
    "  mov tramp_test_counter(%rip), %rdx\n"  // RIP-relative: moved with a new displacement
    "  add $1, %rdx\n"
    "  mov %rdx, tramp_test_counter(%rip)\n"
    "  cmp %rdi, %rax\n"
    "  jb 1b\n"
    "  mov %rcx, %rax\n"
    "  pop %r15; pop %r14; pop %r13; pop %r12; pop %rbp; pop %rbx\n"
    "  ret\n"
    ".balign 4096\n"
    // A loop whose registers are the same at every pass of its point: its count is in the
    // stack, 144 bytes above rsp (beyond an 8-bit displacement), as a callee keeps a
    // caller's saved register; the 20 words from rsp up start zeroed. Returns the count.
    ".globl tramp_test_stack\n"
    "tramp_test_stack:\n"
    "  push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15\n"
    "  sub $160, %rsp; mov %rsp, %rdx; mov $20, %ecx\n"
    "2:\n"
    "  movq $0, (%rdx); add $8, %rdx; sub $1, %ecx; jnz 2b\n"
    "  xor %eax, %eax; xor %ecx, %ecx; xor %edx, %edx; xor %ebx, %ebx; xor %ebp, %ebp\n"
    "  xor %esi, %esi; xor %r8d, %r8d; xor %r9d, %r9d; xor %r10d, %r10d; xor %r11d, %r11d\n"
    "  xor %r12d, %r12d; xor %r13d, %r13d; xor %r14d, %r14d; xor %r15d, %r15d\n"
    "1:\n"
    ".globl tramp_test_stack_point\n"
    "tramp_test_stack_point:\n"
    "  mov 144(%rsp), %rax\n"  // moved into the trampoline, rsp-relative
    "  add $1, %rax\n"
    "  mov %rax, 144(%rsp)\n"
    "  cmp %rdi, %rax\n"
    "  mov $0, %eax\n"  // flags kept: rax is 0 again at the point
    "  jb 1b\n"
    "  mov 144(%rsp), %rax\n"
    "  add $160, %rsp\n"
    "  pop %r15; pop %r14; pop %r13; pop %r12; pop %rbp; pop %rbx\n"
    "  ret\n"
    ".balign 4096\n"
    ".popsection\n"
    ".data\n"
    ".globl tramp_test_counter\n"
    "tramp_test_counter: .quad 0\n"
    ".text\n");

TEST_CASE("moved instructions keep their RIP-relative operands and branch targets") {
  // mov rax, [rip+0x10]; jne +5 (rel8); nop
  const uint8_t code[] = {0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, 0x75, 0x05, 0x90};
  auto d = displace_instructions(code, sizeof code, 0x1000, 0x2000, 8);
  REQUIRE(d);
  CHECK(d->covered == 9);
  CHECK(d->boundaries == std::vector<size_t>{7});
  CHECK(d->moved_boundaries == std::vector<size_t>{7});
  REQUIRE(d->code.size() == 13);  // the jne became 0f 85 rel32
  int32_t disp = 0, rel = 0;
  std::memcpy(&disp, &d->code[3], 4);
  CHECK(0x2000 + 7 + int64_t(disp) == 0x1000 + 7 + 0x10);  // same data address
  CHECK(d->code[7] == 0x0f);
  CHECK(d->code[8] == 0x85);
  std::memcpy(&rel, &d->code[9], 4);
  CHECK(0x2000 + 13 + int64_t(rel) == 0x1009 + 5);  // same branch target

  // A call moves only when asked, as the last instruction: after it, the return would land
  // in the patch.
  const uint8_t call[] = {0xe8, 0, 0, 0, 0, 0x90};
  const uint8_t indirect_call[] = {0xff, 0xd0, 0x90, 0x90, 0x90};  // call rax
  const uint8_t syscall[] = {0x0f, 0x05, 0x90, 0x90, 0x90};
  const uint8_t loop[] = {0xe2, 0xfe, 0x90, 0x90, 0x90};
  CHECK_FALSE(displace_instructions(call, sizeof call, 0x1000, 0x2000, 5));
  CHECK(displace_instructions(call, sizeof call, 0x1000, 0x2000, 5, true));
  CHECK_FALSE(displace_instructions(call, sizeof call, 0x1000, 0x2000, 6, true));
  CHECK_FALSE(displace_instructions(indirect_call, sizeof indirect_call, 0x1000, 0x2000, 5, true));
  CHECK_FALSE(displace_instructions(syscall, sizeof syscall, 0x1000, 0x2000, 5));
  CHECK_FALSE(displace_instructions(loop, sizeof loop, 0x1000, 0x2000, 5));
  // A data address out of a 32-bit displacement's reach from the copy.
  CHECK_FALSE(displace_instructions(code, sizeof code, 0x1000, 0x200000000, 5));
}

TEST_CASE("a moved call returns where the original would, to the callee it called") {
  // One executable page: the original `mov ecx, 7; call callee` at 0 and a `ret` after it, the
  // callee at 0x200 (rax = its return address, rdx = rcx), and the moved copy at 0x100,
  // which this test calls: the callee must return to the original's next byte (5 + 3), whose
  // ret comes back here.
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* mem =
      mmap(nullptr, page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  auto* b = static_cast<uint8_t*>(mem);
  const uint64_t base = uint64_t(b);
  const uint8_t original[] = {0xb9, 7, 0, 0, 0, 0xe8, 0xf6, 0x01, 0, 0, 0xc3};  // call +0x1f6
  std::memcpy(b, original, sizeof original);
  const uint8_t callee[] = {0x48, 0x8b, 0x04, 0x24, 0x48, 0x89, 0xca, 0xc3};
  std::memcpy(b + 0x200, callee, sizeof callee);
  auto d = displace_instructions(original, sizeof original, base, base + 0x100, 6, true);
  REQUIRE(d);
  CHECK(d->covered == 10);
  CHECK(d->boundaries == std::vector<size_t>{5});
  std::memcpy(b + 0x100, d->code.data(), d->code.size());
  uint64_t ret = 0, rdx = 0;
  // Past the red zone (128 bytes below rsp), which this function's locals may use.
  asm volatile("sub $128, %%rsp\n call *%2\n add $128, %%rsp"
               : "=a"(ret), "=d"(rdx)
               : "r"(b + 0x100)
               : "rcx", "memory", "cc");
  CHECK(ret == base + 10);  // the original call's return address
  CHECK(rdx == 7);          // the instruction moved before it ran too
  munmap(mem, page);
}

TEST_CASE("a jump displacement is found with the bytes a boundary needs") {
  CHECK(next_masked_match(0, 0, 0) == 0u);
  CHECK(next_masked_match(5, 0xff, 0xcc) == 0xccu);
  CHECK(next_masked_match(0xcd, 0xff, 0xcc) == 0x1ccu);
  CHECK(next_masked_match(0x12345678, 0xff0000, 0xcc0000) == 0x12cc0000u);
  CHECK(next_masked_match(0x12cd0001, 0xff0000, 0xcc0000) == 0x13cc0000u);
  CHECK(next_masked_match(0x12cd0001, 0xff00ff, 0xcc00cc) == 0x13cc00ccu);
  CHECK_FALSE(next_masked_match(0xcd000000, 0xff000000, 0xcc000000));
  // Brute force over a small space: the result is the first match.
  for (uint64_t from : {0ull, 0x1234ull, 0xfff0ull}) {
    auto m = next_masked_match(from, 0xff00, 0xcc00);
    REQUIRE(m);
    uint64_t u = from;
    while ((u & 0xff00) != 0xcc00) ++u;
    CHECK(*m == u);
  }
}

namespace {

/// Where tramp_test_stack keeps its count: bytes above rsp at its point.
constexpr uint64_t kCountOffset = 144;

/// What the SIGTRAP handler knows of the trampoline in place, and what it saw.
struct Run {
  const PointTrampoline* plan = nullptr;
  uint64_t stop_at_pass = 0;  ///< the pass whose registers are wanted (rax's value there)
  uint64_t matches = 0, interior = 0, passes = 0;
  greg_t regs[NGREG] = {};
  uint64_t stack0 = 0;  ///< the word at the program's rsp + kCountOffset at the last match
  /// Int3: the word there that the wanted pass has too (UINT64_MAX: any).
  uint64_t want_stack0 = UINT64_MAX;
  /// Whether the loop is tramp_test_stack, whose frame holds that word (other loops' rsp +
  /// kCountOffset is the test's own frame, which AddressSanitizer guards).
  bool stack_loop = false;
};
Run g_run;

void on_trap(int, siginfo_t*, void* ctx) {
  auto* uc = static_cast<ucontext_t*>(ctx);
  greg_t* r = uc->uc_mcontext.gregs;
  const PointTrampoline& p = *g_run.plan;
  uint64_t rip = uint64_t(r[REG_RIP]);
  if (p.kind == PatchKind::Count && rip == p.count_trap) {
    // The pass asked for: the counter, in the data page, says which.
    ++g_run.matches;
    std::memcpy(g_run.regs, r, sizeof g_run.regs);
    std::memcpy(&g_run.passes, reinterpret_cast<void*>(p.count_addr), 8);
    r[REG_RIP] = greg_t(p.resume);
    return;
  }
  if (rip == p.match_trap) {
    // Registers matched (Jump), or a pass of the point (Int3): the program's registers.
    ++g_run.passes;
    uint64_t word = 0;
    if (g_run.stack_loop) std::memcpy(&word, reinterpret_cast<void*>(r[REG_RSP] + kCountOffset), 8);
    if (p.kind == PatchKind::Jump ||
        (uint64_t(r[REG_RAX]) == g_run.stop_at_pass &&
         (g_run.want_stack0 == UINT64_MAX || word == g_run.want_stack0))) {
      ++g_run.matches;
      std::memcpy(g_run.regs, r, sizeof g_run.regs);
      g_run.regs[REG_RIP] = greg_t(p.point);
      g_run.stack0 = word;
    }
    r[REG_RIP] = greg_t(p.resume);
    return;
  }
  for (const auto& [from, to] : p.moved)
    if (rip == from + 1) {
      ++g_run.interior;
      r[REG_RIP] = greg_t(to);
      return;
    }
  abort();  // a trap the test did not expect
}

Registers to_registers(const greg_t* g) {
  Registers r{};
  r.rax = g[REG_RAX], r.rbx = g[REG_RBX], r.rcx = g[REG_RCX], r.rdx = g[REG_RDX];
  r.rsi = g[REG_RSI], r.rdi = g[REG_RDI], r.rbp = g[REG_RBP], r.rsp = g[REG_RSP];
  r.r8 = g[REG_R8], r.r9 = g[REG_R9], r.r10 = g[REG_R10], r.r11 = g[REG_R11];
  r.r12 = g[REG_R12], r.r13 = g[REG_R13], r.r14 = g[REG_R14], r.r15 = g[REG_R15];
  r.rip = g[REG_RIP], r.eflags = g[REG_EFL];
  return r;
}

/// Runs `loop(n)` with `plan` installed in this process; returns its result.
uint64_t run_patched(uint64_t (*loop)(uint64_t), uint64_t n, const PointTrampoline& plan) {
  void* m = mmap(reinterpret_cast<void*>(plan.map_start), plan.map_len,
                 PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  REQUIRE(m == reinterpret_cast<void*>(plan.map_start));
  std::memcpy(reinterpret_cast<void*>(plan.addr), plan.code.data(), plan.code.size());
  if (!plan.data.empty())
    std::memcpy(reinterpret_cast<void*>(plan.data_addr), plan.data.data(), plan.data.size());
  auto* point = reinterpret_cast<uint8_t*>(plan.point);
  auto* page = reinterpret_cast<void*>(plan.point & ~uint64_t(4095));
  REQUIRE(mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == 0);
  std::vector<uint8_t> saved(point, point + plan.patch.size());
  std::memcpy(point, plan.patch.data(), plan.patch.size());
  g_run.plan = &plan;
  struct sigaction sa {
  }, old{};
  sa.sa_sigaction = on_trap;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGTRAP, &sa, &old);
  tramp_test_counter = 0;
  uint64_t result = loop(n);
  sigaction(SIGTRAP, &old, nullptr);
  std::memcpy(point, saved.data(), saved.size());
  mprotect(page, 4096, PROT_READ | PROT_EXEC);
  munmap(m, plan.map_len);
  return result;
}

/// Finds pass `k` of `loop`'s point with an int3 trampoline, then with the register-compare
/// one, and checks that both see the same registers there and leave the loop's result alone.
void check_loop(uint64_t (*loop)(uint64_t), char* point_label, uint64_t n, uint64_t k,
                bool expect_interior) {
  const uint64_t point = reinterpret_cast<uint64_t>(point_label);
  tramp_test_counter = 0;
  const uint64_t expected = loop(n);
  std::vector<uint8_t> code(point_label, point_label + 32);
  auto maps = read_proc_maps(getpid());

  auto int3 = plan_point_trampoline(PatchKind::Int3, code, point, Registers{}, maps,
                                    proc_brk_start(getpid()));
  REQUIRE(int3);
  CHECK(int3->patch == std::vector<uint8_t>{0xcc});
  g_run = Run{};
  g_run.stop_at_pass = k;
  CHECK(run_patched(loop, n, *int3) == expected);
  CHECK(g_run.passes == n);  // a stop at every pass
  REQUIRE(g_run.matches == 1);
  Registers want = to_registers(g_run.regs);
  CHECK(want.rax == k);

  auto jump =
      plan_point_trampoline(PatchKind::Jump, code, point, want, maps, proc_brk_start(getpid()));
  REQUIRE(jump);
  REQUIRE(jump->patch.size() >= 5);
  CHECK(jump->patch[0] == 0xe9);
  for (const auto& [from, to] : jump->moved) CHECK(jump->patch[from - point] == 0xcc);
  int64_t rel = int64_t(jump->addr) - int64_t(point + 5);
  int32_t rel32 = 0;
  std::memcpy(&rel32, &jump->patch[1], 4);
  CHECK(rel32 == rel);
  g_run = Run{};
  CHECK(run_patched(loop, n, *jump) == expected);
  CHECK(g_run.matches == 1);  // only the pass whose registers are the wanted ones
  Registers got = to_registers(g_run.regs);
  CHECK(got.rax == k);
  CHECK(got.rsp == want.rsp);
  CHECK(got.eflags == want.eflags);  // flags survive the compares
  CHECK(got.rcx == want.rcx);
  if (expect_interior)
    CHECK(g_run.interior >= n - 1);  // the loop's jumps into the patch went on at the copies
  else
    CHECK(g_run.interior == 0);
}

}  // namespace

TEST_CASE("a register-compare trampoline traps only at the wanted pass", "[trampoline]") {
  SECTION("a loop with a RIP-relative load and store after the point") {
    check_loop(tramp_test_plain, tramp_test_plain_point, 5000, 3217, false);
  }
  SECTION("a loop that jumps into the patched bytes") {
    check_loop(jumpy_loop, jumpy_loop_point, 5000, 4000, true);
  }
}

TEST_CASE("a register-compare trampoline with stack words traps only at their pass",
          "[trampoline]") {
  // Every pass of the point has the same registers; only the count in the stack tells them
  // apart (a recorded point's Event::stack_words).
  const uint64_t point = reinterpret_cast<uint64_t>(tramp_test_stack_point);
  const uint64_t n = 5000, k = 3217;
  REQUIRE(tramp_test_stack(n) == n);
  std::vector<uint8_t> code(tramp_test_stack_point, tramp_test_stack_point + 32);
  auto maps = read_proc_maps(getpid());
  auto int3 = plan_point_trampoline(PatchKind::Int3, code, point, Registers{}, maps,
                                    proc_brk_start(getpid()));
  REQUIRE(int3);
  g_run = Run{.stack_loop = true};
  g_run.stop_at_pass = 0;  // rax: 0 at every pass
  g_run.want_stack0 = k - 1;
  CHECK(run_patched(tramp_test_stack, n, *int3) == n);
  CHECK(g_run.passes == n);
  REQUIRE(g_run.matches == 1);
  const Registers want = to_registers(g_run.regs);  // pass k's (its flags are its own)

  // Registers alone: a trap at every pass.
  auto plain =
      plan_point_trampoline(PatchKind::Jump, code, point, want, maps, proc_brk_start(getpid()));
  REQUIRE(plain);
  g_run = Run{.stack_loop = true};
  CHECK(run_patched(tramp_test_stack, n, *plain) == n);
  CHECK(g_run.matches == n);

  // With the 20 words at pass k (zeroes, and the count before it): that pass only. Words 16
  // and up are read with a 32-bit displacement.
  PassChecks words{.stack_words = std::vector<uint64_t>(20, 0)};
  words.stack_words[kCountOffset / 8] = k - 1;
  auto jump = plan_point_trampoline(PatchKind::Jump, code, point, want, maps,
                                    proc_brk_start(getpid()), words);
  REQUIRE(jump);
  CHECK(jump->code.size() > plain->code.size());
  g_run = Run{.stack_loop = true};
  CHECK(run_patched(tramp_test_stack, n, *jump) == n);  // the loop's result is untouched
  CHECK(g_run.matches == 1);
  CHECK(g_run.stack0 == k - 1);
  Registers got = to_registers(g_run.regs);
  CHECK(got.rsp == want.rsp);
  CHECK(got.rax == 0);
  CHECK(got.eflags == want.eflags);  // flags survive the word compares (saved on their path)

  // A word that no pass has: no trap at all.
  PassChecks never{.stack_words = {n + 7}};
  auto none = plan_point_trampoline(PatchKind::Jump, code, point, want, maps,
                                    proc_brk_start(getpid()), never);
  REQUIRE(none);
  g_run = Run{.stack_loop = true};
  CHECK(run_patched(tramp_test_stack, n, *none) == n);
  CHECK(g_run.matches == 0);
}

TEST_CASE("a counting trampoline stops at the pass asked for and counts every pass",
          "[trampoline]") {
  struct Case {
    uint64_t (*loop)(uint64_t);
    char* label;
    bool interior;
  };
  for (const Case& c : {Case{tramp_test_plain, tramp_test_plain_point, false},
                        Case{jumpy_loop, jumpy_loop_point, true}}) {
    auto* loop = c.loop;
    char* label = c.label;
    bool interior = c.interior;
    const uint64_t point = reinterpret_cast<uint64_t>(label);
    tramp_test_counter = 0;
    const uint64_t expected = loop(5000);
    std::vector<uint8_t> code(label, label + 32);
    PassChecks checks{.registers = false, .stop_at = 1234};
    auto count = plan_point_trampoline(PatchKind::Count, code, point, Registers{},
                                       read_proc_maps(getpid()), proc_brk_start(getpid()), checks);
    REQUIRE(count);
    REQUIRE(count->count_trap != 0);
    CHECK(count->count_addr >= count->data_addr);
    CHECK(count->count_addr < count->data_addr + 4096);
    g_run = Run{};
    CHECK(run_patched(loop, 5000, *count) == expected);  // the loop's result is untouched
    CHECK(g_run.matches == 1);                           // one trap: pass 1234
    CHECK(g_run.passes == 1234);
    if (interior) CHECK(g_run.interior > 0);
    // The loops count their passes in rax: the next pass asked for stops one later.
    uint64_t rax = uint64_t(g_run.regs[REG_RAX]);
    checks.stop_at = 1235;
    auto next = plan_point_trampoline(PatchKind::Count, code, point, Registers{},
                                      read_proc_maps(getpid()), proc_brk_start(getpid()), checks);
    REQUIRE(next);
    g_run = Run{};
    CHECK(run_patched(loop, 5000, *next) == expected);
    CHECK(g_run.passes == 1235);
    CHECK(uint64_t(g_run.regs[REG_RAX]) == rax + 1);
  }
}

TEST_CASE("a trampoline is not mapped where the program's heap would grow", "[trampoline]") {
  // A position-independent program as replay lays it out (no randomization): its code and
  // data end where its heap starts, before the heap's first page exists (no "[heap]" line).
  // An interval checkpoint's replay once mapped a counting trampoline there, and the
  // program's next brk(2) failed where the recorded one had grown the heap.
  const uint64_t code_start = 0x555555555000, data_end = 0x55555555c000;
  auto mapping = [](uint64_t start, uint64_t end, const char* path) {
    ProcMapping m;
    m.start = start;
    m.end = end;
    m.read = true;
    m.path = path;
    return m;
  };
  std::vector<ProcMapping> maps = {
      mapping(0x555555554000, code_start, ""), mapping(code_start, 0x555555556000, ""),
      mapping(0x555555556000, data_end, ""), mapping(0x7ffff7dd3000, 0x7ffff7ff0000, ""),
      mapping(0x7ffffffde000, 0x7ffffffff000, "[stack]")};
  // mov eax, 1, then nops: no instruction starts inside the jump's displacement, so any
  // address in reach will do and the nearest gap is taken.
  std::vector<uint8_t> code(32, 0x90);
  const uint8_t mov[] = {0xb8, 0x01, 0x00, 0x00, 0x00};
  std::copy(std::begin(mov), std::end(mov), code.begin());
  const uint64_t x = code_start + 0x170;
  // Without the heap's start, the nearest gap is the one the heap grows into.
  auto anywhere = plan_point_trampoline(PatchKind::Count, code, x, Registers{}, maps, 0);
  REQUIRE(anywhere);
  CHECK(anywhere->map_start == data_end);
  auto placed = plan_point_trampoline(PatchKind::Count, code, x, Registers{}, maps, data_end);
  REQUIRE(placed);
  CHECK(placed->map_start + placed->map_len <= 0x555555554000);  // below the program
  // Once the heap has pages, the room above them up to the next mapping is kept too.
  maps.insert(maps.begin() + 3, mapping(data_end, data_end + 0x21000, "[heap]"));
  auto grown = plan_point_trampoline(PatchKind::Count, code, x, Registers{}, maps, data_end);
  REQUIRE(grown);
  CHECK(grown->map_start + grown->map_len <= 0x555555554000);
}

// The end of this program's bss (end(3)): where its program break starts, or below it by
// brk's randomization.
extern "C" char end;

TEST_CASE("proc_brk_start tells where this process's heap starts", "[trampoline]") {
  // The heap guard above is only as good as this: /proc/PID/stat's field 48 (arg_start, on
  // the stack) read for start_brk (47) left it guarding nothing, and replays mapped counting
  // trampolines where the heap grows (a divergence at printf's first brk(2)).
  const uint64_t start = proc_brk_start(getpid());
  const uint64_t bss_end = reinterpret_cast<uint64_t>(&end);
  const uint64_t now = reinterpret_cast<uint64_t>(sbrk(0));
  CHECK(start >= bss_end);
  CHECK(start <= now);
  CHECK(start % 4096 == 0);
  CHECK(start <
        bss_end + (1ull << 30) + 4096);  // brk randomization: 1 GiB (arch/x86/kernel/process.c)
}

TEST_CASE("is_preload_library names the preload library as recorded and as saved", "[trampoline]") {
  // The counting trampolines keep out of its stub area and the unwinder reads its stubs: both
  // find the library by this test, in a recording (the build's library) and in a replay (the
  // trace's saved copy, files/librewind_preload.so-N).
  CHECK(is_preload_library("/work/build/librewind_preload.so"));
  CHECK(is_preload_library("/tmp/t/true-0/files/librewind_preload.so-2"));
  CHECK(is_preload_library("/tmp/t/files/librewind_preload.so-2 (deleted)"));
  CHECK(is_preload_library("librewind_preload.so"));
  CHECK_FALSE(is_preload_library("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  CHECK_FALSE(is_preload_library("/tmp/librewind_preload.so.d/libc.so.6"));
  CHECK_FALSE(is_preload_library("/tmp/my-librewind_preload.so"));
  CHECK_FALSE(is_preload_library("[heap]"));
}

// A call at a label, for point_trampoline_fits: the jump would have to move it.
__asm__(
    ".text\n"
    ".globl tramp_test_call_site\n"
    "tramp_test_call_site:\n"
    "  call tramp_test_plain\n"
    "  ret\n");
extern "C" char tramp_test_call_site[];

TEST_CASE("the recorder's test of where a point's trampoline fits", "[trampoline]") {
  Registers r{};
  r.rip = reinterpret_cast<uint64_t>(tramp_test_plain_point);
  CHECK(point_trampoline_fits(getpid(), r));
  r.rip = reinterpret_cast<uint64_t>(tramp_test_call_site);
  CHECK_FALSE(point_trampoline_fits(getpid(), r));  // a call in the jump's five bytes
  r.rip = reinterpret_cast<uint64_t>(&tramp_test_counter);
  CHECK_FALSE(point_trampoline_fits(getpid(), r));  // not code
  std::vector<ProcMapping> maps = read_proc_maps(getpid());
  const ProcMapping* m = patchable_code_mapping(maps, reinterpret_cast<uint64_t>(tramp_test_plain));
  REQUIRE(m);
  CHECK(m->exec);
  CHECK_FALSE(m->write);
  CHECK(patchable_code_mapping(maps, 0) == nullptr);
}

TEST_CASE("step_kind: which instructions a signal is stepped past", "[trampoline]") {
  auto kind = [](std::vector<uint8_t> code) { return step_kind(code.data(), code.size(), 0x1000); };
  CHECK(kind({0x48, 0x89, 0xde}) == StepKind::Plain);                     // mov %rbx,%rsi
  CHECK(kind({0xe8, 0x10, 0x00, 0x00, 0x00}) == StepKind::Plain);         // call rel32
  CHECK(kind({0xeb, 0xfe}) == StepKind::Plain);                           // jmp to itself
  CHECK(kind({0xf3, 0xaa}) == StepKind::Plain);                           // rep stosb
  CHECK(kind({0x9d}) == StepKind::Plain);                                 // popf
  CHECK(kind({0x75, 0xec}) == StepKind::Branch);                          // jne
  CHECK(kind({0x0f, 0x84, 0x10, 0x00, 0x00, 0x00}) == StepKind::Branch);  // je rel32
  CHECK(kind({0xe2, 0xfe}) == StepKind::Branch);                          // loop
  CHECK(kind({0xe3, 0x02}) == StepKind::Branch);                          // jrcxz
  CHECK(kind({0xc3}) == StepKind::Branch);                                // ret
  CHECK(kind({0xff, 0xd0}) == StepKind::Branch);                          // call *%rax
  CHECK(kind({0xff, 0xe0}) == StepKind::Branch);                          // jmp *%rax
  CHECK(kind({0xff, 0x24, 0xc5, 0, 0, 0, 0}) == StepKind::Branch);        // jmp *0x0(,%rax,8)
  CHECK(kind({0x9c}) == StepKind::None);                                  // pushf: saves TF
  CHECK(kind({0x0f, 0x05}) == StepKind::None);                            // syscall
  CHECK(kind({0xcd, 0x80}) == StepKind::None);                            // int $0x80
  CHECK(kind({0xcc}) == StepKind::None);                                  // int3
  CHECK(kind({0x48, 0xcf}) == StepKind::None);                            // iretq
  CHECK(kind({0xff, 0x18}) == StepKind::None);                            // lcall *(%rax)
  CHECK(kind({0xcb}) == StepKind::None);                                  // lret
  CHECK(kind({0x0f, 0x0b}) == StepKind::None);                            // ud2
  CHECK(kind({0xf4}) == StepKind::None);                                  // hlt
  CHECK(kind({0xc7, 0xf8, 0, 0, 0, 0}) == StepKind::None);                // xbegin
  CHECK(kind({0x0f}) == StepKind::None);                                  // cut short
}

TEST_CASE("in_short_loop: which preemption points the recorder steps through a lap of",
          "[trampoline]") {
  auto loop = [](std::vector<uint8_t> code, size_t max) {
    return in_short_loop(code.data(), code.size(), 0x1000, max);
  };
  // mov 0x10(%rip),%rax; add $1,%rax; mov %rax,0x10(%rip); test %eax,%eax; je back to x
  const std::vector<uint8_t> counter = {0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0x48, 0x83, 0xc0, 0x01,
                                        0x48, 0x89, 0x05, 0x10, 0, 0, 0, 0x85, 0xc0, 0x74, 0xea};
  CHECK(loop(counter, 64));
  CHECK(!loop(counter, 4));  // the jump back is the fifth instruction
  // The same loop entered after its first instruction: the jump goes back before x.
  std::vector<uint8_t> inside(counter.begin() + 7, counter.end());
  CHECK(in_short_loop(inside.data(), inside.size(), 0x1007, 64));
  CHECK(!loop({0x48, 0x89, 0xde, 0xeb, 0x10}, 64));        // a jump forward, then nothing
  CHECK(!loop({0x48, 0x89, 0xde, 0xe8, 0, 0, 0, 0}, 64));  // a call first
  CHECK(!loop({0x0f, 0x05, 0xeb, 0xfc}, 64));              // a syscall first
  CHECK(!loop({0xff, 0xe0}, 64));                          // jmp *%rax: not followed
  CHECK(!loop({0x48, 0x89, 0xde, 0xc3}, 64));              // ret
  CHECK(loop({0xe2, 0xfe}, 64));                           // loop to itself
}
