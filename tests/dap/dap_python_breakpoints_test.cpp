// Python line breakpoints over DAP (engine/debugger/python_breakpoints.h): a replay of python3
// running tests/programs/python_lines/main.py, which imports helper.py after a native call
// and calls helper.accumulate(n) for n = 0..4. Breakpoints in helper.py are set before the
// interpreter runs (pending), bind when the module is imported, stop forwards at each call
// with the frame's locals, and reverseContinue goes back to earlier calls; conditions in
// Python, hit counts and logpoints work as for native breakpoints.
#include <catch2/catch.hpp>
#include <set>

#include "engine/os/debug_registers.h"
#include "tests/dap/dap_client.h"
#include "tests/support/interpreters.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;

namespace {

int line_of(const char* file, const std::string& marker) {
  return int(test::line_of(file, marker));
}

/// Starts a replay of python3 running `script` (recorded once), up to DAP's initialized event.
void start_replay(test::DapClient& c, const char* script) {
  std::string trace = test::recorded_trace(REWIND_BIN, test::python() + " " + script);
  c.deadline(std::chrono::seconds(120));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
}

/// Starts a replay of `script` with `breakpoints` set in `file` before configurationDone;
/// returns the setBreakpoints response's breakpoints.
json launch_with(test::DapClient& c, const char* file, const json& breakpoints,
                 const char* script = PY_LINES_MAIN) {
  start_replay(c, script);
  json r =
      c.request("setBreakpoints", {{"source", {{"path", file}}}, {"breakpoints", breakpoints}});
  REQUIRE(r["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  return r["body"]["breakpoints"];
}

using test::ScriptStop;

ScriptStop where(test::DapClient& c, int tid) {
  return test::script_stop(c, tid);
}

/// Resumes with `command` and returns the stop.
json resume(test::DapClient& c, const std::string& command, int tid) {
  c.deadline(std::chrono::seconds(120));
  REQUIRE(c.request(command, {{"threadId", tid}})["success"] == true);
  return c.event("stopped");
}

/// Resumes thread `tid` with `command`, requires a stop for `reason`, and returns where the
/// thread stopped.
ScriptStop resume_to(test::DapClient& c, const std::string& command, int tid,
                     const std::string& reason = "breakpoint") {
  json stop = resume(c, command, tid);
  REQUIRE(stop["body"]["reason"] == reason);
  return where(c, tid);
}

}  // namespace

TEST_CASE("a Python line breakpoint in a module not imported yet: pending, bound, hit both ways",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  // On the comment line: it binds to the next line with code, as gdb moves a breakpoint.
  const int comment = line_of(PY_LINES_HELPER, "# a comment line");
  const int square = line_of(PY_LINES_HELPER, "square = n * n");
  json set = launch_with(c, PY_LINES_HELPER, json::array({{{"line", comment}}}));
  REQUIRE(set.size() == 1);
  CHECK(set[0]["verified"] == false);  // no interpreter runs at the start of the recording
  int id = set[0]["id"];
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  CHECK(stop["body"]["hitBreakpointIds"] == json::array({id}));
  // The breakpoint was bound when the interpreter ran helper.py, and said so.
  bool verified = false;
  for (const json& e : c.seen("breakpoint"))
    if (e["body"]["breakpoint"]["id"] == id && e["body"]["breakpoint"]["verified"] == true) {
      verified = true;
      CHECK(e["body"]["breakpoint"]["line"] == square);
      CHECK(e["body"]["breakpoint"]["source"]["path"] == PY_LINES_HELPER);
    }
  CHECK(verified);
  int tid = stop["body"]["threadId"];
  for (int n = 0; n < 3; ++n) {
    if (n > 0) {
      stop = resume(c, "continue", tid);
      REQUIRE(stop["body"]["reason"] == "breakpoint");
    }
    ScriptStop s = where(c, tid);
    INFO("hit " << n);
    CHECK(s.function == "accumulate");
    CHECK(s.file == PY_LINES_HELPER);
    CHECK(s.line == square);
    CHECK(s.locals["n"] == std::to_string(n));
    CHECK(s.locals.count("square") == 0);  // the line has not run yet
  }
  // Back to the 2nd hit, then the 1st; then on to the start of the recording.
  for (int n : {1, 0}) {
    ScriptStop s = resume_to(c, "reverseContinue", tid);
    INFO("back to hit " << n);
    CHECK(s.line == square);
    CHECK(s.locals["n"] == std::to_string(n));
  }
  stop = resume(c, "reverseContinue", tid);
  CHECK(stop["body"]["reason"] != "breakpoint");
  // Forwards again from the start: the first hit.
  CHECK(resume_to(c, "continue", tid).locals["n"] == "0");
  c.check_schema();
}

TEST_CASE("Python breakpoints: a condition in Python, a logpoint, a hit count, from the end back",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int square = line_of(PY_LINES_HELPER, "square = n * n");
  const int total = line_of(PY_LINES_HELPER, "total = square + 1");
  json set =
      launch_with(c, PY_LINES_HELPER,
                  json::array({{{"line", square}, {"logMessage", "n is {n}"}},
                               {{"line", total}, {"condition", "n >= 2 and label == 'odd'"}}}));
  REQUIRE(set.size() == 2);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  ScriptStop s = where(c, tid);
  CHECK(s.line == total);
  CHECK(s.locals["n"] == "3");  // the first n >= 2 that is odd
  CHECK(s.locals["label"] == "'odd'");
  CHECK(s.locals["square"] == "9");
  std::string logged;
  for (const json& e : c.seen("output")) logged += e["body"].value("output", "");
  CHECK(logged.find("n is 0\nn is 1\nn is 2\nn is 3\n") != std::string::npos);
  // No other call stops: forwards to the end, the logpoint prints n = 4.
  stop = resume(c, "continue", tid);
  CHECK(stop["body"]["reason"] != "breakpoint");
  logged.clear();
  for (const json& e : c.seen("output")) logged += e["body"].value("output", "");
  CHECK(logged.find("n is 4\n") != std::string::npos);
  // From the end, reverseContinue finds the last call that meets the condition.
  s = resume_to(c, "reverseContinue", tid);
  CHECK(s.line == total);
  CHECK(s.locals["n"] == "3");
  // A breakpoint in the main script's module-level code binds at once (its code is on the
  // stack here); going back, it stops at the call that led here.
  const int call = line_of(PY_LINES_MAIN, "value = helper.accumulate(n)  # call site");
  json r = c.request("setBreakpoints",
                     {{"source", {{"path", PY_LINES_HELPER}}}, {"breakpoints", json::array()}});
  REQUIRE(r["success"] == true);
  r = c.request("setBreakpoints", {{"source", {{"path", PY_LINES_MAIN}}},
                                   {"breakpoints", json::array({{{"line", call}}})}});
  REQUIRE(r["success"] == true);
  CHECK(r["body"]["breakpoints"][0]["verified"] == true);
  s = resume_to(c, "reverseContinue", tid);
  CHECK(s.function == "<module>");
  CHECK(s.file == PY_LINES_MAIN);
  CHECK(s.line == call);
  // A hit count: from the call with n = 3, the 2nd pass of the helper's first line is n = 4.
  r = c.request("setBreakpoints",
                {{"source", {{"path", PY_LINES_MAIN}}}, {"breakpoints", json::array()}});
  r = c.request("setBreakpoints",
                {{"source", {{"path", PY_LINES_HELPER}}},
                 {"breakpoints", json::array({{{"line", square}, {"hitCondition", "== 2"}}})}});
  REQUIRE(r["success"] == true);
  s = resume_to(c, "continue", tid);
  CHECK(s.line == square);
  CHECK(s.locals["n"] == "4");
  c.check_schema();
}

TEST_CASE("Python breakpoints: a malformed condition is refused clearly", "[dap][python]") {
  test::DapClient c(REWIND_BIN);
  start_replay(c, PY_LINES_MAIN);
  json r = c.request("setBreakpoints",
                     {{"source", {{"path", PY_LINES_HELPER}}},
                      {"breakpoints", json::array({{{"line", 6}, {"condition", "(n >= 2"}}})}});
  CHECK(r["success"] == false);
  INFO(r.dump());
  CHECK(r["message"].get<std::string>().find("not closed") != std::string::npos);
}

TEST_CASE("Python breakpoints in a loop the interpreter specializes: every pass, once, both ways",
          "[dap][python][debug-registers]") {
  // After a few passes CPython rewrites the loop's bytecode (quickening, specialized and
  // fused instructions): a logpoint must still print each pass exactly once, in order.
  test::DapClient c(REWIND_BIN);
  const int body = line_of(PY_LINES_HELPER, "acc = acc + i  # churn body");
  launch_with(c, PY_LINES_HELPER,
              json::array({{{"line", body}, {"logMessage", "pass {i} acc {acc}"}},
                           {{"line", body}, {"condition", "i == 55"}}}));
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  ScriptStop s = where(c, tid);
  CHECK(s.function == "churn");
  CHECK(s.line == body);
  CHECK(s.locals["i"] == "55");
  CHECK(s.locals["acc"] == "1485");  // sum(range(55))
  std::string expected;
  for (int i = 0, acc = 0; i <= 55; acc += i, ++i)
    expected += "pass " + std::to_string(i) + " acc " + std::to_string(acc) + "\n";
  std::string logged;
  for (const json& e : c.seen("output"))
    if (e["body"].value("output", "").rfind("pass ", 0) == 0) logged += e["body"]["output"];
  CHECK(logged == expected);
  // Backwards to earlier passes that meet another condition.
  json r = c.request(
      "setBreakpoints",
      {{"source", {{"path", PY_LINES_HELPER}}},
       {"breakpoints", json::array({{{"line", body}, {"condition", "i == 13 or i == 31"}}})}});
  REQUIRE(r["success"] == true);
  for (const char* i : {"31", "13"}) {
    s = resume_to(c, "reverseContinue", tid);
    CHECK(s.line == body);
    CHECK(s.locals["i"] == i);
  }
  // And forwards again to the next one.
  CHECK(resume_to(c, "continue", tid).locals["i"] == "31");
  c.check_schema();
}

TEST_CASE("a Python function breakpoint by qualified name: its body's first line, both ways",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  start_replay(c, PY_LINES_MAIN);
  // A native function and a Python one in the same request: the answer keeps the order.
  json r = c.request("setFunctionBreakpoints",
                     {{"breakpoints",
                       {{{"name", "helper.accumulate"}, {"condition", "n == 2"}},
                        {{"name", "no_such_native_function"}}}}});
  REQUIRE(r["success"] == true);
  const json& bps = r["body"]["breakpoints"];
  REQUIRE(bps.size() == 2);
  CHECK(bps[0]["verified"] == false);  // pending: helper.py is not imported yet
  CHECK(bps[1]["verified"] == false);
  int id = bps[0]["id"];
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "function breakpoint");
  CHECK(stop["body"]["hitBreakpointIds"] == json::array({id}));
  int tid = stop["body"]["threadId"];
  ScriptStop s = where(c, tid);
  CHECK(s.function == "accumulate");
  CHECK(s.file == PY_LINES_HELPER);
  CHECK(s.line == line_of(PY_LINES_HELPER, "square = n * n"));
  CHECK(s.locals["n"] == "2");
  // Another function, then back to the condition's call from after it.
  r = c.request("setFunctionBreakpoints", {{"breakpoints", {{{"name", "helper.churn"}}}}});
  REQUIRE(r["success"] == true);
  CHECK(r["body"]["breakpoints"][0]["verified"] == true);  // its code is known: helper.py ran
  s = resume_to(c, "continue", tid, "function breakpoint");
  CHECK(s.function == "churn");
  CHECK(s.line == line_of(PY_LINES_HELPER, "acc = 0"));
  CHECK(s.locals["count"] == "60");
  r = c.request("setFunctionBreakpoints",
                {{"breakpoints", {{{"name", "helper.accumulate"}, {"hitCondition", "2"}}}}});
  REQUIRE(r["success"] == true);
  // back: n = 4 is the 1st hit, n = 3 the 2nd
  CHECK(resume_to(c, "reverseContinue", tid, "function breakpoint").locals["n"] == "3");
  c.check_schema();
}

TEST_CASE("a Python breakpoint set long after its module was imported binds at once",
          "[dap][python][debug-registers]") {
  // Stopped at the end of main.py, where helper.accumulate is on no stack: the breakpoint
  // binds in the function objects alive there, and reverseContinue finds the last call.
  test::DapClient c(REWIND_BIN);
  const int done = line_of(PY_LINES_MAIN, "print(\"DONE\"");
  launch_with(c, PY_LINES_MAIN, json::array({{{"line", done}}}));
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  CHECK(where(c, tid).line == done);
  json r = c.request(
      "setBreakpoints",
      {{"source", {{"path", PY_LINES_HELPER}}},
       {"breakpoints", json::array({{{"line", line_of(PY_LINES_HELPER, "square = n * n")}}})}});
  REQUIRE(r["success"] == true);
  CHECK(r["body"]["breakpoints"][0]["verified"] == true);
  ScriptStop s = resume_to(c, "reverseContinue", tid);
  CHECK(s.function == "accumulate");
  CHECK(s.locals["n"] == "4");
  c.check_schema();
}

TEST_CASE("Python breakpoints in two threads: every call forwards, the last one back",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  launch_with(c, PY_LINES_HELPER,
              json::array({{{"line", line_of(PY_LINES_HELPER, "square = n * n")}}}),
              PY_LINES_THREADS);
  // Forwards: each call once, in the thread that made it.
  std::map<std::string, int> thread_of;  // n -> thread
  std::string last;
  for (json stop = c.event("stopped"); stop["body"]["reason"] == "breakpoint";
       stop = resume(c, "continue", stop["body"]["threadId"])) {
    int tid = stop["body"]["threadId"];
    ScriptStop s = where(c, tid);
    REQUIRE(s.function == "accumulate");
    CHECK(thread_of.count(s.locals["n"]) == 0);
    thread_of[s.locals["n"]] = tid;
    last = s.locals["n"];
    REQUIRE(thread_of.size() <= 6);
  }
  std::vector<std::string> seen;
  for (const auto& [n, tid] : thread_of) seen.push_back(n);
  CHECK(seen == std::vector<std::string>{"10", "11", "12", "20", "21", "22"});
  CHECK(thread_of["10"] == thread_of["12"]);
  CHECK(thread_of["20"] == thread_of["22"]);
  CHECK(thread_of["10"] != thread_of["20"]);
  // From the end, back to the last call made, in its thread.
  json stop = resume(c, "reverseContinue", thread_of["10"]);
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  CHECK(where(c, tid).locals["n"] == last);
  CHECK(tid == thread_of[last]);
  c.check_schema();
}

TEST_CASE("the bytecode of a Python frame: rewind/interpreterCode",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int square = line_of(PY_LINES_HELPER, "square = n * n");
  const int total = line_of(PY_LINES_HELPER, "total = square + 1");
  launch_with(c, PY_LINES_HELPER, json::array({{{"line", total}}}));
  int tid = c.event("stopped")["body"]["threadId"];
  json frames = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"];
  REQUIRE(!frames.empty());
  REQUIRE(frames[0]["name"] == "accumulate");
  json code = test::interpreter_code(c, frames[0]["id"]);
  CHECK(code["language"] == "python");
  CHECK(code["function"] == "accumulate");
  CHECK(code["source"]["path"] == PY_LINES_HELPER);
  CHECK(code["format"].get<std::string>().starts_with("CPython 3."));
  // The version's own opcode names, inline caches skipped: a function starts with RESUME,
  // `n * n` is a BINARY_OP (specialized or not) on the square line, and the frame stands
  // at an instruction of the breakpoint's line (3.12 runs its start fused with the line
  // before: STORE_FAST__LOAD_FAST).
  json ins = code["instructions"];
  REQUIRE(ins.size() > 5);
  CHECK(ins[0]["opcode"].get<std::string>().starts_with("RESUME"));  // 3.13: RESUME_CHECK
  bool multiply = false;
  for (const json& i : ins)
    if (i["line"] == square && i["opcode"].get<std::string>().starts_with("BINARY_OP"))
      multiply = true;
  CHECK(multiply);
  REQUIRE(code["current"].is_object());
  CHECK(code["current"]["line"] == total);
  std::set<std::string> constants;
  for (const json& k : code["constants"]) constants.insert(k);
  CHECK(constants.count("'even'  (str)"));
  CHECK(constants.count("2  (int)"));
  c.check_schema();
}

TEST_CASE("script breakpoints are refused with the reason where reads cannot be watched",
          "[dap][python][no-debug-registers]") {
  // rewind finds a script's lines by watching the interpreter read its code, a debug register
  // a watched word. Where the CPU does not give programs its debug registers (a PVM guest;
  // REWIND_SOFT_DEBUG_REGISTERS=1 makes any machine one: ctest's
  // dap_interp.no_debug_registers), Python and R line and function breakpoints are answered
  // unverified with the reason, and a run goes past their lines to the end of the recording.
  const bool refused = !rwd::hardware_debug_registers();
  test::DapClient c(REWIND_BIN);
  const int square = line_of(PY_LINES_HELPER, "square = n * n");
  start_replay(c, PY_LINES_MAIN);
  json lines = c.request("setBreakpoints", {{"source", {{"path", PY_LINES_HELPER}}},
                                            {"breakpoints", json::array({{{"line", square}}})}});
  json r_lines = c.request("setBreakpoints", {{"source", {{"path", R_LINES_HELPER}}},
                                              {"breakpoints", json::array({{{"line", 3}}})}});
  json functions = c.request("setFunctionBreakpoints",
                             {{"breakpoints", json::array({{{"name", "helper.accumulate"}}})}});
  for (const json* r : {&lines, &r_lines, &functions}) {
    REQUIRE((*r)["success"] == true);
    REQUIRE((*r)["body"]["breakpoints"].size() == 1);
    const json& b = (*r)["body"]["breakpoints"][0];
    CHECK(b["verified"] == false);  // nothing is bound at the start of the recording
    std::string message = b.value("message", "");
    INFO(message);
    CHECK((message.find("debug registers") != std::string::npos &&
           message.find("cannot see reads") != std::string::npos) == refused);
  }
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  if (refused) {
    CHECK(stop["body"]["reason"] != "breakpoint");
    CHECK(stop["body"].value("description", "").find("The end of the recording") !=
          std::string::npos);
    // A query made of such breakpoints says why, rather than finding no calls.
    json calls = c.request("rewind/calls", {{"function", "helper.accumulate"}});
    CHECK(calls["success"] == false);
    CHECK(calls.dump().find("cannot see reads") != std::string::npos);
  } else {  // the line and the function's first line are the same one: either may report it
    const std::string reason = stop["body"]["reason"];
    CHECK((reason == "breakpoint" || reason == "function breakpoint"));
    CHECK(where(c, stop["body"]["threadId"]).line == square);
  }
  c.check_schema();
}
