// R line breakpoints over DAP (engine/debugger/r_breakpoints.h): a replay of R sourcing
// tests/programs/r_lines/main.R with its JIT on (level 3: byte-compiled closures; the engine
// test interp.r_breakpoints covers the JIT off too). A breakpoint in helper.R set before R
// runs is pending, binds when the file is sourced (with a `breakpoint` event), stops at
// each call of accumulate() with its locals, and reverseContinue goes back to the 2nd call;
// a condition in R and a logpoint work as for native breakpoints. rewind/calls of an R
// function (with what each call returned) and rewind/logAll on an R line, checked against
// what R printed natively.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;

namespace {

int line_of(const char* file, const std::string& marker) {
  return int(test::line_of(file, marker));
}

/// Starts a replay of R sourcing main.R (recorded once), with `breakpoints` set in helper.R
/// before configurationDone; returns the setBreakpoints response's breakpoints.
json launch_with(test::DapClient& c, const json& breakpoints) {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", "3", 1);
  std::string trace = test::recorded_trace(
      REWIND_BIN,
      "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = TRUE); "
      "source(\"" +
          std::string(R_LINES_MAIN) + "\")' --args dap");
  c.deadline(std::chrono::seconds(300));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  json r = c.request("setBreakpoints",
                     {{"source", {{"path", R_LINES_HELPER}}}, {"breakpoints", breakpoints}});
  REQUIRE(r["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  return r["body"]["breakpoints"];
}

using test::ScriptStop;

ScriptStop where(test::DapClient& c, int tid) {
  return test::script_stop(c, tid);
}

json resume(test::DapClient& c, const std::string& command, int tid) {
  c.deadline(std::chrono::seconds(300));
  REQUIRE(c.request(command, {{"threadId", tid}})["success"] == true);
  return c.event("stopped");
}

std::string logged(test::DapClient& c) {
  std::string out;
  for (const json& e : c.seen("output")) out += e["body"].value("output", "");
  return out;
}

}  // namespace

TEST_CASE("an R line breakpoint in a file not sourced yet: pending, bound, hit both ways",
          "[dap][r][r-breakpoints][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int comment = line_of(R_LINES_HELPER, "# a comment line");
  const int square = line_of(R_LINES_HELPER, "square <- n * n");
  json set = launch_with(c, json::array({{{"line", comment}}}));
  REQUIRE(set.size() == 1);
  CHECK(set[0]["verified"] == false);  // no R runs at the start of the recording
  int id = set[0]["id"];
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  CHECK(stop["body"]["hitBreakpointIds"] == json::array({id}));
  bool verified = false;
  for (const json& e : c.seen("breakpoint"))
    if (e["body"]["breakpoint"]["id"] == id && e["body"]["breakpoint"]["verified"] == true) {
      verified = true;
      CHECK(e["body"]["breakpoint"]["line"] == square);
      CHECK(e["body"]["breakpoint"]["source"]["path"] == R_LINES_HELPER);
    }
  CHECK(verified);
  int tid = stop["body"]["threadId"];
  for (int n = 0; n < 3; ++n) {
    if (n > 0) REQUIRE(resume(c, "continue", tid)["body"]["reason"] == "breakpoint");
    ScriptStop s = where(c, tid);
    INFO("hit " << n);
    CHECK(s.function == "accumulate");
    CHECK(s.file == R_LINES_HELPER);
    CHECK(s.line == square);
    CHECK(s.locals["n"] == std::to_string(n) + "L");
    CHECK(s.locals.count("square") == 0);  // the line has not run yet
  }
  REQUIRE(resume(c, "reverseContinue", tid)["body"]["reason"] == "breakpoint");
  ScriptStop s = where(c, tid);
  CHECK(s.line == square);
  CHECK(s.locals["n"] == "1L");
  c.check_schema();
}

TEST_CASE("R breakpoints: a condition in R and a logpoint", "[dap][r][r-breakpoints][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int square = line_of(R_LINES_HELPER, "square <- n * n");
  const int total = line_of(R_LINES_HELPER, "total <- square + 1");
  json set =
      launch_with(c, json::array({{{"line", square}, {"logMessage", "n is {n}"}},
                                  {{"line", total}, {"condition", "n >= 2 & label == 'odd'"}}}));
  REQUIRE(set.size() == 2);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  ScriptStop s = where(c, tid);
  CHECK(s.line == total);
  CHECK(s.locals["n"] == "3L");  // the first n >= 2 that is odd
  CHECK(s.locals["label"] == "\"odd\"");
  CHECK(logged(c).find("n is 0L\nn is 1L\nn is 2L\nn is 3L\n") != std::string::npos);
  // A malformed condition is refused clearly.
  json r = c.request("setBreakpoints",
                     {{"source", {{"path", R_LINES_HELPER}}},
                      {"breakpoints", json::array({{{"line", total}, {"condition", "(n >= 2"}}})}});
  CHECK(r["success"] == false);
  c.check_schema();
}

TEST_CASE("an R function breakpoint by name, set at the end and hit going back",
          "[dap][r][r-breakpoints][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int square = line_of(R_LINES_HELPER, "square <- n * n");
  launch_with(c, json::array());
  json stop = c.event("stopped");  // the end of the recording: no breakpoints
  int tid = stop["body"]["threadId"];
  json r = c.request("setFunctionBreakpoints",
                     {{"breakpoints", json::array({{{"name", "accumulate"}}})}});
  REQUIRE(r["success"] == true);
  json bp = r["body"]["breakpoints"][0];
  CHECK(bp["verified"] == true);  // defined in the global environment by now
  CHECK(bp["source"]["path"] == R_LINES_HELPER);
  CHECK(bp["line"] == square);
  // Back to its last call, the one before, then forwards to the last again.
  for (const auto& [command, n] :
       {std::pair{"reverseContinue", 4}, {"reverseContinue", 3}, {"continue", 4}}) {
    INFO(command << " to n = " << n);
    json s = resume(c, command, tid);
    REQUIRE(s["body"]["reason"] == "function breakpoint");
    CHECK(s["body"]["hitBreakpointIds"] == json::array({bp["id"]}));
    ScriptStop at = where(c, tid);
    CHECK(at.function == "accumulate");
    CHECK(at.line == square);
    CHECK(at.locals["n"] == std::to_string(n) + "L");
  }
  c.check_schema();
}

/// What R printed natively on its "RESULT n value" lines: value by n, in order.
std::vector<std::pair<std::string, std::string>> printed_results() {
  std::string cmd =
      "R_ENABLE_JIT=3 /usr/lib/R/bin/exec/R --no-echo --no-restore -e "
      "'options(keep.source = TRUE); source(\"" +
      std::string(R_LINES_MAIN) + "\")' --args dap";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::vector<std::pair<std::string, std::string>> out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) {
    std::istringstream line(buf);
    std::string word, n, value;
    line >> word >> n >> value;
    if (word == "RESULT") out.emplace_back(n, value);
  }
  REQUIRE(pclose(p) == 0);
  return out;
}

TEST_CASE("rewind/calls of an R function and rewind/logAll on an R line, as R printed them",
          "[dap][r][r-breakpoints][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int square = line_of(R_LINES_HELPER, "square <- n * n");
  const int result = line_of(R_LINES_HELPER, "# the result");
  launch_with(c, json::array());
  int tid = c.event("stopped")["body"]["threadId"];  // the end: no breakpoints
  std::vector<std::pair<std::string, std::string>> want = printed_results();
  REQUIRE(want.size() == 5);

  // Every call of accumulate(), at the first line of its body, with its argument.
  c.deadline(std::chrono::seconds(300));
  json r = c.request("rewind/calls", {{"function", "accumulate"}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  CHECK(r["body"]["complete"] == true);
  REQUIRE(r["body"]["totalCalls"] == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const json& call = r["body"]["calls"][i];
    CHECK(call["function"] == "accumulate");
    CHECK(call["line"] == square);
    CHECK(call["source"]["path"] == R_LINES_HELPER);
    REQUIRE(call["arguments"].size() == 1);
    CHECK(call["arguments"][0]["name"] == "n");
    CHECK(call["arguments"][0]["value"] == want[i].first + "L");
    // What the call returned (its last expression, `total`), as R printed it.
    CHECK(call["returned"] == true);
    CHECK(call["returnValue"] == want[i].second);
  }

  // A logpoint on the line that returns the result: each call's value, as R printed it.
  r = c.request("rewind/logAll", {{"source", {{"path", R_LINES_HELPER}}},
                                  {"line", result},
                                  {"logMessage", "{total} {label}"}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  REQUIRE(r["body"]["totalHits"] == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const json& hit = r["body"]["hits"][i];
    CHECK(hit["line"] == result);
    CHECK(hit["function"] == "accumulate");
    CHECK(hit["message"] == want[i].second + (i % 2 ? " \"odd\"" : " \"even\""));
  }

  // To the fourth hit: the frame's locals are what its message said; the session had
  // stayed at the end until then.
  json seek = c.request("rewind/seek", {{"logHit", 3}});
  INFO(seek.dump());
  REQUIRE(seek["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  ScriptStop at = where(c, tid);
  CHECK(at.function == "accumulate");
  CHECK(at.line == result);
  CHECK(at.locals["n"] == "3L");
  CHECK(at.locals["total"] == want[3].second);
  c.check_schema();
}

TEST_CASE(
    "rewind/calls of an R function: what a recursion's calls returned, and a call left by "
    "an error",
    "[dap][r][r-breakpoints][debug-registers]") {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", "0", 1);  // the AST evaluator, where return() is a jump
  const std::string cmd =
      "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = TRUE); "
      "source(\"" +
      std::string(R_CALLS) + "\")'";
  // What R printed natively: "SUM n s" as walk(n) returns s, then "FAILED error".
  std::map<std::string, std::string> sums;
  std::string failed;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[256];
  while (fgets(buf, sizeof buf, p)) {
    std::istringstream line(buf);
    std::string word, n, value;
    line >> word >> n >> value;
    if (word == "SUM") sums[n] = value;
    if (word == "FAILED") failed = n;
  }
  REQUIRE(pclose(p) == 0);
  REQUIRE(sums.size() == 3);
  REQUIRE(failed == "error");

  std::string trace = test::recorded_trace(REWIND_BIN, cmd);
  test::DapClient c(REWIND_BIN);
  c.deadline(std::chrono::seconds(300));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);
  c.event("stopped");  // the end: no breakpoints

  json r = c.request("rewind/calls", {{"function", "walk"}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  REQUIRE(r["body"]["totalCalls"] == 5);
  // walk(3) down to walk(0), in the order they were called: each returned what R printed
  // for it (0L for the innermost, by return()).
  for (int i = 0; i < 4; ++i) {
    const json& call = r["body"]["calls"][i];
    std::string n = std::to_string(3 - i);
    REQUIRE(call["arguments"].size() == 2);
    CHECK(call["arguments"][0]["name"] == "n");
    // R's arguments are lazy: `n - 1L` is not evaluated yet as the body starts.
    CHECK(call["arguments"][0]["value"] == (i == 0 ? "3L" : "<promise: not evaluated yet>"));
    CHECK(call["returned"] == true);
    CHECK(call["returnValue"] == (n == "0" ? "0L" : sums[n] + "L"));
    if (i > 0) CHECK(call["caller"]["function"] == "walk");
  }
  // walk(1L, fail = TRUE) was left by stop(): no value.
  const json& last = r["body"]["calls"][4];
  CHECK(last["arguments"][0]["value"] == "1L");
  CHECK(last["returned"] == false);
  CHECK_FALSE(last.contains("returnValue"));
  c.check_schema();
}

TEST_CASE("the byte code of an R frame: rewind/interpreterCode", "[dap][r][r-breakpoints][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int square = line_of(R_LINES_HELPER, "square <- n * n");
  launch_with(c, json::array());
  int tid = c.event("stopped")["body"]["threadId"];
  REQUIRE(c.request("setFunctionBreakpoints",
                    {{"breakpoints", json::array({{{"name", "accumulate"}}})}})["success"] == true);
  REQUIRE(resume(c, "reverseContinue", tid)["body"]["reason"] == "function breakpoint");
  json frames = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"];
  REQUIRE(!frames.empty());
  REQUIRE(frames[0]["name"] == "accumulate");
  json code = test::interpreter_code(c, frames[0]["id"]);
  CHECK(code["language"] == "r");
  CHECK(code["function"] == "accumulate");
  CHECK(code["source"]["path"] == R_LINES_HELPER);
  // Compiled by R's JIT (level 3) by its last call: R's own opcode names, lines from its
  // srcrefs, and the frame at the first instruction of the body's first line.
  CHECK(code["format"].get<std::string>().starts_with("R byte code version "));
  json ins = code["instructions"];
  REQUIRE(ins.size() > 5);
  CHECK(ins.back()["opcode"] == "RETURN");
  std::set<std::string> ops;
  for (const json& i : ins) ops.insert(i["opcode"]);
  CHECK(ops.count("GETVAR"));  // n, square...
  CHECK(ops.count("MUL"));     // n * n
  CHECK(ops.count("SETVAR"));  // square <- ...
  REQUIRE(code["current"].is_object());
  CHECK(code["current"]["line"] == square);
  CHECK(code["text"].get<std::string>().find("=> ") != std::string::npos);
  std::set<std::string> constants;
  for (const json& k : code["constants"]) constants.insert(k);
  CHECK(constants.count("n  (name)"));
  CHECK(constants.count("square  (name)"));
  // A native frame (the outermost: the C runtime's) has no byte code: a clear error.
  json e = c.request("rewind/interpreterCode", {{"frameId", frames.back()["id"]}});
  CHECK(e["success"] == false);
  CHECK(e["message"].get<std::string>().find("native frame") != std::string::npos);
  c.check_schema();
}
