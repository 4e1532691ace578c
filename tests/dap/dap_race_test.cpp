// The race rewind exists for, debugged from an editor: tests/programs/queue_race.c recorded
// with --chaos --until-failure until a consumer aborts on a corrupted item, then replayed over
// DAP: the abort as an exception, a data breakpoint on the corrupted slot's checksum, and
// reverse-continues back to the write that put the bad checksum there, made by one producer
// into a slot whose value another producer wrote.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "tests/dap/dap_client.h"

using nlohmann::json;
using test::evaluate;
using test::top_frame;

namespace {

/// The first frame of thread `tid`'s stack named `name`, or null.
json frame_named(test::DapClient& c, int tid, const std::string& name) {
  json st = c.request("stackTrace", {{"threadId", tid}});
  REQUIRE(st["success"] == true);
  for (const json& f : st["body"]["stackFrames"])
    if (f["name"] == name) return f;
  return nullptr;
}

}  // namespace

TEST_CASE("a queue race recorded until it fails, taken back to its racing write over DAP",
          "[dap]") {
  char tmpl[] = "/tmp/rewind-dap-race.XXXXXX";
  std::string trace = std::string(mkdtemp(tmpl)) + "/trace";
  std::string cmd = std::string(REWIND_BIN) + " record --chaos --until-failure=100 -o " + trace +
                    " " + QUEUE_RACE + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 134);  // it aborted: the race happened in this recording

  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("setExceptionBreakpoints", {{"filters", {"fatal"}}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "exception");
  int consumer = stop["body"]["threadId"];
  json check = frame_named(c, consumer, "check_item");
  REQUIRE(check != nullptr);
  CHECK(frame_named(c, consumer, "consumer") != nullptr);
  std::string bad = evaluate(c, check["id"], "it->checksum");
  std::string bad_value = evaluate(c, check["id"], "it->value");
  std::string slot = evaluate(c, check["id"], "slot");
  INFO("corrupt item: value " << bad_value << ", checksum " << bad << ", slot " << slot);
  REQUIRE(bad.find("error") == std::string::npos);
  REQUIRE(slot.find("error") == std::string::npos);

  json info = c.request("dataBreakpointInfo",
                        {{"name", "q.slots[" + slot + "].checksum"}, {"frameId", check["id"]}});
  REQUIRE(info["body"]["dataId"].is_string());
  json data =
      c.request("setDataBreakpoints",
                {{"breakpoints", {{{"dataId", info["body"]["dataId"]}, {"accessType", "write"}}}}});
  REQUIRE(data["body"]["breakpoints"][0]["verified"] == true);

  // Back through the slot's writes until the one that writes the bad checksum.
  json racing, racing_stop;
  int writer = 0;
  for (int i = 0; i < 40 && racing.is_null(); ++i) {
    REQUIRE(c.request("reverseContinue")["success"] == true);
    json back = c.event("stopped");
    REQUIRE(back["body"]["reason"] == "data breakpoint");
    writer = back["body"]["threadId"];
    json put = top_frame(c, writer);
    REQUIRE(put["name"] == "put");  // on the store, before it runs
    if (evaluate(c, put["id"], "v * 31 + 7") == bad) {
      racing = put;
      racing_stop = back;
    }
  }
  REQUIRE(!racing.is_null());
  // The stop names the write's old and new values: the new one is the bad checksum.
  std::string description = racing_stop["body"]["description"];
  CHECK(description.size() > bad.size());
  CHECK(description.substr(description.size() - bad.size()) == bad);
  CHECK(description.find("q.slots[" + slot + "].checksum: ") != std::string::npos);
  // The writer is a producer whose own value is not the one the consumer saw: that is the
  // other producer's (producer P's values are P * 1,000,000 + i).
  CHECK(writer != consumer);
  CHECK(frame_named(c, writer, "producer") != nullptr);
  std::string v = evaluate(c, racing["id"], "v");
  CHECK(v != bad_value);
  CHECK(std::stol(v) / 1000000 != std::stol(bad_value) / 1000000);
  CHECK(evaluate(c, racing["id"], "s == &q.slots[" + slot + "]") == "1");
  // The slot's value here is often the other producer's (it overwrote the slot between this
  // producer's value and checksum) or this producer's own (the consumer's copy mixed the old
  // value with this checksum: a take() preempted between its two loads), but producers that
  // retry put() can write the slot again in between. Whichever: it is what the last write to
  // it before this point stored, found by going back to that write.
  std::string slot_value = evaluate(c, racing["id"], "s->value");
  json value_info =
      c.request("dataBreakpointInfo", {{"name", "s->value"}, {"frameId", racing["id"]}});
  REQUIRE(value_info["body"]["dataId"].is_string());
  c.request(
      "setDataBreakpoints",
      {{"breakpoints", {{{"dataId", value_info["body"]["dataId"]}, {"accessType", "write"}}}}});
  REQUIRE(c.request("reverseContinue")["success"] == true);
  json value_write = c.event("stopped");
  REQUIRE(value_write["body"]["reason"] == "data breakpoint");
  int value_writer = value_write["body"]["threadId"];
  json stored = top_frame(c, value_writer);
  REQUIRE(stored["name"] == "put");
  INFO("the slot held " << slot_value << " at the racing write");
  CHECK(evaluate(c, stored["id"], "v") == slot_value);
  CHECK(frame_named(c, value_writer, "producer") != nullptr);
  // The consumer's stack is still there to read, as it was at the abort's point in time
  // later: here (before the racing write) it has not taken the item yet.
  CHECK(!c.request("stackTrace", {{"threadId", consumer}})["body"]["stackFrames"].empty());
  REQUIRE(c.request("disconnect")["success"] == true);
  std::system(("rm -rf " + trace.substr(0, trace.size() - 6)).c_str());
}
