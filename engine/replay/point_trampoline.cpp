#include "point_trampoline.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "engine/arch/displaced_code.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/ticks/memory_digest.h"

namespace rwd {

namespace {

constexpr uint64_t kPage = 4096;
/// An upper bound on a trampoline's code (about 300 bytes with the displaced instructions,
/// 900 for one comparing 32 stack words).
constexpr uint64_t kMaxCode = 1536;
/// The mapping at most: the code's pages (it may cross one page boundary) and a data page
/// (saved rsp, 16 expected values, a counter, up to 32 stack words, a 64-byte stack).
constexpr uint64_t kMaxTrampoline = 3 * 4096;
/// Stack words a trampoline compares at most (PassChecks::stack_words).
constexpr size_t kMaxStackWords = 32;
static_assert(kPointStackWords <= kMaxStackWords, "a point's stack words fit the trampoline");
/// Room left below the main stack, which may grow down during the search.
constexpr uint64_t kStackRoom = 16ull << 20;
constexpr uint64_t kLowest = 0x10000;                  // vm.mmap_min_addr's usual value
constexpr uint64_t kHighest = 0x7ffffffff000;          // end of the 47-bit user address space
constexpr int64_t kReach = (1ll << 31) - (1ll << 20);  // a rel32 jump, with slack

/// x86-64 register numbers (Intel SDM vol. 2, 2.2.1.2) with the recorded value each compare
/// checks, in the trampoline's order.
struct Compare {
  uint8_t reg;
  decltype(&Registers::rax) field;  // a 64-bit field of user_regs_struct
};
constexpr Compare kCompares[] = {
    {0, &Registers::rax},  {1, &Registers::rcx},  {2, &Registers::rdx},  {3, &Registers::rbx},
    {5, &Registers::rbp},  {6, &Registers::rsi},  {7, &Registers::rdi},  {8, &Registers::r8},
    {9, &Registers::r9},   {10, &Registers::r10}, {11, &Registers::r11}, {12, &Registers::r12},
    {13, &Registers::r13}, {14, &Registers::r14}, {15, &Registers::r15},
};
constexpr size_t kCompareCount = sizeof kCompares / sizeof kCompares[0];

/// Machine code at a known address, with 32-bit displacements to filled-in-later places.
class Emitter {
 public:
  explicit Emitter(uint64_t base) : base_(base) {}
  void bytes(std::initializer_list<uint8_t> b) { out_.insert(out_.end(), b); }
  void append(const std::vector<uint8_t>& b) { out_.insert(out_.end(), b.begin(), b.end()); }
  /// An instruction ending in a RIP-relative disp32 to `target` (filled in by `resolve`).
  void rip_relative(std::initializer_list<uint8_t> head, const uint64_t* target) {
    bytes(head);
    disp(target);
  }
  /// A rel32 whose target is known later (a label's address, or data).
  void disp(const uint64_t* target) {
    fixups_.push_back({out_.size(), target});
    out_.insert(out_.end(), 4, 0);
  }
  uint64_t here() const { return base_ + out_.size(); }
  size_t size() const { return out_.size(); }
  /// Fills every disp32 with target - (address after the field). False if one is too far.
  bool resolve() {
    for (const auto& [at, target] : fixups_) {
      int64_t d = int64_t(*target - (base_ + at + 4));
      if (d < INT32_MIN || d > INT32_MAX) return false;
      int32_t v = int32_t(d);
      std::memcpy(out_.data() + at, &v, 4);
    }
    return true;
  }
  std::vector<uint8_t>& code() { return out_; }

 private:
  uint64_t base_;
  std::vector<uint8_t> out_;
  std::vector<std::pair<size_t, const uint64_t*>> fixups_;
};

/// The rel32 bytes that must be int3: those the start of a later instruction falls on.
void punning_constraint(const std::vector<size_t>& boundaries, uint32_t& mask, uint32_t& value) {
  mask = value = 0;
  for (size_t b : boundaries) {
    if (b < 1 || b > 4) continue;
    uint32_t shift = uint32_t(8 * (b - 1));
    mask |= 0xffu << shift;
    value |= 0xccu << shift;
  }
}

/// Chooses the trampoline's address: in a gap of `maps` within reach of `x`, not where the
/// heap starting at `heap_start` may grow, with the displacement bytes `mask` equal to
/// `value`. 0 if none.
uint64_t choose_address(uint64_t x, const std::vector<ProcMapping>& maps, uint64_t heap_start,
                        uint32_t mask, uint32_t value) {
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  for (const ProcMapping& m : maps) {
    uint64_t start = m.start;
    if (m.path == "[stack]") start = start > kStackRoom ? start - kStackRoom : 0;
    busy.push_back({start, m.end});
  }
  std::sort(busy.begin(), busy.end());
  if (heap_start) {
    // brk(2) moves the break up from there until the next mapping: a trampoline mapped in
    // between would make the program's brk fail where the recorded one grew the heap (the
    // heap may not have its first page yet: no "[heap]" line tells where it starts).
    uint64_t heap_end = heap_start, room_end = kHighest;
    for (const ProcMapping& m : maps)
      if (m.start == heap_start && m.path == "[heap]") heap_end = m.end;
    for (const auto& [start, end] : busy)
      if (start >= heap_end) {
        room_end = start;
        break;
      }
    busy.push_back({heap_start, room_end});
    std::sort(busy.begin(), busy.end());
  }
  const uint64_t from = x + 5;  // the jump's displacement counts from its end
  const uint64_t lo = std::max<uint64_t>(kLowest, from > uint64_t(kReach) ? from - kReach : 0);
  const uint64_t hi = std::min<uint64_t>(kHighest, from + kReach);
  // Displacements as u = rel32 + 2^31 (0 .. 2^32-1), so that they order like addresses; the
  // top byte's sign bit flips.
  const uint32_t umask = mask, uvalue = value ^ (mask & 0x80000000u);
  uint64_t best = 0, best_distance = UINT64_MAX;
  uint64_t gap_start = lo;
  auto try_gap = [&](uint64_t g0, uint64_t g1) {
    g0 = (std::max(g0, lo) + kPage - 1) & ~(kPage - 1);
    g1 = std::min(g1, hi) & ~(kPage - 1);
    if (g1 <= g0 + kMaxTrampoline) return;
    uint64_t u0 = g0 - from + (1ull << 31);
    auto u = next_masked_match(u0, umask, uvalue);
    if (!u) return;
    uint64_t t = from + *u - (1ull << 31);
    if (t + kMaxTrampoline > g1) return;  // a later match lies even further up
    uint64_t distance = t > x ? t - x : x - t;
    if (distance < best_distance) best = t, best_distance = distance;
  };
  for (const auto& [s, e] : busy) {
    if (s > gap_start) try_gap(gap_start, s);
    gap_start = std::max(gap_start, e);
  }
  try_gap(gap_start, hi);
  return best;
}

}  // namespace

std::optional<uint64_t> moved_copy(const PointTrampoline& p, uint64_t addr) {
  for (const auto& [from, to] : p.moved)
    if (from == addr) return to;
  return std::nullopt;
}

std::optional<uint64_t> next_masked_match(uint64_t from, uint32_t mask, uint32_t value) {
  value &= mask;
  uint64_t u = from;
  while (u < (1ull << 32)) {
    if ((uint32_t(u) & mask) == value) return u;
    int k = 3;  // the highest selected byte that differs
    while (((uint32_t(u) ^ value) & mask & (0xffu << (8 * k))) == 0) --k;
    uint64_t have = (u >> (8 * k)) & 0xff, want = (value >> (8 * k)) & 0xff;
    uint64_t high = (u >> (8 * (k + 1))) << (8 * (k + 1));
    // Raise byte k to the wanted value (lower bytes from 0), or carry past it.
    u = have < want ? high | (want << (8 * k)) : high + (1ull << (8 * (k + 1)));
  }
  return std::nullopt;
}

namespace {

/// Emits the register compares of a Jump trampoline, which leave the flags alone: for each
/// register, rcx = value + (-expected) by a lea, and jrcxz past a jump to `differs`; rcx
/// itself (pushed first) and rsp (at `saved_rsp`) through rax. `expected` holds the
/// addresses of the negated expected values, in kCompares' order, then rsp's. Ends with
/// the program's rcx still pushed (as at `differs`), every register matching.
void emit_flag_free_compares(Emitter& e, const uint64_t* expected, const uint64_t* saved_rsp,
                             const uint64_t* differs) {
  auto jump_unless_zero = [&] {
    e.bytes({0xe3, 0x05, 0xe9});  // jrcxz +5; jmp differs
    e.disp(differs);
  };
  e.bytes({0x51});  // push rcx
  size_t rcx_index = 0;
  for (size_t i = 0; i < kCompareCount; ++i) {
    const uint8_t reg = kCompares[i].reg;
    if (reg == 1) {
      rcx_index = i;
      continue;
    }
    e.rip_relative({0x48, 0x8b, 0x0d}, &expected[i]);  // mov rcx, [rip+expected_i]
    // lea rcx, [rcx+reg]: REX.W (+X for r8-r15) 8d /r, ModRM 00 001 100, SIB 00 reg 001
    e.bytes({uint8_t(0x48 | (reg >= 8 ? 0x02 : 0)), 0x8d, 0x0c, uint8_t(((reg & 7) << 3) | 1)});
    jump_unless_zero();
  }
  e.bytes({0x50});                                           // push rax
  e.rip_relative({0x48, 0x8b, 0x05}, &expected[rcx_index]);  // mov rax, [rip+expected_rcx]
  e.bytes({0x48, 0x8b, 0x4c, 0x24, 0x08});                   // mov rcx, [rsp+8]
  e.bytes({0x48, 0x8d, 0x0c, 0x01});                         // lea rcx, [rcx+rax]
  e.bytes({0x58});                                           // pop rax
  jump_unless_zero();
  e.bytes({0x50});                                               // push rax
  e.rip_relative({0x48, 0x8b, 0x05}, &expected[kCompareCount]);  // mov rax, [rip+expected_rsp]
  e.rip_relative({0x48, 0x8b, 0x0d}, saved_rsp);                 // mov rcx, [rip+saved_rsp]
  e.bytes({0x48, 0x8d, 0x0c, 0x01});                             // lea rcx, [rcx+rax]
  e.bytes({0x58});                                               // pop rax
  jump_unless_zero();
}

/// Compares the program's stack words [saved rsp, + 8 * words) with `expected` (data
/// addresses), jumping to `differs` at the first that differs. Uses rax and rcx, which the
/// caller saved, and the flags.
void emit_stack_word_compares(Emitter& e, size_t words, const uint64_t* saved_rsp,
                              const uint64_t* expected, const uint64_t* differs) {
  e.rip_relative({0x48, 0x8b, 0x05}, saved_rsp);  // mov rax, [rip+saved_rsp]
  for (size_t i = 0; i < words; ++i) {
    // mov rcx, [rax + 8i]: REX.W 8b /r, with an 8-bit displacement where it fits.
    const uint32_t off = uint32_t(8 * i);
    if (off < 128)
      e.bytes({0x48, 0x8b, 0x48, uint8_t(off)});
    else
      e.bytes({0x48, 0x8b, 0x88, uint8_t(off), uint8_t(off >> 8), uint8_t(off >> 16),
               uint8_t(off >> 24)});
    e.rip_relative({0x48, 0x3b, 0x0d}, &expected[i]);  // cmp rcx, [rip+word_i]
    e.bytes({0x0f, 0x85});                             // jne differs
    e.disp(differs);
  }
}

}  // namespace

std::optional<PointTrampoline> plan_point_trampoline(PatchKind kind,
                                                     const std::vector<uint8_t>& code, uint64_t x,
                                                     const Registers& want,
                                                     const std::vector<ProcMapping>& maps,
                                                     uint64_t heap_start, PassChecks checks) {
  const bool counting = kind == PatchKind::Count;
  if (kind == PatchKind::Jump)
    checks = {.registers = true, .stop_at = 0, .stack_words = std::move(checks.stack_words)};
  // Which instruction starts the jump covers: known before the trampoline's address is.
  const size_t patch_len = kind == PatchKind::Int3 ? 1 : 5;
  auto probe = displace_instructions(code.data(), code.size(), x, x, patch_len, checks.move_call);
  if (!probe) return std::nullopt;
  uint32_t mask = 0, value = 0;
  if (kind != PatchKind::Int3) punning_constraint(probe->boundaries, mask, value);
  uint64_t t = choose_address(x, maps, heap_start, mask, value);
  if (!t) return std::nullopt;

  PointTrampoline p;
  p.kind = kind;
  p.point = x;
  p.addr = t;
  p.map_start = t & ~(kPage - 1);
  // Code, then a page of its own for the data it writes: a store into a page (on some CPUs,
  // a cache line) that is being executed flushes the pipeline (self-modifying code).
  const uint64_t code_end = (t + kMaxCode + kPage - 1) & ~(kPage - 1);
  const uint64_t data = code_end;
  p.map_len = code_end + kPage - p.map_start;

  // Addresses filled in once the code is laid out.
  uint64_t skip = 0, saved_rsp = 0, stack_top = 0, back = x + probe->covered;
  uint64_t expected[kCompareCount + 1] = {};  // + rsp
  uint64_t counter = 0, stop_at = 0, check_count = 0, stack_differs = 0;
  const size_t words = std::min<size_t>(checks.stack_words.size(), kMaxStackWords);
  uint64_t stack_expected[kMaxStackWords] = {};
  Emitter e(t);
  if (kind == PatchKind::Int3) {
    // Only the instruction's copy and the jump back; the task traps at the point itself.
    p.resume = t;
    auto moved = displace_instructions(code.data(), code.size(), x, t, 1, checks.move_call);
    if (!moved) return std::nullopt;
    e.append(moved->code);
    e.bytes({0xe9});
    e.disp(&back);
    if (!e.resolve()) return std::nullopt;
    if (e.size() > kMaxCode) return std::nullopt;
    p.code = std::move(e.code());
    p.patch = {0xcc};
    p.match_trap = x + 1;
    return p;
  }
  // Switch to the trampoline's own stack: the program's may hold live data below its red zone
  // (a signal frame is not the only writer there), and its contents are part of the state.
  e.rip_relative({0x48, 0x89, 0x25}, &saved_rsp);  // mov [rip+saved_rsp], rsp
  e.rip_relative({0x48, 0x8d, 0x25}, &stack_top);  // lea rsp, [rip+stack_top]
  if (!counting) {
    // Compares that leave the flags alone: a pushfq/popfq pair costs more than the rest of
    // the trampoline, which runs at every pass of the point (a hot loop's, often).
    emit_flag_free_compares(e, expected, &saved_rsp, &skip);
    if (words > 0) {
      // Every register matches (rare but for loops whose registers repeat): the stack words
      // too, flags saved only on this path.
      e.bytes({0x9c, 0x50});  // pushfq; push rax
      emit_stack_word_compares(e, words, &saved_rsp, stack_expected, &stack_differs);
      e.bytes({0x58, 0x9d});  // pop rax; popfq
    }
    e.bytes({0x59});                                 // pop rcx
    e.rip_relative({0x48, 0x8b, 0x25}, &saved_rsp);  // mov rsp, [rip+saved_rsp]
    e.bytes({0xcc});                                 // int3: every register matches
    p.match_trap = e.here();
  } else {
    e.bytes({0x9c});                               // pushfq
    e.rip_relative({0x48, 0xff, 0x05}, &counter);  // inc qword [rip+counter]
  }
  // Where a register that differs goes in a counting trampoline: the pass count's check.
  const uint64_t* differs = &check_count;
  if (counting && checks.registers) {
    for (size_t i = 0; i < kCompareCount; ++i) {
      uint8_t reg = kCompares[i].reg;
      // cmp reg, [rip+expected_i]: REX.W (+R for r8-r15) 3b /r, ModRM 00 reg 101
      e.rip_relative(
          {uint8_t(0x48 | (reg >= 8 ? 0x04 : 0)), 0x3b, uint8_t(0x05 | ((reg & 7) << 3))},
          &expected[i]);
      e.bytes({0x0f, 0x85});  // jne differs
      e.disp(differs);
    }
    e.bytes({0x50});                                               // push rax
    e.rip_relative({0x48, 0x8b, 0x05}, &saved_rsp);                // mov rax, [rip+saved_rsp]
    e.rip_relative({0x48, 0x3b, 0x05}, &expected[kCompareCount]);  // cmp rax, [rip+expected_rsp]
    e.bytes({0x58});                                               // pop rax (flags kept)
    e.bytes({0x0f, 0x85});                                         // jne differs
    e.disp(differs);
    if (words > 0) {
      e.bytes({0x50, 0x51});  // push rax; push rcx
      emit_stack_word_compares(e, words, &saved_rsp, stack_expected, &stack_differs);
      e.bytes({0x59, 0x58});  // pop rcx; pop rax (flags kept)
    }
    e.bytes({0x9d});                                 // popfq
    e.rip_relative({0x48, 0x8b, 0x25}, &saved_rsp);  // mov rsp, [rip+saved_rsp]
    e.bytes({0xcc});                                 // int3: every register matches
    p.match_trap = e.here();
  }
  if (counting && words > 0) {
    stack_differs = e.here();
    e.bytes({0x59, 0x58});  // pop rcx; pop rax (flags kept)
    e.bytes({0xe9});        // jmp differs
    e.disp(differs);
  }
  if (counting) {
    check_count = e.here();
    e.bytes({0x50});                               // push rax
    e.rip_relative({0x48, 0x8b, 0x05}, &counter);  // mov rax, [rip+counter]
    e.rip_relative({0x48, 0x3b, 0x05}, &stop_at);  // cmp rax, [rip+stop_at]
    e.bytes({0x58});                               // pop rax (flags kept)
    e.bytes({0x0f, 0x85});                         // jne skip
    e.disp(&skip);
    e.bytes({0x9d});                                 // popfq
    e.rip_relative({0x48, 0x8b, 0x25}, &saved_rsp);  // mov rsp, [rip+saved_rsp]
    e.bytes({0xcc});                                 // int3: the pass asked for
    p.count_trap = e.here();
  }
  if (!counting && words > 0) {
    stack_differs = e.here();
    e.bytes({0x58, 0x9d});  // pop rax; popfq: on to skip, which pops rcx
  }
  skip = e.here();
  e.bytes({uint8_t(counting ? 0x9d : 0x59)});      // popfq, or pop rcx
  e.rip_relative({0x48, 0x8b, 0x25}, &saved_rsp);  // mov rsp, [rip+saved_rsp]
  p.resume = e.here();
  auto moved = displace_instructions(code.data(), code.size(), x, p.resume, 5, checks.move_call);
  if (!moved || moved->covered != probe->covered) return std::nullopt;
  for (size_t i = 0; i < moved->boundaries.size(); ++i)
    p.moved.push_back({x + moved->boundaries[i], p.resume + moved->moved_boundaries[i]});
  e.append(moved->code);
  e.bytes({0xe9});  // jmp back after the displaced instructions
  e.disp(&back);
  if (e.size() > kMaxCode) return std::nullopt;
  // The data page: saved rsp, the expected values, then the stack (pushfq, push rax).
  saved_rsp = data;
  for (size_t i = 0; i <= kCompareCount; ++i) expected[i] = data + 8 * (i + 1);
  counter = data + 8 * (kCompareCount + 2);
  stop_at = counter + 8;
  for (size_t i = 0; i < words; ++i) stack_expected[i] = stop_at + 8 * (i + 1);
  stack_top = data + kPage - 64;
  if (!e.resolve()) return std::nullopt;
  p.code = std::move(e.code());
  p.data_addr = data;
  p.data.assign(8 * (kCompareCount + 4 + words), 0);
  for (size_t i = 0; i < words; ++i)
    std::memcpy(p.data.data() + (stack_expected[i] - data), &checks.stack_words[i], 8);
  for (size_t i = 0; i <= kCompareCount; ++i) {
    uint64_t v = i < kCompareCount ? want.*kCompares[i].field : want.rsp;
    if (!counting) v = 0 - v;  // emit_flag_free_compares adds the negated value
    std::memcpy(p.data.data() + 8 * (i + 1), &v, 8);
  }
  if (counting) {
    p.count_addr = counter;
    std::memcpy(p.data.data() + (stop_at - data), &checks.stop_at, 8);  // the counter starts at 0
  }

  int64_t rel = int64_t(t - (x + 5));
  int32_t rel32 = int32_t(rel);
  p.patch = {0xe9, 0, 0, 0, 0};
  std::memcpy(p.patch.data() + 1, &rel32, 4);
  p.patch.resize(probe->covered, 0xcc);
  for (size_t b : probe->boundaries)
    if (p.patch[b] != 0xcc) return std::nullopt;  // the punning did not hold: never expected
  return p;
}

const ProcMapping* patchable_code_mapping(const std::vector<ProcMapping>& maps, uint64_t x) {
  for (const auto& m : maps)
    if (x >= m.start && x < m.end)
      return m.shared || !m.exec || m.write || m.is_special() ? nullptr : &m;
  return nullptr;
}

bool trampoline_compares_equal(const Registers& a, const Registers& b) {
  for (const Compare& c : kCompares)
    if (a.*c.field != b.*c.field) return false;
  return a.rsp == b.rsp;
}

bool point_trampoline_fits(pid_t tid, const Registers& regs) {
  std::vector<ProcMapping> maps = read_proc_maps(tid);
  const ProcMapping* m = patchable_code_mapping(maps, regs.rip);
  if (!m) return false;
  // The code around the point, read once: the patch's bytes, and the jumps near it.
  constexpr uint64_t kBefore = 128, kAfter = 384;  // bytes
  const uint64_t from = std::max<uint64_t>(m->start, regs.rip > kBefore ? regs.rip - kBefore : 0);
  const uint64_t to = std::min<uint64_t>(m->end, regs.rip + kAfter);
  std::vector<uint8_t> near = read_memory(tid, from, to - from);
  if (near.size() <= regs.rip - from) return false;
  const auto at = near.begin() + ptrdiff_t(regs.rip - from);
  std::vector<uint8_t> code(at, at + std::min<ptrdiff_t>(32, near.end() - at));
  auto plan =
      plan_point_trampoline(PatchKind::Jump, code, regs.rip, regs, maps, proc_brk_start(tid));
  if (!plan) return false;
  if (plan->moved.empty()) return true;
  // A jump into the patch (the other arm of an if/else, a loop's head) would stop there at
  // every pass until the point is reached: in a hot loop, as slow as no trampoline.
  for (uint64_t target : direct_jump_targets(near.data(), near.size(), from, regs.rip))
    for (const auto& [covered, copy] : plan->moved)
      if (covered == target) return false;
  return true;
}

}  // namespace rwd
