// rewind's reverse steps beyond DAP's one stepBack (a reverse next): rewind/stepOutBack (gdb's
// reverse-finish, back to the call in the caller) and rewind/stepInBack (gdb's reverse-step,
// into the last line of a callee), by lines and by instructions, over a real pipe on a replay
// of tests/programs/symbols_demo.c.
#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;
using test::evaluate;
using test::top_frame;

namespace {

uint32_t line_of(const std::string& marker) {
  return test::line_of(SOURCE_C, marker);
}

/// Sends step request `command` for `tid` and returns the stopped event.
json step(test::DapClient& c, const std::string& command, int tid, json extra = json::object()) {
  extra["threadId"] = tid;
  json r = c.request(command, extra);
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  return c.event("stopped");
}

/// One breakpoint stop of a plain continue: the stopped thread and its top frame's line.
struct Hit {
  int tid;
  uint32_t line;
};

/// Goes to the start of the recording, then continues plainly until the stop `hits[k]`,
/// checking that the replay meets `hits` in the same order again.
void continue_to(test::DapClient& c, const std::vector<Hit>& hits, size_t k) {
  REQUIRE(c.request("rewind/seek", {{"event", 1}})["success"] == true);
  c.event("stopped");
  for (size_t i = 0; i <= k; ++i) {
    json stop = step(c, "continue", hits[0].tid);
    INFO(stop.dump());
    REQUIRE(stop["body"]["reason"] == "breakpoint");
    REQUIRE(stop["body"]["threadId"] == hits[i].tid);
    REQUIRE(top_frame(c, hits[i].tid)["line"] == hits[i].line);
  }
}

}  // namespace

TEST_CASE("rewind/stepOutBack and rewind/stepInBack", "[dap]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("setFunctionBreakpoints",
                    {{"breakpoints", {{{"name", "loop_sum"}}}}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "function breakpoint");
  int tid = stop["body"]["threadId"];
  REQUIRE(top_frame(c, tid)["name"] == "loop_sum");
  REQUIRE(c.request("setFunctionBreakpoints", {{"breakpoints", json::array()}})["success"] == true);

  // Out of loop_sum backwards: main, on the line of the call, before it ran (sum is not set
  // yet); a step forward from there runs the call again and sets it.
  CHECK(step(c, "rewind/stepOutBack", tid)["body"]["reason"] == "step");
  json frame = top_frame(c, tid);
  CHECK(frame["name"] == "main");
  CHECK(frame["line"] == line_of("int sum = loop_sum(3);"));
  CHECK(step(c, "next", tid)["body"]["reason"] == "step");
  frame = top_frame(c, tid);
  CHECK(frame["line"] == line_of("ratio = scaled(ratio, count);"));
  CHECK(evaluate(c, frame["id"], "sum") == "3");

  // Back into loop_sum from the line after its call: its last line, with its final state.
  step(c, "rewind/stepInBack", tid);
  frame = top_frame(c, tid);
  CHECK(frame["name"] == "loop_sum");
  CHECK(frame["line"] == line_of("return total;") + 1);  // the closing brace: its last row
  CHECK(evaluate(c, frame["id"], "total") == "3");
  // ...and out again, backwards: the call in main.
  step(c, "rewind/stepOutBack", tid);
  frame = top_frame(c, tid);
  CHECK(frame["name"] == "main");
  CHECK(frame["line"] == line_of("int sum = loop_sum(3);"));

  // stepBack (a reverse next) from the same place steps over calls instead: back from the
  // scaled line over loop_sum, to its call line, never inside.
  step(c, "next", tid);
  REQUIRE(top_frame(c, tid)["line"] == line_of("ratio = scaled(ratio, count);"));
  step(c, "stepBack", tid);
  frame = top_frame(c, tid);
  CHECK(frame["name"] == "main");
  CHECK(frame["line"] == line_of("int sum = loop_sum(3);"));

  // By instructions, stepInBack is one instruction back.
  std::string pc = top_frame(c, tid)["instructionPointerReference"];
  step(c, "rewind/stepInBack", tid, {{"granularity", "instruction"}});
  CHECK(top_frame(c, tid)["instructionPointerReference"] != pc);
  step(c, "stepIn", tid, {{"granularity", "instruction"}});
  CHECK(top_frame(c, tid)["instructionPointerReference"] == pc);

  // Into a libc function built with -O2 (printf, with Debian's libc6-dbg lines), whose last
  // line's run has no is_stmt row: its first instruction, as gdb's reverse-step; then out
  // again to the call in main.
  const uint32_t printf_line = line_of("printf(\"%s %d %g %s %d %d %d %d\\n\"");
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", SOURCE_C}}},
                                       {"breakpoints", {{{"line", printf_line}}}}})["success"] ==
          true);
  REQUIRE(step(c, "continue", tid)["body"]["reason"] == "breakpoint");
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", SOURCE_C}}},
                                       {"breakpoints", json::array()}})["success"] == true);
  // next over the statement (its arguments on the line below are rows of their own), to
  // main's return.
  for (int i = 0; i < 4 && top_frame(c, tid)["line"] != printf_line + 2; ++i) step(c, "next", tid);
  REQUIRE(top_frame(c, tid)["line"] == printf_line + 2);
  step(c, "rewind/stepInBack", tid);
  json st = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"];
  REQUIRE(st.size() >= 2);
  CHECK(st[0]["name"].get<std::string>().find("printf") != std::string::npos);
  CHECK(st[1]["name"] == "main");
  CHECK(st[1]["line"] == printf_line);
  step(c, "rewind/stepOutBack", tid);
  frame = top_frame(c, tid);
  CHECK(frame["name"] == "main");
  CHECK(frame["line"] == printf_line);

  // A thread that is not live is refused, as for the other steps.
  json bad = c.request("rewind/stepOutBack", {{"threadId", 999999}});
  CHECK(bad["success"] == false);
  c.request("disconnect");
  c.check_schema();
}

TEST_CASE("a step onto a breakpoint's line, either way, stops as a step", "[dap]") {
  // VS Code says "Paused on breakpoint" for a stop whose reason is breakpoint: after Step Back
  // onto a line that holds one, the user stepped, and the hit is not new.
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  const uint32_t add_line = line_of("total += i;"), store_line = line_of("sink = total;");
  json lines = json::array({{{"line", add_line}}, {{"line", store_line}}});
  REQUIRE(c.request("setBreakpoints",
                    {{"source", {{"path", SOURCE_C}}}, {"breakpoints", lines}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  REQUIRE(top_frame(c, tid)["line"] == add_line);
  // Forwards onto the next breakpoint's line, and back onto the first one's: steps.
  stop = step(c, "next", tid);
  CHECK(stop["body"]["reason"] == "step");
  CHECK(top_frame(c, tid)["line"] == store_line);
  stop = step(c, "stepBack", tid);
  CHECK(stop["body"]["reason"] == "step");
  CHECK(stop["body"]["description"] == "◀ reverse · step");
  json frame = top_frame(c, tid);
  CHECK(frame["line"] == add_line);
  CHECK(evaluate(c, frame["id"], "total") == "0");
  // A continue still reports the breakpoints it runs into, both ways.
  CHECK(step(c, "continue", tid)["body"]["reason"] == "breakpoint");
  CHECK(top_frame(c, tid)["line"] == store_line);
  CHECK(step(c, "reverseContinue", tid)["body"]["reason"] == "breakpoint");
  CHECK(top_frame(c, tid)["line"] == add_line);
  c.request("disconnect");
  c.check_schema();
}

TEST_CASE("singleThread: only the stepping thread's breakpoints stop a continue or a step",
          "[dap]") {
  // tests/programs/pthreads.c: three consumer threads, each entering and leaving `consumer`
  // once. With singleThread (DAP: the other threads stay suspended) the other consumers'
  // hits do not stop a continue or a step; a replay cannot hold them (they run as recorded),
  // but it ignores their breakpoints.
  std::string trace = test::recorded_trace(REWIND_BIN, PTHREADS_PROGRAM);
  test::DapClient c(REWIND_BIN);
  json init = c.request("initialize", {{"adapterID", "rewind"}});
  REQUIRE(init["body"]["supportsSingleThreadExecutionRequests"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  const uint32_t entry_line = test::line_of(PTHREADS_C, "long mine = 0;");
  const uint32_t lock_line = test::line_of(PTHREADS_C, "pthread_mutex_lock(&lock);");
  const uint32_t return_line = test::line_of(PTHREADS_C, "return (void*)mine");
  json lines = json::array({{{"line", entry_line}}, {{"line", return_line}}});
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", PTHREADS_C}}},
                                       {"breakpoints", lines}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);

  // Every hit of the recording, by plain continues: an entry and a return per consumer, in
  // the order this recording's threads ran them (it differs between recordings).
  std::vector<Hit> hits;
  for (json stop = c.event("stopped"); stop["body"]["reason"] == "breakpoint";
       stop = step(c, "continue", hits.back().tid)) {
    INFO(stop.dump());
    REQUIRE(hits.size() < 6);
    hits.push_back({stop["body"]["threadId"], top_frame(c, stop["body"]["threadId"])["line"]});
  }
  REQUIRE(hits.size() == 6);
  REQUIRE(hits.back().line == return_line);
  // The stepping thread: a consumer whose return is not the recording's last hit, so that
  // another consumer's hit comes after it; the first to enter of those, preferring one during
  // whose run other consumers' hits come too.
  const int last = hits.back().tid;
  size_t entry = hits.size(), ret = 0;
  for (size_t e = 0; e < hits.size(); ++e) {
    if (hits[e].line != entry_line || hits[e].tid == last) continue;
    size_t r = e + 1;
    while (hits[r].tid != hits[e].tid) ++r;
    if (entry == hits.size() || (ret == entry + 1 && r > e + 1)) entry = e, ret = r;
  }
  REQUIRE(entry < hits.size());
  const int first = hits[entry].tid;
  REQUIRE(hits[ret].line == return_line);

  // From the start to its entry; a step and a continue of it: its next line, its return.
  continue_to(c, hits, entry);
  json stop = step(c, "next", first, {{"singleThread", true}});
  CHECK(stop["body"]["reason"] == "step");
  CHECK(top_frame(c, first)["line"] == lock_line);
  stop = step(c, "continue", first, {{"singleThread", true}});
  CHECK(stop["body"]["threadId"] == first);
  CHECK(top_frame(c, first)["line"] == return_line);
  // Without singleThread, another consumer's hit comes next.
  stop = step(c, "continue", first);
  INFO(stop.dump());
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  const int other = stop["body"]["threadId"];
  CHECK(other == hits[ret + 1].tid);
  REQUIRE(other != first);
  // Backwards for that one: the first consumer's return and entry, before, do not stop it.
  stop = step(c, "reverseContinue", other, {{"singleThread", true}});
  CHECK((stop["body"]["reason"] != "breakpoint" || stop["body"]["threadId"] == other));
  // Forwards for the first one from its return: the others' hits, after, do not stop it.
  continue_to(c, hits, entry);
  stop = step(c, "continue", first, {{"singleThread", true}});
  REQUIRE(top_frame(c, first)["line"] == return_line);
  stop = step(c, "continue", first, {{"singleThread", true}});
  CHECK((stop["body"]["reason"] != "breakpoint" || stop["body"]["threadId"] == first));
  c.request("disconnect");
  c.check_schema();
}

TEST_CASE("an instruction step over a syscall made through rewind's library is one step", "[dap]") {
  // libc's syscall sites jump into librewind_preload.so, which the stack hides (the task is
  // shown at the site). Steps must hide it too: a step back from just after the program's
  // write once stayed on the same pc for ever (each step went one instruction back inside the
  // library, invisible), and a step forward from the site stopped in the library's stub.
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  const int tid = stop["body"]["threadId"];
  json tl = c.request("rewind/timeline", {{"start", 1}, {"count", 100000}});
  uint64_t write_event = 0;
  for (const json& e : tl["body"]["events"])
    if (e.value("syscall", "") == "write" && e.count("origin") == 0) write_event = e["event"];
  REQUIRE(write_event > 0);
  REQUIRE(c.request("rewind/seek", {{"event", write_event}})["success"] == true);
  c.event("stopped");

  // Where librewind_preload.so is mapped: no step may stop there.
  uint64_t lib_lo = 0, lib_hi = 0;
  const json modules = c.request("modules");
  for (const json& m : modules["body"]["modules"])
    if (m["name"] == "librewind_preload.so") {
      std::string range = m["addressRange"];
      lib_lo = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
      lib_hi = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    }
  REQUIRE(lib_hi > lib_lo);
  auto pc_of = [&] {
    std::string pc = top_frame(c, tid)["instructionPointerReference"];
    return std::stoull(pc, nullptr, 16);
  };
  auto event_now = [&] { return c.request("rewind/when")["body"]["event"].get<uint64_t>(); };
  const uint64_t after_write = pc_of();  // shown at the site, just after its `syscall`
  CHECK(top_frame(c, tid)["name"].get<std::string>().find("write") != std::string::npos);

  // Back: one step is the whole syscall; the next ones go on back through libc's write.
  std::vector<uint64_t> back;
  for (int i = 0; i < 3; ++i) {
    CHECK(step(c, "stepBack", tid, {{"granularity", "instruction"}})["body"]["reason"] == "step");
    back.push_back(pc_of());
    CHECK((back.back() < lib_lo || back.back() >= lib_hi));
  }
  CHECK(back[0] < after_write);
  CHECK(event_now() == write_event - 1);  // before the write
  CHECK(back[1] < back[0]);
  CHECK(back[2] < back[1]);
  CHECK(top_frame(c, tid)["name"].get<std::string>().find("write") != std::string::npos);

  // Forward again, one instruction at a time: the same pcs, and the write in one step.
  step(c, "stepIn", tid, {{"granularity", "instruction"}});
  CHECK(pc_of() == back[1]);
  step(c, "stepIn", tid, {{"granularity", "instruction"}});
  CHECK(pc_of() == back[0]);
  CHECK(event_now() == write_event - 1);
  step(c, "stepIn", tid, {{"granularity", "instruction"}});
  const uint64_t past = pc_of();
  CHECK(event_now() == write_event);
  CHECK((past < lib_lo || past >= lib_hi));
  CHECK(past > back[0]);
  // ...and back over it once more: the site.
  step(c, "stepBack", tid, {{"granularity", "instruction"}});
  CHECK(pc_of() == back[0]);
  CHECK(event_now() == write_event - 1);

  // By lines, from just after the write: back out of libc's write, into its caller.
  REQUIRE(c.request("rewind/seek", {{"event", write_event}})["success"] == true);
  c.event("stopped");
  std::string callee = top_frame(c, tid)["name"];
  step(c, "stepBack", tid);
  json frame = top_frame(c, tid);
  const uint64_t pc =
      std::stoull(frame["instructionPointerReference"].get<std::string>(), nullptr, 16);
  CHECK((pc < lib_lo || pc >= lib_hi));
  CHECK((frame["name"] != callee || pc != after_write));
  c.request("disconnect");
  c.check_schema();
}
