// rewind/history on an R local, over a real pipe, on replays of R sourcing
// tests/programs/r_history.R with its JIT off (the AST evaluator: each value a new object) and
// on (byte code: numbers stored unboxed in the binding): in the second of three calls of
// running() that a loop makes one after another (their contexts at one address), the values
// of `total` and of `squares` (a vector changed in place), checked against what R printed
// natively; an argument's binding, a loop variable's values, a local assigned once;
// rewind/seek to one, with the R frame's locals there; a local not bound yet where the
// question is asked, found as the call makes it; a name the call never binds, no values.
// rewind/previousChange and rewind/nextChange through the same values, and back through a
// vector's elements.
#include <stdio.h>

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;

namespace {

int line_of(const std::string& marker) {
  return int(test::line_of(R_HISTORY, marker));
}

std::string r_command() {
  return "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = TRUE); "
         "source(\"" +
         std::string(R_HISTORY) + "\")'";
}

/// The values R printed natively on lines "`what` n value..." for `n`, in order, as the
/// Variables view shows them ("1"; a vector "c(1, 4, 0) [3]").
std::vector<std::string> printed_values(const std::string& what, const std::string& n) {
  FILE* p = popen(r_command().c_str(), "r");
  REQUIRE(p != nullptr);
  std::vector<std::string> out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) {
    std::istringstream line(buf);
    std::string word, call, value;
    line >> word >> call;
    if (word != what || call != n) continue;
    std::vector<std::string> values;
    while (line >> value) values.push_back(value);
    if (values.size() == 1) {
      out.push_back(values[0]);
      continue;
    }
    std::string text = "c(";
    for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + values[i];
    out.push_back(text + ") [" + std::to_string(values.size()) + "]");
  }
  REQUIRE(pclose(p) == 0);
  return out;
}

json history(test::DapClient& c, const json& args) {
  c.deadline(std::chrono::seconds(300));
  json r = c.request("rewind/history", args);
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  return r["body"];
}

/// Records R sourcing R_HISTORY with its JIT at level `jit` (R_ENABLE_JIT) and launches a
/// replay of it in `c` that runs to the end of the second call, running(4) (a breakpoint with
/// a hit count, left set); returns the stopped thread.
int stop_at_second_end(test::DapClient& c, const char* jit) {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", jit, 1);
  std::string trace = test::recorded_trace(REWIND_BIN, r_command());
  c.deadline(std::chrono::seconds(300));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  json end = {{"line", line_of("total  # the result")}, {"hitCondition", "2"}};
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", R_HISTORY}}},
                                       {"breakpoints", json::array({end})}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  return stop["body"]["threadId"];
}

}  // namespace

TEST_CASE("rewind/history lists the values of an R local in one call",
          "[dap][r][r-history][debug-registers]") {
  const char* jit = GENERATE("0", "3");
  INFO("R_ENABLE_JIT=" << jit);
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", jit, 1);
  std::vector<std::string> want = printed_values("BIND", "4");
  REQUIRE(want == std::vector<std::string>{"1", "5", "14", "30"});
  want.insert(want.begin(), "0");  // total <- 0

  test::DapClient c(REWIND_BIN);
  int tid = stop_at_second_end(c, jit);
  test::ScriptStop at = test::script_stop(c, tid);
  REQUIRE(at.function == "running");
  REQUIRE(at.locals["n"] == "4L");
  json frame = test::top_frame(c, tid);

  json h = history(c, {{"expression", "total"}, {"frameId", frame["id"]}});
  CHECK(h["complete"] == true);
  CHECK(h["frameFunction"] == "running");
  // `total <- 0`, then each value the call printed; not the other calls' (3 and 2).
  std::vector<std::string> got;
  for (const json& ch : h["changes"]) got.push_back(ch["newValue"]);
  CHECK(got == want);
  REQUIRE(h["changes"].size() == want.size());
  CHECK(h["changes"][0]["oldValue"] == "<unbound>");
  CHECK(h["changes"][0]["line"] == line_of("total <- 0"));
  for (size_t i = 1; i < want.size(); ++i) {
    INFO("change " << i);
    CHECK(h["changes"][i]["oldValue"] == want[i - 1]);
    CHECK(h["changes"][i]["function"] == "running");
    CHECK(h["changes"][i]["line"] == line_of("# total changes"));
    CHECK(h["changes"][i]["source"]["path"] == R_HISTORY);
    CHECK(h["changes"][i]["threadId"] == tid);
  }

  // An argument is bound as the call starts, at the caller's line; the loop's variable is
  // bound to NULL as the loop starts (R's do_for), then takes each value of its sequence,
  // written in place into one integer vector.
  json n = history(c, {{"expression", "n"}, {"frameId", frame["id"]}});
  REQUIRE(n["changes"].size() == 1);
  CHECK(n["changes"][0]["newValue"] == "4L");
  CHECK(n["changes"][0]["line"] == line_of("# the calls"));
  json k = history(c, {{"expression", "k"}, {"frameId", frame["id"]}});
  got.clear();
  for (const json& ch : k["changes"]) got.push_back(ch["newValue"]);
  CHECK(got == std::vector<std::string>{"NULL", "1L", "2L", "3L", "4L"});

  // A local assigned once, as the call's last write of it.
  json parity = history(c, {{"expression", "parity"}, {"frameId", frame["id"]}});
  REQUIRE(parity["changes"].size() == 1);
  CHECK(parity["changes"][0]["newValue"] == "\"even\"");
  CHECK(parity["changes"][0]["oldValue"] == "<unbound>");
  CHECK(parity["changes"][0]["line"] == line_of("# assigned once"));

  // A vector's elements changed in place (32 bytes: watched in software), one by one.
  std::vector<std::string> squares = printed_values("SQUARES", "4");
  REQUIRE(squares.size() == 4);
  CHECK(squares[3] == "c(1, 4, 9, 16) [4]");
  squares.insert(squares.begin(), "c(0, 0, 0, 0) [4]");  // numeric(n)
  json sq = history(c, {{"expression", "squares"}, {"frameId", frame["id"]}});
  got.clear();
  for (const json& ch : sq["changes"]) got.push_back(ch["newValue"]);
  CHECK(got == squares);
  for (size_t i = 1; i < sq["changes"].size(); ++i)
    CHECK(sq["changes"][i]["line"] == line_of("# an element changes"));

  // To the third value (total = 5): the R frame's locals there.
  REQUIRE(c.request("rewind/history",
                    {{"expression", "total"}, {"frameId", frame["id"]}})["success"] == true);
  json r = c.request("rewind/seek", {{"change", 2}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  at = test::script_stop(c, tid);
  CHECK(at.function == "running");
  CHECK(at.line == line_of("# total changes"));
  CHECK(at.locals["total"] == "5");
  CHECK(at.locals["n"] == "4L");

  // To a value written in place: k = 3L, while total is still 5.
  json here = test::top_frame(c, tid);
  REQUIRE(history(c, {{"expression", "k"}, {"frameId", here["id"]}})["changes"].size() == 5);
  r = c.request("rewind/seek", {{"change", 3}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  at = test::script_stop(c, tid);
  CHECK(at.function == "running");
  CHECK(at.locals["k"] == "3L");
  CHECK(at.locals["total"] == "5");

  // At the call's first line, before `total <- 0` runs: the local is not bound yet, and its
  // history is found as the call makes it (the same values); going to its making shows it.
  REQUIRE(c.request("setBreakpoints",
                    {{"source", {{"path", R_HISTORY}}},
                     {"breakpoints", {{{"line", line_of("total <- 0")}}}}})["success"] == true);
  c.deadline(std::chrono::seconds(300));
  REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
  REQUIRE(c.event("stopped")["body"]["reason"] == "breakpoint");
  at = test::script_stop(c, tid);
  REQUIRE(at.line == line_of("total <- 0"));
  REQUIRE(at.locals["n"] == "4L");
  REQUIRE(at.locals.count("total") == 0);
  json early = history(c, {{"expression", "total"}, {"frameId", test::top_frame(c, tid)["id"]}});
  got.clear();
  for (const json& ch : early["changes"]) got.push_back(ch["newValue"]);
  CHECK(got == want);
  CHECK(early["changes"][0]["line"] == line_of("total <- 0"));
  r = c.request("rewind/seek", {{"change", 0}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  at = test::script_stop(c, tid);
  CHECK(at.locals["total"] == "0");
  CHECK(at.locals["n"] == "4L");

  // A name the call never binds has no values.
  json none = history(c, {{"expression", "nosuch"}, {"frameId", test::top_frame(c, tid)["id"]}});
  CHECK(none["complete"] == true);
  CHECK(none["changes"].empty());
  c.check_schema();
}

TEST_CASE(
    "rewind/previousChange and rewind/nextChange move between an R local's values in one call",
    "[dap][r][r-history][debug-registers]") {
  const char* jit = GENERATE("0", "3");
  INFO("R_ENABLE_JIT=" << jit);
  setenv("R_HOME", "/usr/lib/R", 1);
  std::vector<std::string> want = printed_values("BIND", "4");
  REQUIRE(want.size() == 4);
  want.insert(want.begin(), "0");
  test::DapClient c(REWIND_BIN);
  int tid = stop_at_second_end(c, jit);
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", R_HISTORY}}},
                                       {"breakpoints", json::array()}})["success"] == true);

  // Each move stops just after a change of this call's `total` or `squares`, in the same
  // call (n is 4), and tells the value on the console: the move's console line, then where
  // it stopped.
  auto move = [&](const char* command, const std::string& name) {
    json r = c.request(command, {{"expression", name}, {"frameId", test::top_frame(c, tid)["id"]}});
    INFO(r.dump());
    REQUIRE(r["success"] == true);
    std::string said;
    while (said.rfind("rewind: " + name + " ", 0) != 0)
      said = c.event("output")["body"].value("output", "");
    CHECK(c.event("stopped")["body"]["reason"] == "goto");
    test::ScriptStop at = test::script_stop(c, tid);
    CHECK(at.function == "running");
    CHECK(at.locals["n"] == "4L");
    return std::make_tuple(at.locals[name], said, at.line);
  };
  for (size_t i = want.size(); i-- > 0;) {
    auto [value, said, line] = move("rewind/previousChange", "total");
    CHECK(value == want[i]);
    CHECK(said.find("total = " + want[i] + " (event ") != std::string::npos);
    CHECK(line == line_of(i == 0 ? "total <- 0" : "# total changes"));
  }
  // Before `total <- 0` the call had not made it: no change that way; the session stays.
  auto [first, none_before, line] = move("rewind/previousChange", "total");
  CHECK(first == "0");
  INFO(none_before);
  CHECK(none_before.find("total does not change before this point in this call of running") !=
        std::string::npos);
  for (size_t i = 1; i < want.size(); ++i)
    CHECK(std::get<0>(move("rewind/nextChange", "total")) == want[i]);
  auto [last, none_after, end_line] = move("rewind/nextChange", "total");
  CHECK(last == "30");
  CHECK(none_after.find("does not change after") != std::string::npos);

  // A vector changed in place: back to the write of its last element.
  auto [squares, said, at_line] = move("rewind/previousChange", "squares");
  CHECK(squares == "c(1, 4, 9, 16) [4]");
  CHECK(at_line == line_of("# an element changes"));
  auto [before, said_before, before_line] = move("rewind/previousChange", "squares");
  CHECK(before == "c(1, 4, 9, 0) [4]");

  // From the call's first line, before `total <- 0` runs: nothing before; forwards, its
  // making, then its next value.
  REQUIRE(c.request("setBreakpoints",
                    {{"source", {{"path", R_HISTORY}}},
                     {"breakpoints", {{{"line", line_of("total <- 0")}}}}})["success"] == true);
  c.deadline(std::chrono::seconds(300));
  REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
  REQUIRE(c.event("stopped")["body"]["reason"] == "breakpoint");
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", R_HISTORY}}},
                                       {"breakpoints", json::array()}})["success"] == true);
  auto [unbound, none_yet, first_line] = move("rewind/previousChange", "total");
  CHECK(first_line == line_of("total <- 0"));
  CHECK(unbound == "");  // (not among the locals)
  CHECK(none_yet.find("does not change before") != std::string::npos);
  auto [made, said_made, made_line] = move("rewind/nextChange", "total");
  CHECK(made == "0");
  CHECK(said_made.find("total = 0 (event ") != std::string::npos);
  CHECK(made_line == line_of("total <- 0"));
  CHECK(std::get<0>(move("rewind/nextChange", "total")) == want[1]);
}
