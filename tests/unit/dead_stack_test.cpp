// The dead part of a stack (engine/ticks/dead_stack.h), left out of point digests: found for
// the main thread's [stack] and a real pthread's stack, never for memory that is not a stack.
#include "engine/ticks/dead_stack.h"

#include <pthread.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace rwd;

namespace {

ProcMapping anon(uint64_t start, uint64_t end, bool rw, std::string path = "") {
  ProcMapping m;
  m.start = start;
  m.end = end;
  m.read = m.write = rw;
  m.path = std::move(path);
  return m;
}

void* report_stack(void* out) {
  volatile char here = 0;
  *static_cast<uint64_t*>(out) = reinterpret_cast<uint64_t>(&here);
  return nullptr;
}

}  // namespace

TEST_CASE("the dead stack runs from the stack mapping's start to 128 bytes below rsp", "[unit]") {
  std::vector<ProcMapping> maps = {anon(0x1000, 0x2000, false),   // guard
                                   anon(0x2000, 0x10000, true),   // thread stack
                                   anon(0x20000, 0x30000, true),  // no guard below: not a stack
                                   anon(0x40000, 0x50000, true, "[heap]"),
                                   anon(0x7ff000, 0x800000, true, "[stack]")};
  auto main_dead = dead_stack(maps, 0x7ffc00);
  REQUIRE(main_dead);
  CHECK(main_dead->first == 0x7ff000);
  CHECK(main_dead->second == 0x7ffc00 - 128 - 0x7ff000);
  auto thread_dead = dead_stack(maps, 0x8000);
  REQUIRE(thread_dead);
  CHECK(*thread_dead == std::make_pair<uint64_t, uint64_t>(0x2000, 0x8000 - 128 - 0x2000));
  CHECK_FALSE(dead_stack(maps, 0x28000));   // a coroutine stack in an arena, say
  CHECK_FALSE(dead_stack(maps, 0x48000));   // in the heap
  CHECK_FALSE(dead_stack(maps, 0x2050));    // the red zone reaches the mapping's start
  CHECK_FALSE(dead_stack(maps, 0x18000));   // between mappings
  CHECK_FALSE(dead_stack(maps, 0x900000));  // above every mapping
}

TEST_CASE("the dead stack of this process's main thread and of a pthread", "[unit]") {
  volatile char here = 0;
  uint64_t main_sp = reinterpret_cast<uint64_t>(&here);
  uint64_t thread_sp = 0;
  pthread_t th;
  REQUIRE(pthread_create(&th, nullptr, report_stack, &thread_sp) == 0);
  pthread_join(th, nullptr);
  std::vector<ProcMapping> maps = read_proc_maps(getpid());
  auto main_dead = dead_stack(maps, main_sp);
  REQUIRE(main_dead);
  CHECK(main_dead->first + main_dead->second == main_sp - 128);
  // glibc keeps a joined thread's stack in its cache, guard page included, for the next thread.
  auto thread_dead = dead_stack(maps, thread_sp);
  REQUIRE(thread_dead);
  CHECK(thread_dead->first + thread_dead->second == thread_sp - 128);
  CHECK(thread_dead->first < thread_sp);
}
