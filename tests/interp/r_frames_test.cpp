// The R stack read out of a replayed Rscript (engine/interp/r/r_frames): tests/programs/
// nested_calls.R sourced with keep.source, at the stat() event of file.exists() in its
// deepest function, with R's JIT off (AST frames) and on (bytecode frames, lines through the
// srcrefsIndex table); calls, files, lines and locals checked exactly.
#include "engine/interp/r/r_frames.h"

#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "engine/debugger/debugger.h"
#include "engine/trace/trace_reader.h"
#include "tests/support/interp_checks.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using namespace rwd;

namespace {

int r_line(const std::string& marker) {
  return int(test::line_of(R_SCRIPT, marker));
}

std::map<std::string, std::string> r_locals(const InterpFrame& f) {
  std::map<std::string, std::string> out;
  for (const InterpVariable& v : f.locals) out[v.name] = v.value;
  return out;
}

/// The command that records R sourcing the script with R's JIT level `jit`: R's own binary,
/// as the R front-end script would exec it (that script's shells would be processes of their
/// own in the recording); the trailing argument only names the variant. Every syscall is
/// traced (--no-syscall-buffer), so that file.exists()'s stat is an event of its own.
std::string r_command(const std::string& jit) {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", jit.c_str(), 1);
  return "--no-syscall-buffer /usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source "
         "= TRUE); "
         "source(\"" +
         std::string(R_SCRIPT) + "\")' --args jit" + jit;
}

/// The R stack at the event of the stat() that file.exists() makes under helper(), in a
/// recording with R's JIT level `jit`: found by reading the R stack after each event.
std::vector<InterpFrame> stack_in_helper(const std::string& jit) {
  std::string cmd = r_command(jit);
  Timeline tl(test::recorded_trace(REWIND_BIN, cmd));
  Debugger dbg(tl);
  pid_t root = tl.current().tid;
  // The events where R's process looked for a file that is not there: file.exists() of the
  // marker is one of them.
  std::vector<uint64_t> checks;
  {
    TraceReader reader(test::recorded_trace(REWIND_BIN, cmd));
    while (auto e = reader.next())
      if (e->kind == EventKind::Syscall && e->tid == root &&
          (e->syscallno() == SYS_newfstatat || e->syscallno() == SYS_stat ||
           e->syscallno() == SYS_statx || e->syscallno() == SYS_access) &&
          e->result == -ENOENT)
        checks.push_back(reader.last_event());
  }
  std::optional<RReader> r;
  for (uint64_t n : checks) {
    tl.seek(n);  // just after the syscall returned: R is still inside file.exists()
    dbg.refresh();
    InterpMemory mem(dbg.target(root));
    if (!r) r = RReader::find(dbg.modules(), mem);
    if (!r) continue;
    std::vector<InterpFrame> stack = r->stack(mem);
    if (stack.size() > 1 && stack[1].function == "helper") return stack;
  }
  FAIL("no event under helper()");
  return {};
}

}  // namespace

TEST_CASE("the R stack of a replayed Rscript, JIT off and on", "[interp][r]") {
  for (std::string jit : {"0", "3"}) {
    INFO("R_ENABLE_JIT=" << jit);
    std::vector<InterpFrame> stack = stack_in_helper(jit);
    std::string names;
    for (const InterpFrame& f : stack) names += f.function + ":" + std::to_string(f.line) + " ";
    INFO(names);
    REQUIRE(stack.size() >= 7);
    CHECK(stack[0].function == "file.exists");  // base R: byte-compiled, no srcref
    const InterpFrame& helper = stack[1];
    CHECK(helper.function == "helper");
    CHECK(helper.file == R_SCRIPT);
    CHECK(helper.line == r_line("# the native call"));
    auto locals = r_locals(helper);
    CHECK(locals["x"] == "10");
    CHECK(locals["y"] == "11");
    CHECK(locals["label"] == "\"deep\"");
    CHECK(locals["flags"] == "c(TRUE, FALSE, NA) [3]");
    CHECK(locals["ids"] == "c(1L, 2L, 3L, 4L, 5L, ...) [100]");  // ALTREP compact_intseq
    CHECK(locals["far"] ==                                       // compact_realseq
          "c(3000000000, 3000000001, 3000000002, 3000000003, 3000000004, ...) [10]");
    for (int n = 0; n <= 3; ++n) {
      const InterpFrame& m = stack[size_t(2 + n)];
      CHECK(m.function == "middle");
      CHECK(m.file == R_SCRIPT);
      CHECK(m.line == r_line(n == 0 ? "# the deepest middle" : "# recursion"));
      CHECK(r_locals(m)["n"] == std::to_string(n));
    }
    CHECK(stack[6].function == "top");
    CHECK(stack[6].line == r_line("# from top"));
    bool sourced = false;
    for (size_t i = 7; i < stack.size(); ++i) sourced |= stack[i].function == "source";
    CHECK(sourced);  // the outer frames are source()'s
    for (const InterpFrame& f : stack) CHECK(f.error.empty());
  }
}

TEST_CASE("the R stack read at every event and between them, checked against R",
          "[interp][r][every-event]") {
  // As the Python test does: at each event of R's process, and after a few random single
  // steps after each (points in the middle of the interpreter's updates), the stack must read
  // without a crash, each frame readable or marked unavailable, lines inside the script.
  // Where the script printed "LINE function line" (where(): sys.calls and the srcref of its
  // call), the frame below where() must say exactly what R said. JIT off and on.
  int script_lines = r_line("top()");
  for (std::string jit : {"0", "3"}) {
    INFO("R_ENABLE_JIT=" << jit);
    Timeline tl(test::recorded_trace(REWIND_BIN, r_command(jit)));
    Debugger dbg(tl);
    pid_t root = tl.current().tid;
    // R writes a line to stderr in pieces ("LINE", " ", "middle", ...): the stack is
    // compared where the newline of a "LINE" line was written, still inside where().
    std::string written;
    size_t checked = 0;  // written[0, checked) has been looked at
    tl.set_output_listener([&](OutputStream, const std::string& b) { written += b; });
    std::optional<RReader> r;
    std::mt19937 rng(20261124);
    size_t reads = 0, compared = 0, with_frames = 0;
    auto read_here = [&] {
      InterpMemory mem(dbg.target(root));
      if (!r) r = RReader::find(dbg.modules(), mem);
      if (!r) return std::vector<InterpFrame>{};
      ++reads;
      std::vector<InterpFrame> stack = r->stack(mem);
      with_frames += !stack.empty();
      test::check_frames(stack, R_SCRIPT, script_lines, true);
      return stack;
    };
    uint64_t events = tl.event_count();
    uint64_t most_steps = std::max<uint64_t>(2, 2400 / events);
    for (uint64_t n = 2; n < events; ++n) {
      StopInfo s = tl.seek(n);
      dbg.refresh();
      if (s.tid != root) continue;  // R's process only (its helpers are other programs)
      std::vector<TaskInfo> tasks = tl.tasks();
      if (std::none_of(tasks.begin(), tasks.end(),
                       [&](const TaskInfo& t) { return t.tid == root; }))
        break;  // R has exited
      std::vector<InterpFrame> stack = read_here();
      size_t nl = written.find('\n', checked);
      if (nl != std::string::npos) {
        std::string line = written.substr(checked, nl - checked);
        checked = nl + 1;
        if (line.rfind("LINE ", 0) == 0) {
          std::istringstream in(line.substr(5));
          std::string function;
          int at = 0;
          in >> function >> at;
          std::string names;
          for (const InterpFrame& f : stack)
            names += f.function + ":" + std::to_string(f.line) + " ";
          INFO("event " << n << ": R said " << line << "; rewind read " << names);
          REQUIRE(checked == written.size());  // written by this event
          auto w = std::find_if(stack.begin(), stack.end(),
                                [](const InterpFrame& f) { return f.function == "where"; });
          REQUIRE(w != stack.end());
          REQUIRE(w + 1 != stack.end());
          CHECK(w[1].function == function);
          CHECK(w[1].line == at);
          ++compared;
        }
      }
      for (int k = int(rng() % most_steps) + 1; k > 0; --k) {
        StopInfo st = tl.step_forward(root);
        if (st.event != n) break;  // a syscall ended the step: the next seek starts there
        dbg.refresh();
        read_here();
      }
    }
    INFO(reads << " reads, " << with_frames << " with R frames");
    CHECK(reads >= 1000);
    CHECK(with_frames >= 50);
    CHECK(compared == 6);  // every where() call
  }
}
