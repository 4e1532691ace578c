// `rewind dap` over real pipes given messages no editor sends: fields of the wrong type,
// numbers out of range, requests out of order, huge counts. Each once killed the adapter
// (exit 134 or SIGSEGV), was answered with a truncated number, or read a file of the server's
// machine (source); now each gets an error
// response (or, when it is not a request at all, an output event), the numbers a client sent
// come back exactly, and a valid request is still answered after it. Every message the
// adapter sends is checked against the DAP schema.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"

using nlohmann::json;

namespace {

/// A request `threads` still gets its answer (the adapter is alive and reading).
void still_serving(test::DapClient& c) {
  json r = c.request("threads");
  CHECK(r["command"] == "threads");
}

/// Sends `body` raw and returns the response whose request_seq is `seq`.
json raw_request(test::DapClient& c, const std::string& body, int64_t seq) {
  c.send_raw(body);
  return c.response(seq);
}

}  // namespace

TEST_CASE("hostile DAP messages get an error response and the adapter goes on", "[dap]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);

  // Not a request: a type that is not a string is ignored, with a word in the output.
  c.send_raw(R"({"seq":1,"type":5})");
  CHECK(c.event("output")["body"]["output"].get<std::string>().find("not a request") !=
        std::string::npos);
  still_serving(c);
  // A request whose command or seq has the wrong type: an error response.
  json null_command = raw_request(c, R"({"seq":7001,"type":"request","command":null})", 7001);
  CHECK(null_command["success"] == false);
  CHECK(null_command["message"] == "a request needs an integer \"seq\" and a string \"command\"");
  still_serving(c);
  // A request without a usable seq cannot be answered (a response names its request by
  // seq, 0 or more): it is refused in an output event.
  for (const char* seq : {R"("1")", "null", "[]", "{}", "1.5", "-3", "9223372036854775808"}) {
    INFO("seq " << seq);
    c.send_raw(std::string(R"({"seq":)") + seq + R"(,"type":"request","command":"threads"})");
    CHECK(c.event("output")["body"]["output"].get<std::string>().find(
              "without an integer \"seq\"") != std::string::npos);
    still_serving(c);
  }
  // A seq past 32 bits comes back as it was sent.
  json big =
      raw_request(c, R"({"seq":2147483648,"type":"request","command":"threads"})", 2147483648ll);
  CHECK(big["request_seq"] == 2147483648ll);
  // Requests that need a stopped program, before any launch: an error, not a crash.
  for (const char* command : {"setExpression", "setVariable", "completions", "stackTrace", "scopes",
                              "disassemble", "readMemory", "exceptionInfo"}) {
    INFO(command);
    json r = c.request(command, {{"expression", "x"},
                                 {"value", "1"},
                                 {"text", "x"},
                                 {"threadId", 1},
                                 {"frameId", 1},
                                 {"memoryReference", "0x1000"},
                                 {"instructionCount", 1},
                                 {"count", 1}});
    CHECK(r["success"] == false);
    still_serving(c);
  }

  json launch = c.request("launch", {{"mode", "replay"}, {"trace", trace}, {"stopOnEntry", true}});
  INFO(launch.dump());
  REQUIRE(launch["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);
  c.event("stopped");
  int tid = c.request("threads")["body"]["threads"][0]["id"];

  // Numbers out of range or not integers are refused, never truncated to another thread.
  for (json bad : {json(4294967296ll + tid), json(tid + 0.5), json("1"), json(nullptr)}) {
    INFO("threadId " << bad.dump());
    json r = c.request("stackTrace", {{"threadId", bad}});
    CHECK(r["success"] == false);
    still_serving(c);
  }
  json ok = c.request("stackTrace", {{"threadId", tid}});
  REQUIRE(ok["success"] == true);
  std::string pc = ok["body"]["stackFrames"][0]["instructionPointerReference"];

  // A hit count no replay could reach, and a disassembly window far out of range.
  json hits =
      c.request("setBreakpoints",
                {{"source", {{"path", SOURCE_C}}},
                 {"breakpoints", {{{"line", 1}, {"hitCondition", "99999999999999999999999"}}}}});
  CHECK(hits["success"] == false);
  CHECK(hits["message"].get<std::string>().find("too large") != std::string::npos);
  still_serving(c);
  for (json offset : {json(2147483647), json(-2147483648ll), json(INT64_MIN), json(1e300)}) {
    INFO("instructionOffset " << offset.dump());
    json r = c.request(
        "disassemble",
        {{"memoryReference", pc}, {"instructionOffset", offset}, {"instructionCount", 10}});
    CHECK(r["success"] == false);
    still_serving(c);
  }
  // breakpointLocations over the widest range a line can have is one pass over the line
  // tables (it once looked up each line in turn: minutes under ASan); past it, an error.
  json wide = c.request("breakpointLocations",
                        {{"source", {{"path", SOURCE_C}}}, {"line", 1}, {"endLine", 2147483646}});
  REQUIRE(wide["success"] == true);
  json narrow = c.request("breakpointLocations",
                          {{"source", {{"path", SOURCE_C}}}, {"line", 1}, {"endLine", 10000}});
  CHECK(wide["body"]["breakpoints"] == narrow["body"]["breakpoints"]);
  CHECK(wide["body"]["breakpoints"].size() > 10);
  for (json line : {json(INT64_MAX), json(-5), json(4294967297ll)}) {
    INFO("line " << line.dump());
    json r = c.request("breakpointLocations",
                       {{"source", {{"path", SOURCE_C}}}, {"line", 1}, {"endLine", line}});
    CHECK(r["success"] == false);
    CHECK(r["message"].get<std::string>().find("out of range") != std::string::npos);
    still_serving(c);
  }
  json dis = c.request("disassemble", {{"memoryReference", pc}, {"instructionCount", 4}});
  CHECK(dis["success"] == true);
  CHECK(dis["body"]["instructions"].size() == 4);

  // source serves the program's own files only: not any file of the server's machine, not a
  // device that never ends, not a FIFO that would block the server.
  std::string fifo = trace.substr(0, trace.rfind('/')) + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {std::string("/etc/passwd"), std::string("/dev/zero"), fifo}) {
    INFO("source " << path);
    // A sourceReference of 0 or below names no reference: the path is checked all the same.
    for (int ref : {0, -1}) {
      json r = c.request("source", {{"source", {{"path", path}, {"sourceReference", ref}}}});
      CHECK(r["success"] == false);
      CHECK(r["message"].get<std::string>().find("serves only the debugged program's source") !=
            std::string::npos);
      still_serving(c);
    }
  }
  json own = c.request("source", {{"source", {{"path", SOURCE_C}}}});
  REQUIRE(own["success"] == true);
  CHECK(own["body"]["content"].get<std::string>().find("loop_sum") != std::string::npos);

  c.request("disconnect");
  c.check_schema();
  std::system(("rm -rf " + trace.substr(0, trace.rfind('/'))).c_str());
}

TEST_CASE("a request numbered 0 is served, as nvim-dap 0.6.0 numbers them", "[dap]") {
  // The DAP schema numbers messages from 1; nvim-dap 0.6.0 starts at 0, so its initialize is
  // seq 0. The answer names it (request_seq 0), which the schema's minimum of 1 would refuse
  // as it refuses the request itself: this client's messages are not checked against it.
  test::DapClient c(REWIND_BIN);
  json init = raw_request(
      c, R"({"seq":0,"type":"request","command":"initialize","arguments":{"adapterID":"x"}})", 0);
  CHECK(init["success"] == true);
  CHECK(init["request_seq"] == 0);
  CHECK(init["body"]["supportsStepBack"] == true);
  still_serving(c);
}

TEST_CASE("a replay that diverges while running ends the session instead of hanging", "[dap]") {
  // A trace altered after recording (one register of the last write) diverges during the
  // run after configurationDone, whose response was already sent: the client once waited
  // for a stopped event for ever. Now it hears why, then terminated.
  std::string good = test::recorded_trace(REWIND_BIN, DEMO);
  std::string dir = good.substr(0, good.rfind('/'));
  std::string bad = dir + "/diverging";
  std::string find_write =
      std::string(REWIND_BIN) + " dump " + good +
      " | awk '$3 == \"syscall\" && $4 == \"write\" { n = $1 } END { print n }'";
  FILE* p = popen(find_write.c_str(), "r");
  char buf[32] = {};
  REQUIRE(fgets(buf, sizeof buf, p) != nullptr);
  pclose(p);
  std::string event = std::string(buf).substr(0, std::string(buf).find('\n'));
  REQUIRE(!event.empty());
  REQUIRE(std::system((std::string(TRACE_TAMPER) + " " + good + " " + bad + " " + event + " rdi 1")
                          .c_str()) == 0);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", bad}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);
  c.deadline(std::chrono::seconds(60));
  c.event("terminated");
  bool told = false;
  for (const json& o : c.seen("output"))
    told = told || o["body"]["output"].get<std::string>().find("rewind: replay diverged at event " +
                                                               event) == 0;
  CHECK(told);
  CHECK(c.seen("stopped").empty());
  c.check_schema();
  std::filesystem::remove_all(bad);
}
