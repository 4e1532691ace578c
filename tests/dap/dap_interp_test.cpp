// Python and R frames over DAP: a replay of python3 running tests/programs/nested_calls.py,
// stopped in clock_nanosleep under time.sleep (and R sourcing nested_calls.R, at the stat()
// of its deepest function). "merged" (the default) shows the script's
// functions in stackTrace in place of the eval loop's frames, with their source, scopes and
// locals; "separate" keeps stackTrace native and lists them in rewind/interpreterStack.
#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <cerrno>

#include "engine/trace/trace_reader.h"
#include "tests/dap/dap_client.h"
#include "tests/support/interpreters.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;

namespace {

/// A replay of the script stopped at clock_nanosleep, in `mode`; returns the thread.
int stop_in_sleep(test::DapClient& c, const std::string& mode) {
  std::string trace = test::recorded_trace(REWIND_BIN, test::python() + " " + SCRIPT);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"},
                               {"trace", trace},
                               {"interpreterFrames", mode}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("setFunctionBreakpoints",
                    {{"breakpoints", {{{"name", "clock_nanosleep"}}}}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "function breakpoint");
  return stop["body"]["threadId"];
}

std::vector<std::string> names(const json& frames) {
  std::vector<std::string> out;
  for (const json& f : frames) out.push_back(f["name"]);
  return out;
}

/// The variables behind variablesReference `ref`, name -> value.
std::map<std::string, std::string> values(test::DapClient& c, const json& ref) {
  json vars = c.request("variables", {{"variablesReference", ref}});
  std::map<std::string, std::string> out;
  for (const json& v : vars["body"]["variables"]) out[v["name"]] = v["value"];
  return out;
}

/// Sends step request `cmd` ("next", "rewind/stepInBack"...) for thread `tid`, checks that it
/// stops with reason "step", and returns the first frame shown then.
json step_to(test::DapClient& c, int tid, const std::string& cmd) {
  INFO(cmd);
  REQUIRE(c.request(cmd, {{"threadId", tid}})["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "step");
  return test::top_frame(c, tid);
}

}  // namespace

TEST_CASE("merged: the script's frames in stackTrace, with source, scopes and locals",
          "[dap][python]") {
  test::DapClient c(REWIND_BIN);
  int tid = stop_in_sleep(c, "merged");
  json st = c.request("stackTrace", {{"threadId", tid}});
  REQUIRE(st["success"] == true);
  const json& frames = st["body"]["stackFrames"];
  std::vector<std::string> n = names(frames);
  INFO(json(n).dump());
  CHECK(n.front().find("clock_nanosleep") != std::string::npos);  // where it stopped
  CHECK(std::find(n.begin(), n.end(), "_PyEval_EvalFrameDefault") == n.end());
  // The Python frames, in order, each with its file and line.
  std::vector<json> py;
  for (const json& f : frames)
    if (f.contains("source") && f["source"]["path"] == SCRIPT) py.push_back(f);
  REQUIRE(py.size() == 6);
  std::vector<std::string> expected = {"Pipeline.stage", "Pipeline.stage", "Pipeline.stage",
                                       "Pipeline.stage", "main",           "<module>"};
  for (size_t i = 0; i < 6; ++i) CHECK(py[i]["name"] == expected[i]);
  CHECK(py[0]["line"] == test::line_of(SCRIPT, "time.sleep(0.001)"));
  CHECK(py[4]["line"] == test::line_of(SCRIPT, "total = Pipeline().stage(3"));
  // The deepest Python frame's locals, through scopes and variables, and evaluate.
  json scopes = c.request("scopes", {{"frameId", py[0]["id"]}});
  REQUIRE(scopes["success"] == true);
  REQUIRE(scopes["body"]["scopes"].size() == 1);
  std::map<std::string, std::string> locals =
      values(c, scopes["body"]["scopes"][0]["variablesReference"]);
  CHECK(locals["depth"] == "0");
  CHECK(locals["word"] == "'héllo'");
  CHECK(locals["big"] == "1180591620717411303429");
  CHECK(locals["items"] == "[0, 'axxx', None]");
  json label = c.request("evaluate",
                         {{"expression", "label"}, {"frameId", py[1]["id"]}, {"context", "hover"}});
  CHECK(label["body"]["result"] == "'axx'");
  json missing = c.request("evaluate", {{"expression", "nothing"}, {"frameId", py[1]["id"]}});
  CHECK(missing["success"] == false);
  c.check_schema();
}

TEST_CASE("merged: after a reverseContinue to the breakpoint, the script's stack again",
          "[dap][python]") {
  // Forward to the end of the recording, then back to the clock_nanosleep breakpoint: the
  // Python frames there are those of the first stop.
  test::DapClient c(REWIND_BIN);
  int tid = stop_in_sleep(c, "merged");
  auto python_frames = [&](int thread) {
    json frames = c.request("stackTrace", {{"threadId", thread}})["body"]["stackFrames"];
    std::vector<std::string> out;
    for (const json& f : frames)
      if (f.contains("source") && f["source"]["path"] == SCRIPT)
        out.push_back(std::string(f["name"]) + ":" + std::to_string(int(f["line"])));
    return out;
  };
  std::vector<std::string> first = python_frames(tid);
  REQUIRE(first.size() == 6);
  REQUIRE(c.request("setFunctionBreakpoints", {{"breakpoints", json::array()}})["success"] == true);
  REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
  json end = c.event("stopped");
  CHECK(end["body"]["reason"] != "function breakpoint");
  REQUIRE(c.request("setFunctionBreakpoints",
                    {{"breakpoints", {{{"name", "clock_nanosleep"}}}}})["success"] == true);
  REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
  json back = c.event("stopped");
  CHECK(back["body"]["reason"] == "function breakpoint");
  CHECK(python_frames(back["body"]["threadId"]) == first);
  c.check_schema();
}

TEST_CASE("merged: steps go by the script's lines once a Python frame is on top", "[dap][python]") {
  test::DapClient c(REWIND_BIN);
  int tid = stop_in_sleep(c, "merged");
  c.request("setFunctionBreakpoints", {{"breakpoints", json::array()}});
  auto top = [&] { return test::top_frame(c, tid); };
  auto step = [&](const std::string& cmd) { return step_to(c, tid, cmd); };
  // Out of the C functions under time.sleep, by native steps, until the eval loop runs the
  // deepest Python frame again: stackTrace then starts with it.
  json f = top();
  for (int i = 0; i < 8 && !(f.contains("source") && f["source"]["path"] == SCRIPT); ++i)
    f = step("stepOut");
  REQUIRE(f.contains("source"));
  REQUIRE(f["source"]["path"] == SCRIPT);
  CHECK(f["name"] == "Pipeline.stage");
  int sleep_line = test::line_of(SCRIPT, "time.sleep(0.001)");
  int call_line = test::line_of(SCRIPT, "result = self.stage(depth - 1");
  // next: line by line, then out to the caller; stepBack retraces it.
  f = step("next");
  CHECK(f["name"] == "Pipeline.stage");
  CHECK(f["line"] == sleep_line + 1);
  CHECK(step("next")["line"] == sleep_line + 2);
  f = step("next");
  CHECK(f["line"] == call_line);
  CHECK(step("next")["line"] == call_line + 1);
  CHECK(step("stepBack")["line"] == call_line);
  CHECK(step("stepBack")["line"] == test::line_of(SCRIPT, "if depth == 0:"));
  CHECK(step("next")["line"] == call_line);
  // rewind/stepInBack (gdb's reverse-step) from the next line: into the call made on this
  // one, at the start of the callee's last line, one Python frame deeper; stepOut from there
  // comes back to the call line, and stepBack (a reverse next) steps over the call instead.
  CHECK(step("next")["line"] == call_line + 1);
  const size_t depth =
      c.request("rewind/interpreterStack", {{"threadId", tid}})["body"]["frames"].size();
  f = step("rewind/stepInBack");
  CHECK(f["name"] == "Pipeline.stage");
  CHECK(f["line"] == sleep_line + 2);  // return big
  CHECK(c.request("rewind/interpreterStack", {{"threadId", tid}})["body"]["frames"].size() ==
        depth + 1);
  CHECK(test::evaluate(c, f["id"], "depth") == "0");
  CHECK(step("stepOut")["line"] == call_line);
  CHECK(step("next")["line"] == call_line + 1);
  CHECK(step("stepBack")["line"] == call_line);
  f = step("stepIn");
  CHECK(f["name"] == "Pipeline.stage");
  CHECK(f["line"] == test::line_of(SCRIPT, "def stage("));
  // rewind/stepOutBack: from the callee's first line back to the call in the caller, before
  // it ran; stepIn from there enters the call again.
  CHECK(step("rewind/stepOutBack")["line"] == call_line);
  f = step("stepIn");
  CHECK(f["line"] == test::line_of(SCRIPT, "def stage("));
  CHECK(step("stepOut")["line"] == call_line);
  c.check_schema();
}

TEST_CASE("separate: a native stackTrace, and rewind/interpreterStack", "[dap][python]") {
  test::DapClient c(REWIND_BIN);
  int tid = stop_in_sleep(c, "separate");
  json st = c.request("stackTrace", {{"threadId", tid}});
  std::vector<std::string> n = names(st["body"]["stackFrames"]);
  CHECK(std::find(n.begin(), n.end(), "_PyEval_EvalFrameDefault") != n.end());
  json is = c.request("rewind/interpreterStack", {{"threadId", tid}});
  REQUIRE(is["success"] == true);
  CHECK(is["body"]["interpreter"].get<std::string>().rfind("CPython 3.", 0) == 0);
  const json& frames = is["body"]["frames"];
  REQUIRE(frames.size() == 6);
  CHECK(frames[0]["name"] == "Pipeline.stage");
  CHECK(frames[0]["language"] == "python");
  CHECK(frames[5]["name"] == "<module>");
  std::map<std::string, std::string> locals = values(c, frames[3]["variablesReference"]);
  CHECK(locals["depth"] == "3");
  CHECK(locals["label"] == "'a'");
  c.check_schema();
}

TEST_CASE("off: no interpreter frames", "[dap][python]") {
  test::DapClient c(REWIND_BIN);
  int tid = stop_in_sleep(c, "off");
  json is = c.request("rewind/interpreterStack", {{"threadId", tid}});
  CHECK(is["body"]["frames"].empty());
  json bad = c.request("launch", {{"mode", "replay"}, {"interpreterFrames", "sideways"}});
  CHECK(bad["success"] == false);
}

TEST_CASE("merged: R frames in stackTrace in place of libR's", "[dap][r]") {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", "0", 1);
  // Every syscall traced, so that file.exists()'s stat is an event of its own.
  std::string trace = test::recorded_trace(REWIND_BIN,
                                           "--no-syscall-buffer /usr/lib/R/bin/exec/R --no-echo "
                                           "--no-restore -e 'options(keep.source = TRUE); "
                                           "source(\"" +
                                               std::string(R_SCRIPT) + "\")' --args dap");
  // The events where R looked for a missing file: file.exists() in helper() is one.
  std::vector<uint64_t> checks;
  {
    rwd::TraceReader reader(trace);
    while (auto e = reader.next())
      if (e->kind == rwd::EventKind::Syscall && e->syscallno() == SYS_newfstatat &&
          e->result == -ENOENT)
        checks.push_back(reader.last_event());
  }
  test::DapClient c(REWIND_BIN);
  c.launch_at_entry(trace);
  json frames;
  for (uint64_t n : checks) {
    REQUIRE(c.request("rewind/seek", {{"event", n}})["success"] == true);
    int tid = c.event("stopped")["body"]["threadId"];
    frames = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"];
    bool in_helper = false;
    for (const json& f : frames) in_helper |= f["name"] == "helper";
    if (in_helper) break;
  }
  std::vector<std::string> n = names(frames);
  INFO(json(n).dump());
  auto helper = std::find(n.begin(), n.end(), "helper");
  REQUIRE(helper != n.end());
  size_t h = size_t(helper - n.begin());
  CHECK(frames[h]["source"]["path"] == R_SCRIPT);
  CHECK(frames[h]["line"] == test::line_of(R_SCRIPT, "# the native call"));
  CHECK(n.at(h + 1) == "middle");
  CHECK(frames[h + 1]["line"] == test::line_of(R_SCRIPT, "# the deepest middle"));
  CHECK(std::find(n.begin(), n.end(), "Rf_eval") == n.end());  // libR's frames are replaced
  CHECK(n.front().find("stat") != std::string::npos);  // the native frames it stopped in stay
  json scopes = c.request("scopes", {{"frameId", frames[h]["id"]}});
  std::map<std::string, std::string> locals =
      values(c, scopes["body"]["scopes"][0]["variablesReference"]);
  CHECK(locals["x"] == "10");
  CHECK(locals["label"] == "\"deep\"");
  c.check_schema();
}

TEST_CASE("merged: steps go by R lines once an R frame is on top, both ways",
          "[dap][r][debug-registers]") {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", "3", 1);  // byte-compiled closures (the AST ones: interp r_step_test)
  std::string trace = test::recorded_trace(
      REWIND_BIN,
      "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = TRUE); "
      "source(\"" +
          std::string(R_STEPS) + "\")' --args dap");
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("setFunctionBreakpoints",
                    {{"breakpoints", {{{"name", "getpid"}}}}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  // R calls getpid as it starts too: on to Sys.getpid() under accumulate().
  int tid = 0;
  for (int i = 0; i < 10; ++i) {
    json stop = c.event("stopped");
    REQUIRE(stop["body"]["reason"] == "function breakpoint");
    tid = stop["body"]["threadId"];
    std::vector<std::string> n =
        names(c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"]);
    if (std::find(n.begin(), n.end(), "accumulate") != n.end()) break;
    REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
  }
  c.request("setFunctionBreakpoints", {{"breakpoints", json::array()}});
  auto top = [&] { return test::top_frame(c, tid); };
  auto step = [&](const std::string& cmd) { return step_to(c, tid, cmd); };
  auto line = [](const std::string& marker) { return int(test::line_of(R_STEPS, marker)); };
  // Out of getpid by a native step, then out of Sys.getpid() (base R, no source) by an R
  // step: accumulate() on the line of the call.
  json f = top();
  for (int i = 0; i < 4 && !(f.contains("source") && f["source"]["path"] == R_STEPS); ++i)
    f = step("stepOut");
  REQUIRE(f.contains("source"));
  CHECK(f["name"] == "accumulate");
  CHECK(f["line"] == line("# the marker"));
  f = step("next");
  CHECK(f["line"] == line("total <- total * 2"));
  auto locals = [&](const json& frame) {
    json scopes = c.request("scopes", {{"frameId", frame["id"]}});
    return values(c, scopes["body"]["scopes"][0]["variablesReference"]);
  };
  CHECK(locals(f)["total"] == "14");  // 1 + 4 + 9, before this line doubles it
  f = step("next");
  CHECK(f["line"] == line("doubled <- sapply"));
  CHECK(locals(f)["total"] == "28");
  CHECK(step("stepBack")["line"] == line("total <- total * 2"));
  CHECK(step("stepBack")["line"] == line("# the marker"));
  // rewind/stepInBack: into square(), called on the line before, at its last line; stepOut
  // from there comes back to the call.
  f = step("rewind/stepInBack");
  CHECK(f["name"] == "square");
  CHECK(f["line"] == line("w + 0"));
  CHECK(locals(f)["w"] == "9");
  CHECK(step("stepOut")["line"] == line("# the last call"));
  // rewind/stepOutBack: back to the call of accumulate() in main(), before it ran.
  f = step("rewind/stepOutBack");
  CHECK(f["name"] == "main");
  CHECK(f["line"] == line("# the call"));
  CHECK(locals(f).count("result") == 0);
  // stepIn: into accumulate() at its first line, through R's JIT compiling it (this call is
  // its first); stepOut back to the call, and next over it.
  f = step("stepIn");
  CHECK(f["name"] == "accumulate");
  CHECK(f["line"] == line("total <- 0"));
  CHECK(step("stepOut")["line"] == line("# the call"));
  f = step("next");
  CHECK(f["line"] == line("cat(\"result\""));
  CHECK(locals(f)["result"] == "33");
  c.check_schema();
}
