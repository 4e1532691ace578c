// Script exception stops over DAP. Python (engine/debugger/python_exceptions.h): a replay of
// python3 running tests/programs/python_lines/exceptions.py, which raises and catches
// ValueError and KeyError, lets a thread die of an uncaught KeyError, and ends with an
// uncaught RuntimeError. The exception filters "python-uncaught" and "python-raised" (with
// type names in its condition) stop where the exception is raised, with the raising frame on
// top and its type and message in the stopped event and exceptionInfo, forwards and
// backwards. R (engine/debugger/r_errors.h): "r-error" stops where tests/programs/r_errors.R
// signals its three errors, both ways.
#include <catch2/catch.hpp>

#include "tests/dap/dap_client.h"
#include "tests/support/interpreters.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;

namespace {

int line_of(const std::string& marker) {
  return int(test::line_of(PY_EXCEPTIONS, marker));
}

/// Starts a replay of exceptions.py with exception filter options `filters` (and line
/// breakpoints `lines` in it) set before configurationDone; returns the first stop.
json launch_with(test::DapClient& c, const json& filters, const json& lines = json::array()) {
  // The program ends of its uncaught exception: exit status 1.
  std::string trace = test::recorded_trace(REWIND_BIN, test::python() + " " + PY_EXCEPTIONS, 1);
  c.deadline(std::chrono::seconds(120));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  json r = c.request("setExceptionBreakpoints",
                     {{"filters", json::array()}, {"filterOptions", filters}});
  REQUIRE(r["success"] == true);
  for (const json& b : r["body"]["breakpoints"]) CHECK(b["verified"] == true);
  if (!lines.empty())
    REQUIRE(c.request("setBreakpoints", {{"source", {{"path", PY_EXCEPTIONS}}},
                                         {"breakpoints", lines}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  return c.event("stopped");
}

json filter(const std::string& id, const std::string& condition = "") {
  json f = {{"filterId", id}};
  if (!condition.empty()) f["condition"] = condition;
  return f;
}

/// What a stop at an exception shows: the stopped event's text, the top frame (function,
/// line, locals) of the stopped thread, and exceptionInfo.
struct ExceptionSeen {
  std::string reason, text, function, id, message, break_mode, description;
  int line = 0, tid = 0;
  std::map<std::string, std::string> locals;
};

ExceptionSeen seen(test::DapClient& c, const json& stop) {
  ExceptionSeen s;
  s.reason = stop["body"]["reason"];
  s.text = stop["body"].value("text", "");
  s.tid = stop["body"]["threadId"];
  json frame = test::top_frame(c, s.tid);
  s.function = frame["name"];
  s.line = frame["line"];
  json scopes = c.request("scopes", {{"frameId", frame["id"]}});
  REQUIRE(!scopes["body"]["scopes"].empty());
  json vars = c.request(
      "variables", {{"variablesReference", scopes["body"]["scopes"][0]["variablesReference"]}});
  for (const json& v : vars["body"]["variables"]) s.locals[v["name"]] = v["value"];
  json info = c.request("exceptionInfo", {{"threadId", s.tid}});
  if (info["success"] == true) {
    s.id = info["body"]["exceptionId"];
    s.message = info["body"]["details"]["message"];
    s.break_mode = info["body"]["breakMode"];
    s.description = info["body"]["description"];
  }
  return s;
}

json resume(test::DapClient& c, const std::string& command, int tid) {
  c.deadline(std::chrono::seconds(120));
  REQUIRE(c.request(command, {{"threadId", tid}})["success"] == true);
  return c.event("stopped");
}

}  // namespace

TEST_CASE("uncaught Python exceptions stop at their raise; reverseContinue to earlier raises",
          "[dap][python]") {
  test::DapClient c(REWIND_BIN);
  const int lookup = line_of("return table[key]  # lookup line");
  const int uncaught = line_of("# uncaught raise line");
  const int raise = line_of("# raise line");
  // Forwards: the thread's KeyError first, stopped where lookup() raised it (from C code).
  ExceptionSeen s = seen(c, launch_with(c, json::array({filter("python-uncaught")})));
  // The worker thread: not the process's main thread (whose tid is the pid, in its name).
  int worker = s.tid;
  json threads = c.request("threads");
  INFO(threads.dump());
  int main_tid = 0;
  for (const json& t : threads["body"]["threads"]) {
    std::string name = t["name"];
    int id = t["id"];
    if (name.find("/" + std::to_string(id) + "]") != std::string::npos &&
        name.find("[" + std::to_string(id) + "/") != std::string::npos)
      main_tid = id;
  }
  REQUIRE(main_tid != 0);
  CHECK(s.reason == "exception");
  CHECK(s.text == "KeyError");
  CHECK(s.function == "lookup");
  CHECK(s.line == lookup);
  CHECK(s.locals["key"] == "'missing'");
  CHECK(worker != main_tid);
  CHECK(s.id == "KeyError");
  CHECK(s.message == "'missing'");
  CHECK(s.break_mode == "unhandled");
  // Then the program's own end: the RuntimeError, at its raise in fail(), not in the finally
  // clause that ran after it or where the interpreter printed it.
  s = seen(c, resume(c, "continue", s.tid));
  CHECK(s.reason == "exception");
  CHECK(s.function == "fail");
  CHECK(s.line == uncaught);
  CHECK(s.locals["count"] == "3");
  CHECK(s.locals.count("cleanup") == 0);
  CHECK(s.id == "RuntimeError");
  CHECK(s.message == "gave up after 3");
  CHECK(s.break_mode == "unhandled");
  int tid = s.tid;
  CHECK(tid == main_tid);
  // On to the end: nothing else stops.
  json stop = resume(c, "continue", tid);
  CHECK(stop["body"]["reason"] != "exception");
  // Back from the end to the RuntimeError's raise.
  s = seen(c, resume(c, "reverseContinue", tid));
  CHECK(s.function == "fail");
  CHECK(s.line == uncaught);
  // With raised exceptions too: back to the previous raises, one by one, each where it was
  // raised: the thread's KeyError, the caught KeyError, then ValueError for 3.
  REQUIRE(c.request("setExceptionBreakpoints",
                    {{"filters", json::array({"python-uncaught", "python-raised"})}})["success"] ==
          true);
  s = seen(c, resume(c, "reverseContinue", tid));
  CHECK(s.text == "KeyError");
  CHECK(s.locals["key"] == "'missing'");
  CHECK(s.break_mode == "unhandled");
  s = seen(c, resume(c, "reverseContinue", tid));
  CHECK(s.text == "KeyError");
  CHECK(s.function == "lookup");
  CHECK(s.locals["key"] == "'b'");
  CHECK(s.break_mode == "always");
  s = seen(c, resume(c, "reverseContinue", tid));
  CHECK(s.text == "ValueError");
  CHECK(s.function == "check");
  CHECK(s.line == raise);
  CHECK(s.locals["n"] == "3");
  CHECK(s.message == "odd 3");
  // And forwards again from there: the caught KeyError.
  s = seen(c, resume(c, "continue", tid));
  CHECK(s.locals["key"] == "'b'");
  c.check_schema();
}

TEST_CASE("raised Python exceptions by type name, both ways; the report of an uncaught one",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  const int raise = line_of("# raise line");
  const int uncaught = line_of("# uncaught raise line");
  const int cleanup = line_of("cleanup = count  # finally line");
  // Only ValueError among the raised ones; a breakpoint in fail()'s finally clause.
  ExceptionSeen s = seen(c, launch_with(c, json::array({filter("python-raised", "ValueError")}),
                                        json::array({{{"line", cleanup}}})));
  CHECK(s.text == "ValueError");
  CHECK(s.line == raise);
  CHECK(s.locals["n"] == "1");
  CHECK(s.break_mode == "always");
  int tid = s.tid;
  s = seen(c, resume(c, "continue", tid));
  CHECK(s.locals["n"] == "3");
  // No KeyError stops: the breakpoint in the finally clause, with the RuntimeError behind.
  json stop = resume(c, "continue", tid);
  CHECK(stop["body"]["reason"] == "breakpoint");
  CHECK(seen(c, stop).line == cleanup);
  // In the finally clause the RuntimeError is being handled: reverseContinue goes to its
  // raise (though the filter names only ValueError), and continue comes back.
  s = seen(c, resume(c, "reverseContinue", tid));
  CHECK(s.reason == "exception");
  CHECK(s.text == "RuntimeError");
  CHECK(s.line == uncaught);
  stop = resume(c, "continue", tid);
  CHECK(stop["body"]["reason"] == "breakpoint");
  CHECK(seen(c, stop).line == cleanup);
  // From there, uncaught ones: the RuntimeError was raised before this continue began, so
  // it stops where the interpreter reports it, and says where it was raised.
  REQUIRE(c.request("setExceptionBreakpoints",
                    {{"filters", json::array({"python-uncaught"})}})["success"] == true);
  stop = resume(c, "continue", tid);
  CHECK(stop["body"]["reason"] == "exception");
  CHECK(stop["body"]["text"] == "RuntimeError");
  std::string description = stop["body"]["description"];
  CHECK(description.find("reported here") != std::string::npos);
  CHECK(description.find(":" + std::to_string(uncaught)) != std::string::npos);
  // reverseContinue goes to that raise (passing the finally clause's breakpoint).
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", PY_EXCEPTIONS}}},
                                       {"breakpoints", json::array()}})["success"] == true);
  s = seen(c, resume(c, "reverseContinue", tid));
  CHECK(s.reason == "exception");
  CHECK(s.function == "fail");
  CHECK(s.line == uncaught);
  CHECK(s.message == "gave up after 3");
  c.check_schema();
}

TEST_CASE("R errors stop where they are signalled, caught or not, both ways", "[dap][r]") {
  setenv("R_HOME", "/usr/lib/R", 1);
  std::string trace = test::recorded_trace(
      REWIND_BIN,
      "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = TRUE); "
      "source(\"" +
          std::string(R_ERRORS) + "\")'",
      1);
  test::DapClient c(REWIND_BIN);
  c.deadline(std::chrono::seconds(120));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("setExceptionBreakpoints",
                    {{"filters", json::array({"r-error"})}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  const int stop_line = int(test::line_of(R_ERRORS, "# the stop line"));
  /// The next stop's exception message, and whether the R function check() on top of the
  /// stack (under stop()) is at the stop line.
  auto next = [&](const std::string& command, int tid) {
    json stop = tid ? resume(c, command, tid) : c.event("stopped");
    REQUIRE(stop["body"]["reason"] == "exception");
    tid = stop["body"]["threadId"];
    json info = c.request("exceptionInfo", {{"threadId", tid}});
    REQUIRE(info["success"] == true);
    CHECK(info["body"]["exceptionId"] == "error");
    CHECK(info["body"]["breakMode"] == "always");
    json frames = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"];
    bool in_check = false;
    for (const json& f : frames)
      if (f["name"] == "check") in_check = f.value("line", 0) == stop_line;
    return std::make_tuple(std::string(info["body"]["details"]["message"]), in_check, tid);
  };
  auto [message, in_check, tid] = next("", 0);
  CHECK(message == "too big: 2");
  CHECK(in_check);
  std::tie(message, in_check, tid) = next("continue", tid);
  CHECK(message == "non-numeric argument to mathematical function");
  CHECK(!in_check);
  std::tie(message, in_check, tid) = next("continue", tid);
  CHECK(message == "too big: 3");
  CHECK(in_check);
  // Back: the builtin's error, then the first stop().
  std::tie(message, in_check, tid) = next("reverseContinue", tid);
  CHECK(message == "non-numeric argument to mathematical function");
  std::tie(message, in_check, tid) = next("reverseContinue", tid);
  CHECK(message == "too big: 2");
  c.check_schema();
}

TEST_CASE("rewind/calls of Python functions that raise: each call's return or its exception",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  launch_with(c, json::array());  // no breakpoints: the end of the recording
  c.deadline(std::chrono::seconds(300));
  // check(n) returns n when it is even and raises ValueError when it is odd.
  json r = c.request("rewind/calls", {{"function", "exceptions.check"}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  REQUIRE(r["body"]["totalCalls"] == 5);
  for (int n = 0; n < 5; ++n) {
    const json& call = r["body"]["calls"][size_t(n)];
    INFO("check(" << n << ")");
    CHECK(call["arguments"][0]["value"] == std::to_string(n));
    if (n % 2) {
      CHECK(call["returned"] == false);
      CHECK(!call.contains("returnValue"));
    } else {
      CHECK(call["returned"] == true);
      CHECK(call["returnValue"] == std::to_string(n));
    }
  }
  // lookup() raises KeyError from C code, once in the main thread and once in another one.
  r = c.request("rewind/calls", {{"function", "exceptions.lookup"}});
  REQUIRE(r["success"] == true);
  REQUIRE(r["body"]["totalCalls"] == 2);
  CHECK(r["body"]["calls"][0]["threadId"] != r["body"]["calls"][1]["threadId"]);
  for (const json& call : r["body"]["calls"]) CHECK(call["returned"] == false);
}
