// DAP on a replay that runs for long without a syscall (tests/programs/compute_loop.c): a
// pause stops it inside the loop, and steps back from there come back without replaying
// every instruction since the program's last syscall (issue 25).
#include <cstdio>
#include <string>
#include <thread>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"

using nlohmann::json;

namespace {

/// What the program prints when run natively.
std::string native_output() {
  std::string out;
  FILE* p = popen(COMPUTE_LOOP, "r");
  REQUIRE(p);
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  return out;
}

/// The innermost frame of thread `tid`.
json innermost_frame(test::DapClient& c, int tid) {
  json st = c.request("stackTrace", {{"threadId", tid}});
  REQUIRE(st["success"] == true);
  REQUIRE(!st["body"]["stackFrames"].empty());
  return st["body"]["stackFrames"][0];
}

/// The value of `expr` in frame `frame`, as a number.
unsigned long long value_of(test::DapClient& c, const std::string& expr, int frame) {
  json r = c.request("evaluate", {{"expression", expr}, {"frameId", frame}, {"context", "watch"}});
  REQUIRE(r["success"] == true);
  return std::stoull(r["body"]["result"].get<std::string>());
}

std::string printed(const test::DapClient& c) {
  std::string out;
  for (const json& o : c.seen("output"))
    if (o["body"]["category"] == "stdout") out += o["body"]["output"].get<std::string>();
  return out;
}

}  // namespace

TEST_CASE("pause stops a replay inside a loop that makes no syscall", "[dap]") {
  std::string trace = test::recorded_trace(REWIND_BIN, COMPUTE_LOOP);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);  // runs: no stopOnEntry
  // The loop runs about two seconds with no syscall, so no stop of the replay comes on its
  // own before the result's write.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(c.request("pause", {{"threadId", 1}})["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "pause");
  int tid = stop["body"]["threadId"];
  json frame = innermost_frame(c, tid);
  CHECK(frame["name"] == "compute");
  CHECK(printed(c).empty());  // before the result was written
  unsigned long long i = value_of(c, "i", frame["id"]);
  CHECK(i > 0);
  CHECK(i < 2000000000ull);
  // One instruction back and forth: it comes back although the last syscall lies hundreds of
  // millions of instructions behind (single steps from there would never end).
  std::string pc = frame["instructionPointerReference"];
  REQUIRE(c.request("stepBack", {{"threadId", tid}, {"granularity", "instruction"}})["success"] ==
          true);
  CHECK(c.event("stopped")["body"]["reason"] == "step");
  json back = innermost_frame(c, tid);
  CHECK(back["name"] == "compute");
  CHECK(back["instructionPointerReference"] != pc);
  REQUIRE(c.request("next", {{"threadId", tid}, {"granularity", "instruction"}})["success"] ==
          true);
  CHECK(c.event("stopped")["body"]["reason"] == "step");
  json again = innermost_frame(c, tid);
  CHECK(again["instructionPointerReference"] == pc);
  CHECK(value_of(c, "i", again["id"]) == i);
  // It is a point of the replay like any other: the run goes on from it to the same result.
  REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
  json end = c.event("stopped");
  CHECK(end["body"].contains("description"));  // the end of the recording
  CHECK(printed(c) == native_output());
  REQUIRE(c.request("disconnect")["success"] == true);
  c.check_schema();
}
