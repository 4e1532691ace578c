// The R stack read out of a replayed Rscript (engine/interp/r_frames): tests/programs/
// nested_calls.R sourced with keep.source, at the stat() event of file.exists() in its
// deepest function, with R's JIT off (AST frames) and on (bytecode frames, lines through the
// srcrefsIndex table); calls, files, lines and locals checked exactly.
#include "engine/interp/r_frames.h"

#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <map>
#include <string>

#include "engine/debugger/debugger.h"
#include "engine/trace/trace_reader.h"
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

/// The R stack at the event of the stat() that file.exists() makes under helper(), in a
/// recording with R's JIT level `jit`: found by reading the R stack after each event.
std::vector<InterpFrame> stack_in_helper(const std::string& jit) {
  // R's own binary, as the R front-end script would exec it (that script's shells would be
  // processes of their own in the recording); the trailing argument only names the variant.
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", jit.c_str(), 1);
  std::string cmd =
      "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = "
      "TRUE); source(\"" +
      std::string(R_SCRIPT) + "\")' --args jit" + jit;
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
