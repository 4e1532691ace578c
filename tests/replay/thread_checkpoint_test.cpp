// Checkpoints of multi-threaded and multi-process replays (engine/replay/process_copy.h),
// over real recordings of tests/programs/pthreads.c (threads waiting on a condition variable
// and a mutex, one spinning) and tests/programs/fork_worker.c (a parent and its fork()ed
// worker over pipes): a replay resumed from a checkpoint stands where the replay from the
// trace's start stood when the checkpoint was taken — every thread's registers, FPU/SSE
// state, blocked signals and syscall-entry wait, and each process's memory — and replays on
// to the recorded end without diverging. tests/programs/thread_restart.c: a thread whose
// read was interrupted to restart (its process stopped and continued), copied before the
// restart.
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/os/ptrace_ops.h"
#include "engine/replay/replay_session.h"
#include "engine/ticks/memory_digest.h"

using namespace rwd;

namespace {

/// Records `program` once with `options`; returns the trace directory.
std::string record(const std::string& program, const std::string& options) {
  char tmpl[] = "/tmp/rewind-thread-ckpt.XXXXXX";
  std::string d = mkdtemp(tmpl);
  std::string cmd = std::string(REWIND_BIN) + " record " + options + " -o " + d + "/trace " +
                    program + " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return d + "/trace";
}

/// What a user inspects of one thread at a stop.
struct ThreadState {
  Registers regs{};
  user_fpregs_struct fp{};
  uint64_t blocked = 0;
  bool at_entry = false;
};

/// The state of every live task of `s` (by recorded tid) and the memory digest of each
/// process (by the recorded tid of its leader).
struct Snapshot {
  std::map<pid_t, ThreadState> threads;
  std::map<pid_t, MemoryDigest> digests;
};

Snapshot snapshot(const ReplaySession& s) {
  Snapshot out;
  for (const auto& [rec, t] : s.tasks()) {
    if (t.state == TaskState::Exited) continue;
    ThreadState st;
    st.regs = get_regs(t.tid);
    REQUIRE(ptrace(PTRACE_GETFPREGS, t.tid, nullptr, &st.fp) == 0);
    REQUIRE(try_get_sigmask(t.tid, st.blocked));
    st.at_entry = t.at_entry;
    out.threads[rec] = st;
    if (t.tid == t.pid) out.digests[rec] = digest_memory(t.tid);
  }
  REQUIRE(!out.digests.empty());
  return out;
}

/// Checks that `now` is `then`, thread by thread.
void check_same(const Snapshot& then, const Snapshot& now) {
  REQUIRE(now.threads.size() == then.threads.size());
  for (const auto& [rec, a] : then.threads) {
    INFO("recorded thread " << rec);
    REQUIRE(now.threads.count(rec) == 1);
    const ThreadState& b = now.threads.at(rec);
    auto diff = first_register_difference(a.regs, b.regs);
    CHECK(diff.value_or("same registers") == "same registers");
    CHECK(a.regs.fs_base == b.regs.fs_base);  // its TLS
    CHECK(memcmp(&a.fp, &b.fp, sizeof a.fp) == 0);
    CHECK(a.blocked == b.blocked);
    CHECK(a.at_entry == b.at_entry);
  }
  REQUIRE(now.digests.size() == then.digests.size());
  for (const auto& [rec, d] : then.digests) {
    INFO("process of recorded thread " << rec);
    REQUIRE(now.digests.count(rec) == 1);
    CHECK(now.digests.at(rec) == d);
  }
}

/// Replays `trace` from its start, taking checkpoints where at least `min_threads` threads
/// (in at least `min_processes` processes) live (up to 2 where a thread waits at a syscall's
/// entry and 2 where none does, at least 4 events apart), and checks each as the file's
/// comment says.
void check_checkpoints(const std::string& trace, size_t min_threads, size_t min_processes,
                       bool expect_waiting) {
  ReplayOptions opts;
  opts.trace_dir = trace;
  opts.echo_output = false;
  struct Taken {
    ReplaySession::CheckpointPtr checkpoint;
    Snapshot state;
    uint64_t event = 0;
  };
  std::vector<Taken> taken;
  ReplaySession first(opts);
  uint64_t last_taken = 0;
  size_t most_threads = 0, with_waiting = 0, without = 0;
  while (first.step()) {
    size_t live = 0, processes = 0;
    bool waits = false;
    for (const auto& [rec, t] : first.tasks()) {
      live += t.state != TaskState::Exited;
      processes += t.state != TaskState::Exited && t.tid == t.pid;
      waits |= t.state != TaskState::Exited && t.at_entry;
    }
    if (processes < min_processes) continue;
    most_threads = std::max(most_threads, live);
    size_t& kind = waits ? with_waiting : without;
    if (live < min_threads || kind >= 2 || first.events_done() < last_taken + 4) continue;
    Snapshot before = snapshot(first);
    auto c = first.checkpoint();
    if (!c) continue;
    // Taking it leaves the replay as it was.
    check_same(before, snapshot(first));
    last_taken = first.events_done();
    ++kind;
    taken.push_back({std::move(c), before, last_taken});
  }
  INFO("most live threads: " << most_threads);
  REQUIRE(taken.size() >= 2);
  // Both kinds of thread were copied: ones waiting at a syscall's entry (the condition
  // variable, the mutex) and ones stopped in their own code. (fork_worker's recordings have
  // no syscall-entry waits: its processes' reads end before the other process runs.)
  size_t waiting = 0, running = 0;
  for (const Taken& t : taken)
    for (const auto& [rec, st] : t.state.threads) (st.at_entry ? waiting : running)++;
  if (expect_waiting) CHECK(waiting > 0);
  CHECK(running > taken.size());
  int exit_code = first.result().exit_code;
  uint64_t events = first.events_done();
  for (Taken& t : taken) {
    INFO("checkpoint after event " << t.event);
    for (int round = 0; round < 2; ++round) {  // a checkpoint serves more than one replay
      ReplaySession again(opts, *t.checkpoint);
      REQUIRE(again.events_done() == t.event);
      check_same(t.state, snapshot(again));
      // A checkpoint of the resumed replay works as well.
      if (round == 1) {
        auto nested = again.checkpoint();
        REQUIRE(nested);
        ReplaySession third(opts, *nested);
        check_same(t.state, snapshot(third));
      }
      while (again.step()) {
      }
      CHECK(again.events_done() == events);
      CHECK(again.result().exit_code == exit_code);
    }
  }
}

/// Checks the checkpoints of a recording of `program` made with `options` (where at least
/// `min_threads` threads in `min_processes` processes live), then deletes it.
void check_recording(const std::string& program, const std::string& options, size_t min_threads = 3,
                     size_t min_processes = 1, bool waiting = true) {
  std::string trace = record(program, options);
  check_checkpoints(trace, min_threads, min_processes, waiting);
  std::filesystem::remove_all(std::filesystem::path(trace).parent_path());
}

}  // namespace

TEST_CASE("checkpoints of a multi-threaded replay restore every thread and the memory") {
  check_recording(PTHREADS_PROGRAM, "");
}

TEST_CASE("checkpoints of a chaos-scheduled, unbuffered multi-threaded replay") {
  // Every syscall traced: threads wait in futex calls at their entries more often.
  check_recording(PTHREADS_PROGRAM, "--chaos --no-syscall-buffer");
}

TEST_CASE("checkpoints of a replay with two live processes restore both") {
  check_recording(FORK_WORKER, "--no-syscall-buffer", 2, 2, false);
  check_recording(FORK_WORKER, "", 2, 2, false);
}

TEST_CASE("a checkpoint between a thread's interrupted read and its restart restarts it") {
  // tests/programs/thread_restart.c: the reader thread's read returns ERESTARTSYS while its
  // process is stopped, and restarts with no handler run. The syscalls that re-create the
  // thread in a copy must not use up the restart its next run owes it (it then saw the
  // error and went on: a divergence).
  for (const char* options : {"", "--no-syscall-buffer"}) {
    INFO("recorded with '" << options << "'");
    std::string trace = record(THREAD_RESTART, options);
    ReplayOptions opts;
    opts.trace_dir = trace;
    opts.echo_output = false;
    ReplaySession first(opts);
    std::vector<std::pair<uint64_t, ReplaySession::CheckpointPtr>> taken;
    while (first.step()) {
      bool owed = false;
      for (const auto& [rec, t] : first.tasks())
        owed |= t.state != TaskState::Exited && t.tid != t.pid && t.restart_pending;
      if (!owed) continue;
      auto c = first.checkpoint();
      REQUIRE(c);
      taken.emplace_back(first.events_done(), std::move(c));
    }
    REQUIRE(!taken.empty());
    uint64_t events = first.events_done();
    int exit_code = first.result().exit_code;
    for (auto& [event, c] : taken) {
      INFO("checkpoint after event " << event);
      ReplaySession again(opts, *c);
      while (again.step()) {
      }
      CHECK(again.events_done() == events);
      CHECK(again.result().exit_code == exit_code);
    }
    std::filesystem::remove_all(std::filesystem::path(trace).parent_path());
  }
}
