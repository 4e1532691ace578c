// Fuzzing `rewind dap` (issue 26): thousands of hostile messages, made by mutating the
// requests of a real session (tests/dap/dap_mutator.h), sent to the adapter over a pipe and
// to a `rewind dap --listen` server over TCP on 127.0.0.1. After each one a valid request must
// still be answered; a hostile message that is still a request (integer seq, string command)
// must get its response; the adapter never dies, never goes silent for 60 s, and everything
// it sends matches the DAP schema. Counts: REWIND_FUZZ_COUNT (default 1,500 over the pipe
// and 600 over TCP), seed: REWIND_FUZZ_SEED (default fixed, printed on failure);
// REWIND_FUZZ_LOG=FILE writes every message sent.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/dap/dap_mutator.h"
#include "tests/support/recorded_trace.h"

using nlohmann::json;

namespace {

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

/// Launches a replay of `trace` stopped at its entry and returns the valid requests of a
/// session there, with the live ids (thread, frame, variables, addresses) filled in.
std::vector<json> start_session(test::DapClient& c, const std::string& trace,
                                const std::string& token) {
  c.deadline(std::chrono::seconds(60));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  json launch = {{"mode", "replay"}, {"trace", trace}, {"stopOnEntry", true}};
  if (!token.empty()) launch["token"] = token;
  REQUIRE(c.request("launch", launch)["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("setFunctionBreakpoints",
                    {{"breakpoints", {{{"name", "loop_sum"}}}}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  c.event("stopped");
  REQUIRE(c.request("continue")["success"] == true);
  c.event("stopped");  // in loop_sum: locals, a caller
  int64_t tid = c.request("threads")["body"]["threads"][0]["id"];
  json frame = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"][0];
  int64_t frame_id = frame["id"];
  std::string pc = frame["instructionPointerReference"];
  int64_t vars =
      c.request("scopes", {{"frameId", frame_id}})["body"]["scopes"][0]["variablesReference"];
  json info = c.request("dataBreakpointInfo", {{"name", "global_counter"}, {"frameId", frame_id}});
  json data_id = info["body"]["dataId"];
  json source = {{"path", SOURCE_C}};
  return {
      {{"command", "threads"}, {"arguments", json::object()}},
      {{"command", "stackTrace"},
       {"arguments", {{"threadId", tid}, {"startFrame", 0}, {"levels", 20}}}},
      {{"command", "scopes"}, {"arguments", {{"frameId", frame_id}}}},
      {{"command", "variables"},
       {"arguments", {{"variablesReference", vars}, {"start", 0}, {"count", 10}}}},
      {{"command", "evaluate"},
       {"arguments",
        {{"expression", "grid[1][2] + n"}, {"frameId", frame_id}, {"context", "watch"}}}},
      {{"command", "evaluate"},
       {"arguments", {{"expression", "global_counter"}, {"context", "hover"}}}},
      {{"command", "setBreakpoints"},
       {"arguments",
        {{"source", source},
         {"breakpoints",
          {{{"line", 30},
            {"condition", "n > 2"},
            {"hitCondition", "2"},
            {"logMessage", "n={n}"}}}}}}},
      {{"command", "setFunctionBreakpoints"},
       {"arguments", {{"breakpoints", {{{"name", "main"}}}}}}},
      {{"command", "setInstructionBreakpoints"},
       {"arguments", {{"breakpoints", {{{"instructionReference", pc}, {"offset", 0}}}}}}},
      {{"command", "setExceptionBreakpoints"}, {"arguments", {{"filters", {"fatal"}}}}},
      {{"command", "dataBreakpointInfo"},
       {"arguments", {{"name", "global_counter"}, {"frameId", frame_id}}}},
      {{"command", "setDataBreakpoints"},
       {"arguments", {{"breakpoints", {{{"dataId", data_id}, {"accessType", "write"}}}}}}},
      {{"command", "breakpointLocations"},
       {"arguments", {{"source", source}, {"line", 20}, {"endLine", 40}}}},
      {{"command", "continue"}, {"arguments", {{"threadId", tid}}}},
      {{"command", "reverseContinue"}, {"arguments", {{"threadId", tid}}}},
      {{"command", "next"}, {"arguments", {{"threadId", tid}, {"granularity", "line"}}}},
      {{"command", "stepIn"}, {"arguments", {{"threadId", tid}}}},
      {{"command", "stepOut"}, {"arguments", {{"threadId", tid}}}},
      {{"command", "stepBack"}, {"arguments", {{"threadId", tid}, {"granularity", "instruction"}}}},
      {{"command", "pause"}, {"arguments", {{"threadId", tid}}}},
      {{"command", "modules"}, {"arguments", {{"startModule", 0}, {"moduleCount", 10}}}},
      {{"command", "loadedSources"}, {"arguments", json::object()}},
      {{"command", "source"}, {"arguments", {{"source", source}}}},
      {{"command", "readMemory"},
       {"arguments", {{"memoryReference", pc}, {"offset", 0}, {"count", 64}}}},
      {{"command", "disassemble"},
       {"arguments",
        {{"memoryReference", pc},
         {"instructionOffset", -4},
         {"instructionCount", 8},
         {"resolveSymbols", true}}}},
      {{"command", "rewind/timeline"}, {"arguments", {{"start", 1}, {"count", 20}}}},
      {{"command", "rewind/seek"}, {"arguments", {{"event", 3}}}},
      {{"command", "rewind/checkpoints"}, {"arguments", {{"action", "list"}}}},
      {{"command", "rewind/when"}, {"arguments", json::object()}},
      {{"command", "rewind/interpreterStack"}, {"arguments", {{"threadId", tid}}}},
      {{"command", "rewind/history"},
       {"arguments",
        {{"expression", "global_counter"}, {"frameId", frame_id}, {"start", 0}, {"count", 5}}}},
      {{"command", "rewind/seek"}, {"arguments", {{"change", 0}}}},
      {{"command", "rewind/calls"}, {"arguments", {{"function", "main"}, {"count", 3}}}},
      {{"command", "rewind/logAll"},
       {"arguments", {{"source", source}, {"line", 30}, {"logMessage", "n={n}"}}}},
      {{"command", "rewind/seek"}, {"arguments", {{"call", 0}}}},
      {{"command", "rewind/seek"}, {"arguments", {{"logHit", 0}}}},
      {{"command", "setVariable"},
       {"arguments", {{"variablesReference", vars}, {"name", "n"}, {"value", "1"}}}},
      {{"command", "setExpression"},
       {"arguments", {{"expression", "global_counter"}, {"value", "7"}, {"frameId", frame_id}}}},
      {{"command", "completions"},
       {"arguments", {{"text", "glo"}, {"column", 4}, {"frameId", frame_id}}}},
      {{"command", "exceptionInfo"}, {"arguments", {{"threadId", tid}}}},
      {{"command", "cancel"}, {"arguments", {{"requestId", 1}}}},
      {{"command", "restart"}, {"arguments", json::object()}},
      {{"command", "launch"}, {"arguments", {{"mode", "replay"}, {"trace", trace}}}},
      {{"command", "attach"}, {"arguments", {{"trace", trace}}}},
      {{"command", "initialize"}, {"arguments", {{"adapterID", "rewind"}}}},
      {{"command", "configurationDone"}, {"arguments", json::object()}},
      {{"command", "goto"}, {"arguments", {{"threadId", tid}, {"targetId", 1}}}},
      {{"command", "terminateThreads"}, {"arguments", {{"threadIds", {tid}}}}},
      {{"command", "writeMemory"}, {"arguments", {{"memoryReference", pc}, {"data", "AAAA"}}}},
  };
}

/// Sends `count` hostile messages, each followed by a `threads` request that must be
/// answered. Returns how many hostile messages were requests owed a response.
int fuzz(test::DapClient& c, std::vector<json> corpus, uint64_t seed, int count) {
  test::DapMutator mutate(std::move(corpus), seed);
  const char* log_path = std::getenv("REWIND_FUZZ_LOG");  // every message, for replaying one
  std::ofstream log;
  if (log_path) log.open(log_path);
  int owed = 0;
  for (int i = 0; i < count; ++i) {
    int64_t seq = 1000000000 + i;
    bool answerable = false;
    std::string body = mutate.next(seq, &answerable);
    INFO("seed " << seed << ", message " << i << ": " << body.substr(0, 400));
    if (log_path) log << body << std::endl;
    c.send_raw(body);
    c.deadline(std::chrono::seconds(60));
    json alive = c.request("threads");
    REQUIRE(alive["command"] == "threads");
    if (answerable) {
      ++owed;
      bool answered = false;
      for (auto it = c.received().rbegin(); it != c.received().rend() && !answered; ++it)
        answered = (*it)["type"] == "response" && (*it)["request_seq"] == seq;
      CHECK(answered);
    }
    c.drop_kept();
  }
  return owed;
}

}  // namespace

TEST_CASE("thousands of hostile messages over a pipe: answered, never fatal", "[dap][fuzz]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  uint64_t seed = env_number("REWIND_FUZZ_SEED", 26);
  int count = int(env_number("REWIND_FUZZ_COUNT", 1500));
  test::DapClient c(REWIND_BIN);
  std::vector<json> corpus = start_session(c, trace, "");
  int owed = fuzz(c, corpus, seed, count);
  CHECK(owed > count / 2);  // most messages reached a handler, not only the parser
  c.deadline(std::chrono::seconds(60));
  REQUIRE(c.request("disconnect")["success"] == true);
  CHECK(WEXITSTATUS(c.wait_exit()) == 0);
  c.check_schema();
}

TEST_CASE("hostile messages over TCP, before and after the token", "[dap][fuzz][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  std::string root = trace.substr(0, trace.rfind('/'));
  uint64_t seed = env_number("REWIND_FUZZ_SEED", 26) + 1;
  int count = int(env_number("REWIND_FUZZ_COUNT", 1500)) * 2 / 5;
  test::DapServer server(REWIND_BIN, "0", {}, {{"REWIND_TRACE_DIR", root}});
  REQUIRE(server.port() > 0);
  std::vector<json> corpus;
  {
    test::DapClient c(server.port());
    corpus = start_session(c, "trace", server.token());
    fuzz(c, corpus, seed, count);
    c.deadline(std::chrono::seconds(60));
    REQUIRE(c.request("disconnect")["success"] == true);
    CHECK(c.closed());
    c.check_schema();
  }
  // Before the token: every hostile message is refused or ignored, nothing is served, and
  // the server takes the next client.
  test::DapMutator mutate(corpus, seed + 1);
  for (int i = 0; i < 50; ++i) {
    test::DapClient c(server.port());
    bool answerable = false;
    std::string body = mutate.next(7, &answerable);
    INFO("message " << i << ": " << body.substr(0, 400));
    c.send_raw(body);
    c.send_raw(R"({"seq":8,"type":"request","command":"threads"})");
    c.deadline(std::chrono::seconds(30));
    CHECK(c.closed());
    for (const json& m : c.received()) {
      CHECK(m.dump().find("\"threads\":[") == std::string::npos);
      CHECK(m.dump().find("\"content\"") == std::string::npos);
    }
    c.check_schema();
  }
  // The last refused session may still be closing: a client told "busy" tries again.
  for (int attempt = 0;; ++attempt) {
    test::DapClient last(server.port());
    last.deadline(std::chrono::seconds(30));
    json r = last.request("initialize", {{"adapterID", "rewind"}});
    if (r["success"] == false && attempt < 50) {
      CHECK(r["message"].get<std::string>().find("busy") != std::string::npos);
      usleep(100000);
      continue;
    }
    REQUIRE(r["success"] == true);
    json launch =
        last.request("launch", {{"mode", "replay"}, {"trace", "trace"}, {"token", server.token()}});
    CHECK(launch["success"] == true);
    break;
  }
}
