// `rewind dap` over real pipes: a replay of tests/programs/symbols_demo.c debugged the way an
// editor does it (breakpoints, stack, variables, steps both ways, evaluate, errors).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstdlib>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;

namespace {

uint32_t line_of(const std::string& marker) {
  return test::line_of(SOURCE_C, marker);
}

json top_frame(test::DapClient& c, int tid) {
  json st = c.request("stackTrace", {{"threadId", tid}});
  REQUIRE(st["success"] == true);
  REQUIRE(!st["body"]["stackFrames"].empty());
  return st["body"]["stackFrames"][0];
}

std::string evaluate(test::DapClient& c, int frame_id, const std::string& expr) {
  json r =
      c.request("evaluate", {{"expression", expr}, {"frameId", frame_id}, {"context", "watch"}});
  return r["success"] == true ? r["body"]["result"].get<std::string>()
                              : "error: " + r["message"].get<std::string>();
}

}  // namespace

TEST_CASE("a replay debugged over DAP on stdio", "[dap]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapClient c(REWIND_BIN);

  json init = c.request("initialize", {{"adapterID", "rewind"}, {"linesStartAt1", true}});
  REQUIRE(init["success"] == true);
  CHECK(init["body"]["supportsStepBack"] == true);
  CHECK(init["body"]["supportsConditionalBreakpoints"] == true);

  // Bad input never ends the session.
  c.send_raw("{not json");
  CHECK(c.event("output")["body"]["output"].get<std::string>().find("malformed") !=
        std::string::npos);
  json unknown = c.request("frobnicate");
  CHECK(unknown["success"] == false);
  CHECK(unknown["message"] == "rewind does not support the \"frobnicate\" request yet");
  json early = c.request("threads");
  CHECK(early["success"] == false);
  CHECK(early["message"].get<std::string>().find("launch") != std::string::npos);
  json record = c.request("launch", {{"program", DEMO}});
  CHECK(record["success"] == false);
  CHECK(record["message"].get<std::string>().find("not supported yet") != std::string::npos);

  json launch = c.request("launch", {{"mode", "replay"}, {"trace", trace}});
  REQUIRE(launch["success"] == true);
  c.event("initialized");
  uint32_t body_line = line_of("total += i;");
  json bps = c.request("setBreakpoints", {{"source", {{"path", SOURCE_C}}},
                                          {"breakpoints", {{{"line", body_line}}}}});
  REQUIRE(bps["success"] == true);
  REQUIRE(bps["body"]["breakpoints"].size() == 1);
  CHECK(bps["body"]["breakpoints"][0]["verified"] == true);
  CHECK(bps["body"]["breakpoints"][0]["line"] == body_line);
  REQUIRE(c.request("configurationDone")["success"] == true);

  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "breakpoint");
  CHECK(stop["body"]["hitBreakpointIds"] == json::array({bps["body"]["breakpoints"][0]["id"]}));
  int tid = stop["body"]["threadId"];
  json threads = c.request("threads");
  REQUIRE(threads["body"]["threads"].size() == 1);
  CHECK(threads["body"]["threads"][0]["id"] == tid);

  json frame = top_frame(c, tid);
  CHECK(frame["name"] == "loop_sum");
  CHECK(frame["line"] == body_line);
  CHECK(frame["source"]["path"] == SOURCE_C);
  json scopes = c.request("scopes", {{"frameId", frame["id"]}});
  REQUIRE(scopes["body"]["scopes"].size() == 3);
  CHECK(scopes["body"]["scopes"][0]["name"] == "Locals");
  json locals = c.request(
      "variables", {{"variablesReference", scopes["body"]["scopes"][0]["variablesReference"]}});
  std::map<std::string, std::string> values;
  for (const json& v : locals["body"]["variables"]) values[v["name"]] = v["value"];
  CHECK(values["total"] == "0");
  CHECK(values["i"] == "0");

  // next, then stepBack: back on the breakpoint's line, with the state of then.
  REQUIRE(c.request("next", {{"threadId", tid}})["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "step");
  CHECK(top_frame(c, tid)["line"] == line_of("sink = total;"));
  REQUIRE(c.request("stepBack", {{"threadId", tid}})["success"] == true);
  // The line stepped back to holds the breakpoint: reported as gdb does, a breakpoint stop.
  std::string reason = c.event("stopped")["body"]["reason"];
  CHECK((reason == "breakpoint" || reason == "step"));
  frame = top_frame(c, tid);
  CHECK(frame["line"] == body_line);

  // continue to the next hit, reverseContinue to the previous one.
  REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "breakpoint");
  CHECK(evaluate(c, top_frame(c, tid)["id"], "i") == "1");
  REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "breakpoint");
  frame = top_frame(c, tid);
  CHECK(evaluate(c, frame["id"], "i") == "0");
  CHECK(evaluate(c, frame["id"], "total + 40") == "40");
  CHECK(evaluate(c, frame["id"], "nosuch") == "error: No symbol \"nosuch\" in current context.");

  // A struct's children, fetched lazily through variablesReference (main's tri).
  json st = c.request("stackTrace", {{"threadId", tid}});
  json main_frame = st["body"]["stackFrames"][1];
  CHECK(main_frame["name"] == "main");
  json tri = c.request("evaluate", {{"expression", "tri"}, {"frameId", main_frame["id"]}});
  REQUIRE(tri["body"]["variablesReference"] > 0);
  json members =
      c.request("variables", {{"variablesReference", tri["body"]["variablesReference"]}});
  REQUIRE(members["body"]["variables"].size() == 6);
  CHECK(members["body"]["variables"][0]["name"] == "name");
  CHECK(members["body"]["variables"][0]["value"] == "\"triangle\"");
  CHECK(members["body"]["variables"][3]["value"] == "BLUE");
  CHECK(members["body"]["variables"][1]["indexedVariables"] == 3);

  REQUIRE(c.request("disconnect")["success"] == true);
  int status = c.wait_exit();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::system(("rm -rf " + trace.substr(0, trace.rfind('/'))).c_str());
}
