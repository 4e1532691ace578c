// Record & Debug of the samples as a user does it from an editor: the race sample over TCP
// (threads, a data breakpoint on the shared counter forwards and backwards), and the crash
// sample over stdio (the crash as an exception, then back to the write of the bad pointer).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <regex>

#include "engine/os/debug_registers.h"
#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;
using test::evaluate;
using test::top_frame;

namespace {

/// A fresh directory for the traces the adapter records (REWIND_TRACE_DIR).
std::string fresh_trace_root() {
  std::string dir = test::temp_dir("rewind-dap-samples");
  setenv("REWIND_TRACE_DIR", dir.c_str(), 1);
  return dir;
}

/// The old and new values a data breakpoint stop describes ("...: counter: 4 → 5").
std::pair<long, long> old_new(const json& stop) {
  std::string d = stop["body"]["description"];
  std::smatch m;
  REQUIRE(std::regex_search(d, m, std::regex(R"(counter: (-?\d+) → (-?\d+)$)")));
  return {std::stol(m[1]), std::stol(m[2])};
}

}  // namespace

TEST_CASE("Record & Debug of the race sample over TCP: a data breakpoint both ways", "[dap]") {
  std::string root = fresh_trace_root();
  const std::string source = std::string(SAMPLES_DIR) + "/race/counter.c";
  test::DapServer server(REWIND_BIN, "127.0.0.1:0");
  REQUIRE(server.port() > 0);
  test::DapClient c(server.port());
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  json launch = c.request(
      "launch", {{"program", RACE_COUNTER}, {"cwd", SAMPLES_DIR}, {"token", server.token()}});
  REQUIRE(launch["success"] == true);
  std::string printed;
  for (const json& o : c.seen("output"))
    if (o["body"]["category"] == "stdout") printed += o["body"]["output"].get<std::string>();
  CHECK(printed.find("(expected 40000)") != std::string::npos);
  c.event("initialized");

  uint32_t read_line = test::line_of(source, "long seen = counter;");
  json bps = c.request("setBreakpoints",
                       {{"source", {{"path", source}}}, {"breakpoints", {{{"line", read_line}}}}});
  REQUIRE(bps["body"]["breakpoints"][0]["verified"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  json frame = top_frame(c, tid);
  CHECK(frame["name"] == "worker");
  CHECK(frame["line"] == read_line);
  json threads = c.request("threads")["body"]["threads"];
  CHECK(threads.size() >= 2);  // main and this worker (the other may not be running yet)
  bool listed = false;
  for (const json& t : threads) listed |= t["id"] == tid;
  CHECK(listed);
  CHECK(c.seen("thread").size() >= 2);
  CHECK(evaluate(c, frame["id"], "i") == "0");
  CHECK(evaluate(c, frame["id"], "arg") != "");

  // A data breakpoint on the shared counter; the line breakpoint goes.
  json info = c.request("dataBreakpointInfo", {{"name", "counter"}, {"frameId", frame["id"]}});
  REQUIRE(info["success"] == true);
  REQUIRE(info["body"]["dataId"].is_string());
  // Where the CPU's debug registers do not serve programs (a PVM guest), rewind watches
  // writes in software and cannot see reads (engine/os/soft_debug_registers.h).
  CHECK(info["body"]["accessTypes"] == (rwd::hardware_debug_registers()
                                            ? json::array({"write", "readWrite"})
                                            : json::array({"write"})));
  json data =
      c.request("setDataBreakpoints",
                {{"breakpoints", {{{"dataId", info["body"]["dataId"]}, {"accessType", "write"}}}}});
  REQUIRE(data["body"]["breakpoints"][0]["verified"] == true);
  json read_only =
      c.request("setDataBreakpoints",
                {{"breakpoints", {{{"dataId", info["body"]["dataId"]}, {"accessType", "read"}}}}});
  CHECK(read_only["body"]["breakpoints"][0]["verified"] == false);  // x86 cannot
  data =
      c.request("setDataBreakpoints",
                {{"breakpoints", {{{"dataId", info["body"]["dataId"]}, {"accessType", "write"}}}}});
  int data_id = data["body"]["breakpoints"][0]["id"];
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", source}}},
                                       {"breakpoints", json::array()}})["success"] == true);

  uint32_t write_line = test::line_of(source, "counter = seen + 1");
  REQUIRE(c.request("continue")["success"] == true);
  json first = c.event("stopped");
  CHECK(first["body"]["reason"] == "data breakpoint");
  CHECK(first["body"]["hitBreakpointIds"] == json::array({data_id}));
  auto [a, b] = old_new(first);
  int first_tid = first["body"]["threadId"];
  frame = top_frame(c, first_tid);
  CHECK(frame["name"] == "worker");  // just after the store (gdb shows the same place)
  CHECK(evaluate(c, frame["id"], "counter") == std::to_string(b));

  REQUIRE(c.request("continue")["success"] == true);
  json second = c.event("stopped");
  auto [c_old, d_new] = old_new(second);
  CHECK(c_old == b);  // every write is seen: the next one starts from the last value

  // Backwards: to the second write (before it runs), then to the first.
  REQUIRE(c.request("reverseContinue")["success"] == true);
  json back = c.event("stopped");
  CHECK(back["body"]["reason"] == "data breakpoint");
  CHECK(old_new(back) == std::make_pair(c_old, d_new));
  frame = top_frame(c, back["body"]["threadId"]);
  CHECK(frame["line"] == write_line);  // on the store, before it runs
  CHECK(evaluate(c, frame["id"], "counter") == std::to_string(c_old));
  CHECK(evaluate(c, frame["id"], "seen + 1") == std::to_string(d_new));
  REQUIRE(c.request("reverseContinue")["success"] == true);
  json back2 = c.event("stopped");
  CHECK(old_new(back2) == std::make_pair(a, b));
  CHECK(back2["body"]["threadId"] == first_tid);
  frame = top_frame(c, first_tid);
  CHECK(frame["line"] == write_line);
  CHECK(evaluate(c, frame["id"], "counter") == std::to_string(a));

  // The timeline lists the threads' clone calls among the events.
  json tl = c.request("rewind/timeline", {{"start", 1}, {"count", 200}});
  bool clone = false;
  for (const json& e : tl["body"]["events"]) clone |= e.value("syscall", "").rfind("clone", 0) == 0;
  CHECK(clone);

  REQUIRE(c.request("disconnect")["success"] == true);
  CHECK(c.closed());
  c.check_schema();
  std::system(("rm -rf " + root).c_str());
}

TEST_CASE("Record & Debug of the crash sample: the crash, then the write of the bad pointer",
          "[dap]") {
  std::string root = fresh_trace_root();
  const std::string source = std::string(SAMPLES_DIR) + "/c/crash.c";
  // The sample crashes one run in four: record until it does, as a user would.
  for (int attempt = 1; attempt <= 40; ++attempt) {
    test::DapClient c(REWIND_BIN);
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    REQUIRE(c.request("launch", {{"program", CRASH}})["success"] == true);
    bool crashed = false;
    for (const json& o : c.seen("output"))
      crashed |=
          o["body"]["output"].get<std::string>().find("killed by SIGSEGV") != std::string::npos;
    if (!crashed) {
      REQUIRE(c.request("disconnect")["success"] == true);
      continue;
    }
    INFO("crashed on attempt " << attempt);
    c.event("initialized");
    REQUIRE(c.request("setExceptionBreakpoints", {{"filters", {"fatal"}}})["success"] == true);
    REQUIRE(c.request("configurationDone")["success"] == true);
    json stop = c.event("stopped");
    CHECK(stop["body"]["reason"] == "exception");
    CHECK(stop["body"]["description"] == "Signal SIGSEGV (Segmentation fault)");
    int tid = stop["body"]["threadId"];
    json frame = top_frame(c, tid);
    CHECK(frame["name"] == "main");
    CHECK(frame["line"] == test::line_of(source, "printf(\"picked %s\\n\", pick->name);"));
    json ex = c.request("exceptionInfo", {{"threadId", tid}});
    CHECK(ex["body"]["exceptionId"] == "SIGSEGV");
    CHECK(ex["body"]["breakMode"] == "unhandled");
    CHECK(evaluate(c, frame["id"], "pick") == "0x0");

    // Who wrote the bad pointer? NULL was stored over a stale NULL, which is no change of
    // value ("write" data breakpoints stop where the value changes, as VS Code's "Break on
    // Value Change"): watch every access instead, and go back: first the read that crashed,
    // then the write.
    json info = c.request("dataBreakpointInfo", {{"name", "pick"}, {"frameId", frame["id"]}});
    REQUIRE(info["body"]["dataId"].is_string());
    json data = c.request(
        "setDataBreakpoints",
        {{"breakpoints", {{{"dataId", info["body"]["dataId"]}, {"accessType", "readWrite"}}}}});
    if (!rwd::hardware_debug_registers()) {
      // No debug registers for programs here (a PVM guest): reads cannot be watched, and the
      // data breakpoint says so instead of staying silent. (On such a machine this question
      // has no answer from data breakpoints: the write stored the value already there.)
      CHECK(data["body"]["breakpoints"][0]["verified"] == false);
      CHECK(data["body"]["breakpoints"][0]["message"].get<std::string>().find("cannot see reads") !=
            std::string::npos);
      REQUIRE(c.request("terminate")["success"] == true);
      CHECK(c.event("exited")["body"]["exitCode"] == 139);
      c.check_schema();
      std::system(("rm -rf " + root).c_str());
      return;
    }
    REQUIRE(data["body"]["breakpoints"][0]["verified"] == true);
    REQUIRE(c.request("reverseContinue")["success"] == true);
    json read = c.event("stopped");
    CHECK(read["body"]["reason"] == "data breakpoint");
    CHECK(top_frame(c, tid)["line"] == frame["line"]);
    REQUIRE(c.request("reverseContinue")["success"] == true);
    json back = c.event("stopped");
    CHECK(back["body"]["reason"] == "data breakpoint");
    // Reached going backwards; gdb's words for the watchpoint, without rewind's internal id.
    CHECK(back["body"]["description"] ==
          "◀ reverse · Hardware access (read/write) watchpoint: pick: 0x0");
    CHECK(back["body"]["hitBreakpointIds"] == json::array({data["body"]["breakpoints"][0]["id"]}));
    frame = top_frame(c, tid);
    CHECK(frame["line"] == test::line_of(source, "struct item* pick = table[r % 4];"));
    CHECK(evaluate(c, frame["id"], "r % 4") == "3");
    CHECK(evaluate(c, frame["id"], "table[3]") == "0x0");

    // Further back, the stack slot's earlier writes (the dynamic loader's, some inside
    // `rep stos`): each stop is earlier than the one before, down to the start.
    data =
        c.request("setDataBreakpoints", {{"breakpoints", {{{"dataId", info["body"]["dataId"]}}}}});
    uint64_t before = c.request("rewind/when")["body"]["event"];
    for (int i = 0; i < 20; ++i) {
      REQUIRE(c.request("reverseContinue")["success"] == true);
      json s = c.event("stopped");
      uint64_t at = c.request("rewind/when")["body"]["event"];
      CHECK(at <= before);
      before = at;
      if (s["body"]["reason"] != "data breakpoint") {
        CHECK(s["body"]["description"] == "◀ reverse · The start of the recording");
        break;
      }
    }
    CHECK(before == 1);
    REQUIRE(c.request("terminate")["success"] == true);
    CHECK(c.event("exited")["body"]["exitCode"] == 139);
    c.check_schema();
    std::system(("rm -rf " + root).c_str());
    return;
  }
  FAIL("the crash sample did not crash in 40 recordings");
}
