// The queries over a whole recording, which do not move the session, over a real pipe on a
// recording of tests/programs/value_history.c, and rewind/seek to their results: the
// changes of a value (rewind/history: a global written through a pointer, a heap field, a
// stack local of the second of two calls that put their frames at the same address), the
// calls of a function (rewind/calls: a recursive one, with arguments and return values) and
// a logpoint's hits (rewind/logAll). Every row is checked against what the program printed
// when it ran natively.
#include <stdio.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;
using test::evaluate;
using test::top_frame;

namespace {

uint32_t line_of(const std::string& marker) {
  return test::line_of(VALUE_HISTORY_C, marker);
}

/// The values the program printed after `word` on lines "word [n] value", in order, from a
/// native run.
std::vector<std::string> printed(const std::string& word, const std::string& n = "") {
  FILE* p = popen(VALUE_HISTORY, "r");
  REQUIRE(p != nullptr);
  std::vector<std::string> out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) {
    std::istringstream line(buf);
    std::string w, a, b;
    line >> w >> a;
    if (w != word) continue;
    if (!n.empty()) {
      if (a != n) continue;
      line >> b;
      a = b;
    }
    out.push_back(a);
  }
  REQUIRE(pclose(p) == 0);
  return out;
}

json history(test::DapClient& c, json args) {
  json r = c.request("rewind/history", args);
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  return r["body"];
}

/// The rows "name|parts|values" the program printed for the writes of `name`, from a native
/// run: {parts, values} in order.
std::vector<std::pair<std::string, std::string>> printed_parts(const std::string& name) {
  FILE* p = popen(VALUE_HISTORY, "r");
  REQUIRE(p != nullptr);
  std::vector<std::pair<std::string, std::string>> out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (line.rfind(name + "|", 0) != 0) continue;
    size_t bar = line.find('|', name.size() + 1);
    REQUIRE(bar != std::string::npos);
    out.emplace_back(line.substr(name.size() + 1, bar - name.size() - 1), line.substr(bar + 1));
  }
  REQUIRE(pclose(p) == 0);
  return out;
}

/// The {member, newValue} of each change of a history answer.
std::vector<std::pair<std::string, std::string>> changed_parts(const json& body) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const json& ch : body["changes"]) v.emplace_back(ch.value("member", ""), ch["newValue"]);
  return v;
}

/// Whether the adapter said `text` on its console so far.
bool said(test::DapClient& c, const std::string& text) {
  for (const json& o : c.seen("output"))
    if (o["body"].value("output", "").find(text) != std::string::npos) return true;
  return false;
}

std::vector<std::string> new_values(const json& body) {
  std::vector<std::string> v;
  for (const json& ch : body["changes"]) v.push_back(ch["newValue"]);
  return v;
}

}  // namespace

TEST_CASE("rewind/history lists every change of a value and rewind/seek goes to one",
          "[dap][queries]") {
  std::string trace = test::recorded_trace(REWIND_BIN, VALUE_HISTORY);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"},
                                   {"supportsProgressReporting", true}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  json bps =
      c.request("setBreakpoints",
                {{"source", {{"path", VALUE_HISTORY_C}}},
                 {"breakpoints", {{{"line", line_of("return sum;")}, {"hitCondition", "2"}}}}});
  REQUIRE(bps["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  json frame = top_frame(c, tid);
  REQUIRE(frame["name"] == "accumulate");
  REQUIRE(evaluate(c, frame["id"], "n") == "3");  // the second call
  uint64_t here = c.request("rewind/when")["body"]["event"];

  SECTION("a stack local: the changes of this call only") {
    json h = history(c, {{"expression", "sum"}, {"frameId", frame["id"]}});
    CHECK(h["complete"] == true);
    CHECK(h["frameFunction"] == "accumulate");
    // The first call's frame was at the same address (same caller, same depth): its values
    // (1, 5, 14, 30, 55) are not this variable's. This call sets sum to 0 over the first's
    // last value, then to each value it printed.
    std::vector<std::string> want = printed("sum", "3");
    REQUIRE(want == std::vector<std::string>{"1", "5", "14"});
    std::vector<std::string> got = new_values(h);
    REQUIRE(got.size() == want.size() + 1);
    CHECK(got[0] == "0");
    CHECK(h["changes"][0]["oldValue"] == "55");
    CHECK(h["changes"][0]["line"] == line_of("long sum = 0;"));
    CHECK(std::vector<std::string>(got.begin() + 1, got.end()) == want);
    for (size_t i = 1; i < got.size(); ++i) {
      CHECK(h["changes"][i]["function"] == "accumulate");
      CHECK(h["changes"][i]["line"] == line_of("sum += i * i;"));
      CHECK(h["changes"][i]["oldValue"] == got[i - 1]);
      CHECK(h["changes"][i]["threadId"] == tid);
    }
    // Progress was reported, begun and ended.
    CHECK(c.event("progressStart")["body"]["title"] == "History of sum");
    CHECK(c.event("progressEnd")["body"].contains("progressId"));

    // Back in the first call, the same question names that call's sum: its five values.
    REQUIRE(c.request("setBreakpoints",
                      {{"source", {{"path", VALUE_HISTORY_C}}},
                       {"breakpoints", {{{"line", line_of("return sum;")}}}}})["success"] == true);
    REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
    c.event("stopped");
    json first_call = top_frame(c, tid);
    REQUIRE(evaluate(c, first_call["id"], "n") == "5");
    std::vector<std::string> first =
        new_values(history(c, {{"expression", "sum"}, {"frameId", first_call["id"]}}));
    std::vector<std::string> want_first = printed("sum", "5");
    REQUIRE(want_first.size() == 5);
    INFO("first call: " << nlohmann::json(first).dump());
    REQUIRE(first.size() >= want_first.size());
    CHECK(first.size() <= want_first.size() + 1);  // and its "sum = 0" over what was there
    CHECK(std::vector<std::string>(first.end() - long(want_first.size()), first.end()) ==
          want_first);
  }

  SECTION("a global and a heap field from the caller's frame; pages; going to a change") {
    json st = c.request("stackTrace", {{"threadId", tid}});
    json main_frame = st["body"]["stackFrames"][1];
    REQUIRE(main_frame["name"] == "main");
    json h = history(c, {{"expression", "counter"}, {"frameId", main_frame["id"]}});
    std::vector<std::string> want = printed("counter");
    REQUIRE(want.size() == 12);
    CHECK(new_values(h) == want);  // the write of the same value is not a change
    CHECK(h["totalChanges"] == 12);
    CHECK(!h.contains("frameFunction"));
    std::string old = "0";
    for (const json& ch : h["changes"]) {
      CHECK(ch["oldValue"] == old);
      CHECK(ch["function"] == "bump");
      CHECK(ch["line"] == line_of("*slot += by;"));
      CHECK(ch["source"]["path"] == VALUE_HISTORY_C);
      old = ch["newValue"];
    }
    // A heap field is followed at its address (gdb's watch -location): after the program's
    // own writes comes free()'s, which reuses the freed block's first words for its lists.
    json balance = history(c, {{"expression", "acct->balance"}, {"frameId", main_frame["id"]}});
    std::vector<std::string> balances = printed("balance");
    std::vector<std::string> got = new_values(balance);
    REQUIRE(got.size() >= balances.size());
    CHECK(std::vector<std::string>(got.begin(), got.begin() + long(balances.size())) == balances);
    for (size_t i = 0; i < balance["changes"].size(); ++i)
      CHECK((balance["changes"][i]["function"] == "main") == (i < balances.size()));
    json id = history(c, {{"expression", "acct->id"}, {"frameId", main_frame["id"]}});
    REQUIRE(!id["changes"].empty());
    CHECK(id["changes"][0]["oldValue"] == "0");
    CHECK(id["changes"][0]["newValue"] == "7");
    CHECK(id["changes"][0]["line"] == line_of("acct->id = 7;"));

    // Pages of the same answer, newest first.
    json page = history(c, {{"expression", "counter"},
                            {"frameId", main_frame["id"]},
                            {"start", 2},
                            {"count", 3},
                            {"order", "newest"}});
    REQUIRE(page["changes"].size() == 3);
    CHECK(page["changes"][0]["index"] == 9);
    CHECK(page["changes"][0]["newValue"] == want[9]);
    CHECK(page["changes"][2]["newValue"] == want[7]);
    // Event ranges: up to the fourth change's event (the program makes no event between
    // its writes: its output is buffered until exit), and up to the event before the first.
    uint64_t fourth = h["changes"][3]["event"], first = h["changes"][0]["event"];
    json early = history(
        c, {{"expression", "counter"}, {"frameId", main_frame["id"]}, {"endEvent", fourth}});
    CHECK(early["changes"].size() >= 4);
    for (const json& ch : early["changes"]) CHECK(ch["event"] <= fourth);
    REQUIRE(first > 1);
    json none = history(
        c, {{"expression", "counter"}, {"frameId", main_frame["id"]}, {"endEvent", first - 1}});
    CHECK(none["changes"].empty());
    json late = history(
        c, {{"expression", "counter"}, {"frameId", main_frame["id"]}, {"startEvent", first}});
    CHECK(new_values(late) == want);

    // The queries did not move the session.
    CHECK(c.request("rewind/when")["body"]["event"] == here);
    CHECK(top_frame(c, tid)["name"] == "accumulate");

    // To the sixth change of counter (index 5 of the oldest-first answer).
    json counter_h = history(c, {{"expression", "counter"}, {"frameId", main_frame["id"]}});
    json target = counter_h["changes"][5];
    json r = c.request("rewind/seek", {{"change", 5}});
    INFO(r.dump());
    REQUIRE(r["success"] == true);
    CHECK(r["body"]["event"] == target["event"]);
    json s = c.event("stopped");
    CHECK(s["body"]["reason"] == "goto");
    frame = top_frame(c, tid);
    CHECK(frame["name"] == "bump");
    CHECK(evaluate(c, frame["id"], "counter") == want[5]);
    // A step back returns to before the write: the old value.
    REQUIRE(c.request("stepBack", {{"threadId", tid}, {"granularity", "instruction"}})["success"] ==
            true);
    c.event("stopped");
    CHECK(evaluate(c, top_frame(c, tid)["id"], "counter") == want[4]);
  }

  SECTION("to the previous and next change of a value, on the session's timeline") {
    auto move = [&](const char* command) {
      json r = c.request(command, {{"expression", "sum"}, {"frameId", top_frame(c, tid)["id"]}});
      INFO(r.dump());
      REQUIRE(r["success"] == true);
      json s = c.event("stopped");
      CHECK(s["body"]["reason"] == "goto");
      return evaluate(c, top_frame(c, tid)["id"], "sum");
    };
    CHECK(evaluate(c, frame["id"], "sum") == "14");
    CHECK(move("rewind/previousChange") == "14");  // just after the write of 14 (5 -> 14)
    CHECK(top_frame(c, tid)["name"] == "accumulate");
    CHECK(move("rewind/previousChange") == "5");  // 1 -> 5
    CHECK(move("rewind/previousChange") == "1");
    CHECK(move("rewind/nextChange") == "5");
    CHECK(move("rewind/nextChange") == "14");
    CHECK(c.request("rewind/nextChange",
                    {{"expression", "n + 1"}, {"frameId", top_frame(c, tid)["id"]}})["success"] ==
          false);
  }

  SECTION("a stack local of one of several calls made between the same two events") {
    // scaled(1), scaled(2), scaled(3) run with no event between them, their frames at one
    // address: only the point where the question is asked tells the second call's v.
    REQUIRE(c.request("setBreakpoints",
                      {{"source", {{"path", VALUE_HISTORY_C}}},
                       {"breakpoints",
                        {{{"line", line_of("return v;")}, {"hitCondition", "2"}}}}})["success"] ==
            true);
    REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
    REQUIRE(c.event("stopped")["body"]["reason"] == "breakpoint");
    json second = top_frame(c, tid);
    REQUIRE(second["name"] == "scaled");
    REQUIRE(evaluate(c, second["id"], "n") == "2");
    json h = history(c, {{"expression", "v"}, {"frameId", second["id"]}});
    CHECK(new_values(h) == std::vector<std::string>{"2", "4", "12"});
    REQUIRE(!h["changes"].empty());
    CHECK(h["changes"][0]["oldValue"] == "6");  // what the first call left there
    CHECK(h["changes"][0]["line"] == line_of("int v = n;"));
    // The same question in the first call, reached backwards: 1, 2, 6.
    REQUIRE(c.request("setBreakpoints",
                      {{"source", {{"path", VALUE_HISTORY_C}}},
                       {"breakpoints", {{{"line", line_of("v *= 3;")}}}}})["success"] == true);
    REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
    c.event("stopped");
    REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
    c.event("stopped");
    json first = top_frame(c, tid);
    REQUIRE(evaluate(c, first["id"], "n") == "1");
    CHECK(new_values(history(c, {{"expression", "v"}, {"frameId", first["id"]}})) ==
          std::vector<std::string>{"1", "2", "6"});
  }

  SECTION("previous and next change while data breakpoints hold every debug register") {
    json main_frame = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"][1];
    REQUIRE(main_frame["name"] == "main");
    json data = json::array();
    // The replay keeps one of the CPU's four debug registers for itself; data breakpoints
    // get the other three.
    for (const char* name : {"counter", "acct->balance", "a"}) {
      json info = c.request("dataBreakpointInfo", {{"name", name}, {"frameId", main_frame["id"]}});
      INFO(info.dump());
      REQUIRE(info["body"]["dataId"].is_string());
      data.push_back({{"dataId", info["body"]["dataId"]}, {"accessType", "write"}});
    }
    json set = c.request("setDataBreakpoints", {{"breakpoints", data}});
    INFO(set.dump());
    for (const json& b : set["body"]["breakpoints"]) REQUIRE(b["verified"] == true);
    // A fourth data breakpoint has no register left.
    json more = data;
    json info = c.request("dataBreakpointInfo", {{"name", "sum"}, {"frameId", frame["id"]}});
    more.push_back({{"dataId", info["body"]["dataId"]}, {"accessType", "write"}});
    CHECK(c.request("setDataBreakpoints",
                    {{"breakpoints", more}})["body"]["breakpoints"][3]["verified"] == false);
    REQUIRE(c.request("setDataBreakpoints", {{"breakpoints", data}})["success"] == true);

    // The changes of sum are still found, both ways.
    auto move = [&](const char* command) {
      json r = c.request(command, {{"expression", "sum"}, {"frameId", top_frame(c, tid)["id"]}});
      INFO(r.dump());
      REQUIRE(r["success"] == true);
      CHECK(c.event("stopped")["body"]["reason"] == "goto");
      return evaluate(c, top_frame(c, tid)["id"], "sum");
    };
    CHECK(move("rewind/previousChange") == "14");
    CHECK(move("rewind/previousChange") == "5");
    CHECK(move("rewind/nextChange") == "14");
    CHECK(top_frame(c, tid)["name"] == "accumulate");

    // And the four data breakpoints are armed again: back to where main wrote `a`.
    REQUIRE(c.request("setBreakpoints", {{"source", {{"path", VALUE_HISTORY_C}}},
                                         {"breakpoints", json::array()}})["success"] == true);
    REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
    json back = c.event("stopped");
    CHECK(back["body"]["reason"] == "data breakpoint");
    json at = top_frame(c, tid);
    CHECK(at["name"] == "main");
    CHECK(at["line"] == line_of("long a = accumulate(5);"));
  }

  SECTION("a struct, an array and a stack array: each write names the parts it changed") {
    json main_frame = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"][1];
    REQUIRE(main_frame["name"] == "main");
    // A struct of 24 bytes (wider than a debug register): every write, with the members it
    // changed (the nested struct's, a bitfield, two at once) and their values.
    json shape = history(c, {{"expression", "shape"}, {"frameId", main_frame["id"]}});
    CHECK(shape["size"] == 24);
    CHECK(shape["type"] == "struct shape");
    auto want = printed_parts("shape");
    REQUIRE(want.size() == 9);
    CHECK(changed_parts(shape) == want);
    REQUIRE(shape["changes"].size() == want.size());
    CHECK(shape["changes"][0]["oldValue"] == "0");
    CHECK(shape["changes"][1]["oldValue"] == "0");     // .layer's first write
    CHECK(shape["changes"][3]["oldValue"] == "1");     // .layer 1 -> 2
    CHECK(shape["changes"][6]["oldValue"] == "6, 0");  // .pos.x, .pos.y together
    CHECK(shape["changes"][6]["line"] == line_of("shape.pos = to;"));
    CHECK(shape["changes"][8]["line"] == line_of("shape.area = 1200;"));
    for (const json& ch : shape["changes"]) CHECK(ch["function"] == "reshape");
    // A 2-D array: the elements.
    json grid = history(c, {{"expression", "grid"}, {"frameId", main_frame["id"]}});
    CHECK(grid["size"] == 48);
    CHECK(changed_parts(grid) == printed_parts("grid"));
    for (const json& ch : grid["changes"]) CHECK(ch["line"] == line_of("// a grid cell"));
    CHECK(c.request("rewind/when")["body"]["event"] == here);  // the session did not move

    // To the write of both members (rewind/seek's `change` names a row of the last answer).
    REQUIRE(history(c, {{"expression", "shape"}, {"frameId", main_frame["id"]}})["changes"] ==
            shape["changes"]);
    json r = c.request("rewind/seek", {{"change", 6}});
    INFO(r.dump());
    REQUIRE(r["success"] == true);
    REQUIRE(c.event("stopped")["body"]["reason"] == "goto");
    json at = top_frame(c, tid);
    CHECK(at["name"] == "reshape");
    CHECK(evaluate(c, at["id"], "shape.pos.y") == "50");
    CHECK(said(c, "shape (.pos.x, .pos.y) = 40, 50 (was 6, 0)"));
    // The previous change of the whole struct: the bitfield's last write.
    r = c.request("rewind/previousChange", {{"expression", "shape"}, {"frameId", at["id"]}});
    INFO(r.dump());
    REQUIRE(r["success"] == true);
    REQUIRE(c.event("stopped")["body"]["reason"] == "goto");
    CHECK(evaluate(c, top_frame(c, tid)["id"], "shape.layer") == "3");
    CHECK(evaluate(c, top_frame(c, tid)["id"], "shape.pos.y") == "0");
    CHECK(said(c, "rewind: shape.layer: 2 → 3"));
    r = c.request("rewind/nextChange",
                  {{"expression", "shape"}, {"frameId", top_frame(c, tid)["id"]}});
    INFO(r.dump());
    REQUIRE(r["success"] == true);
    REQUIRE(c.event("stopped")["body"]["reason"] == "goto");
    CHECK(evaluate(c, top_frame(c, tid)["id"], "shape.pos.y") == "50");

    // A stack array of the call the session stands in, whose page the calls it makes write
    // all the time: its writes after the initializer's zeros are the ones printed.
    REQUIRE(c.request("setBreakpoints",
                      {{"source", {{"path", VALUE_HISTORY_C}}},
                       {"breakpoints", {{{"line", line_of("return total;")}}}}})["success"] ==
            true);
    REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
    REQUIRE(c.event("stopped")["body"]["reason"] == "breakpoint");
    json slide = top_frame(c, tid);
    REQUIRE(slide["name"] == "slide");
    json window = history(c, {{"expression", "window"}, {"frameId", slide["id"]}});
    CHECK(window["frameFunction"] == "slide");
    CHECK(window["size"] == 24);
    json filled = json::array();
    for (const json& ch : window["changes"]) {
      CHECK(ch["function"] == "slide");
      if (ch["line"] != line_of("int window[6] = {0};")) filled.push_back(ch);
    }
    CHECK(changed_parts({{"changes", filled}}) == printed_parts("window"));
    for (const json& ch : filled) CHECK(ch["line"] == line_of("// window fills"));

    // A data breakpoint on the whole struct is a write watch: reverseContinue stops at its
    // last write, on the writing instruction before it runs (gdb's reverse semantics).
    json info = c.request("dataBreakpointInfo", {{"name", "shape"}, {"frameId", slide["id"]}});
    INFO(info.dump());
    REQUIRE(info["body"]["dataId"].is_string());
    CHECK(info["body"]["accessTypes"] == json::array({"write"}));
    json set = c.request(
        "setDataBreakpoints",
        {{"breakpoints", {{{"dataId", info["body"]["dataId"]}, {"accessType", "write"}}}}});
    REQUIRE(set["body"]["breakpoints"][0]["verified"] == true);
    json read = c.request(
        "setDataBreakpoints",
        {{"breakpoints", {{{"dataId", info["body"]["dataId"]}, {"accessType", "readWrite"}}}}});
    CHECK(read["body"]["breakpoints"][0]["verified"] == false);
    REQUIRE(c.request("setDataBreakpoints", {{"breakpoints",
                                              {{{"dataId", info["body"]["dataId"]},
                                                {"accessType", "write"}}}}})["success"] == true);
    REQUIRE(c.request("setBreakpoints", {{"source", {{"path", VALUE_HISTORY_C}}},
                                         {"breakpoints", json::array()}})["success"] == true);
    REQUIRE(c.request("reverseContinue", {{"threadId", tid}})["success"] == true);
    json hit = c.event("stopped");
    CHECK(hit["body"]["reason"] == "data breakpoint");
    CHECK(hit["body"]["description"] == "◀ reverse · Watchpoint: shape.area: 0 → 1200");
    at = top_frame(c, tid);
    CHECK(at["name"] == "reshape");
    CHECK(at["line"] == line_of("shape.area = 1200;"));
    CHECK(evaluate(c, at["id"], "shape.area") == "0");
    REQUIRE(c.request("next", {{"threadId", tid}})["success"] == true);
    c.event("stopped");
    CHECK(evaluate(c, top_frame(c, tid)["id"], "shape.area") == "1200");
  }

  SECTION("what cannot be followed is refused in one message") {
    json r = c.request("rewind/history", {{"expression", "n + 1"}, {"frameId", frame["id"]}});
    CHECK(r["success"] == false);
    CHECK(r["message"].get<std::string>().find("not a value in memory") != std::string::npos);
    r = c.request("rewind/history", {{"expression", "nosuch"}, {"frameId", frame["id"]}});
    CHECK(r["success"] == false);
    r = c.request("rewind/history",
                  {{"expression", "sum"}, {"frameId", frame["id"]}, {"order", "sideways"}});
    CHECK(r["success"] == false);
    r = c.request("rewind/history",
                  {{"expression", "sum"}, {"frameId", frame["id"]}, {"startEvent", 0}});
    CHECK(r["success"] == false);
    r = c.request("rewind/seek", {{"change", 0}});
    CHECK(r["success"] == false);  // no history asked yet in this session
    r = c.request("rewind/seek", {{"change", 1}, {"event", 3}});
    CHECK(r["success"] == false);
  }
}

TEST_CASE("rewind/calls and rewind/logAll list every call and hit; rewind/seek goes to one",
          "[dap][queries]") {
  std::string trace = test::recorded_trace(REWIND_BIN, VALUE_HISTORY);
  test::DapClient c(REWIND_BIN);
  int tid = c.launch_at_entry(trace)["body"]["threadId"];
  uint64_t here = c.request("rewind/when")["body"]["event"];

  // The recursive function: each call with its argument, caller and return value, in the
  // order they were made (the outermost first), as the program printed them (innermost
  // first, as they returned).
  json r = c.request("rewind/calls", {{"function", "depth_sum"}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  json calls = r["body"]["calls"];
  REQUIRE(r["body"]["totalCalls"] == 5);
  REQUIRE(calls.size() == 5);
  FILE* p = popen(VALUE_HISTORY, "r");
  REQUIRE(p != nullptr);
  std::map<std::string, std::string> result_of;  // argument -> result, as printed
  char buf[256];
  while (fgets(buf, sizeof buf, p)) {
    std::istringstream line(buf);
    std::string w, n, res;
    if (line >> w >> n >> res && w == "depth_sum") result_of[n] = res;
  }
  REQUIRE(pclose(p) == 0);
  REQUIRE(result_of.size() == 5);
  for (int i = 0; i < 5; ++i) {
    const json& call = calls[size_t(i)];
    std::string n = std::to_string(4 - i);
    CHECK(call["function"] == "depth_sum");
    REQUIRE(call["arguments"].size() == 1);
    CHECK(call["arguments"][0]["name"] == "n");
    CHECK(call["arguments"][0]["value"] == n);
    CHECK(call["caller"]["function"] == (i == 0 ? "main" : "depth_sum"));
    CHECK(call["returned"] == true);
    CHECK(call["returnValue"] == result_of[n]);
    CHECK(call["threadId"] == tid);
  }
  CHECK(calls[0]["caller"]["line"] == line_of("depth_sum(4);"));
  // A condition on the arguments; a function returning void; one never called.
  r = c.request("rewind/calls", {{"function", "depth_sum"}, {"condition", "n % 2 == 0"}});
  REQUIRE(r["success"] == true);
  CHECK(r["body"]["totalCalls"] == 3);
  r = c.request("rewind/calls", {{"function", "bump"}, {"order", "newest"}, {"count", 2}});
  REQUIRE(r["success"] == true);
  CHECK(r["body"]["totalCalls"] == 12);
  REQUIRE(r["body"]["calls"].size() == 2);
  CHECK(r["body"]["calls"][0]["index"] == 11);
  CHECK(r["body"]["calls"][0]["arguments"][1]["value"] == "1");  // by: i = 11, 11 % 3 != 0
  CHECK(r["body"]["calls"][0]["returned"] == true);
  CHECK(r["body"]["calls"][0]["returnValue"] == "");  // void
  r = c.request("rewind/calls", {{"function", "no_such_function"}});
  CHECK(r["success"] == false);
  CHECK(r["message"].get<std::string>().find("no_such_function") != std::string::npos);

  // A logpoint over the whole recording: the same lines as the printf beside it.
  r = c.request("rewind/logAll", {{"source", {{"path", VALUE_HISTORY_C}}},
                                  {"line", line_of("printf(\"sum %d %ld\\n\", n, sum);")},
                                  {"logMessage", "sum {n} {sum}"}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  std::vector<std::string> logged;
  for (const json& hit : r["body"]["hits"]) logged.push_back(hit["message"]);
  std::vector<std::string> want;
  p = popen(VALUE_HISTORY, "r");
  REQUIRE(p != nullptr);
  while (fgets(buf, sizeof buf, p))
    if (std::string(buf).rfind("sum ", 0) == 0) want.push_back(std::string(buf, strlen(buf) - 1));
  REQUIRE(pclose(p) == 0);
  CHECK(logged == want);
  CHECK(r["body"]["totalHits"] == want.size());

  // None of it moved the session.
  CHECK(c.request("rewind/when")["body"]["event"] == here);

  // To the third call of depth_sum (n = 2): stopped there, its argument in the frame; then
  // to the fifth hit of the logpoint.
  r = c.request("rewind/calls", {{"function", "depth_sum"}});
  REQUIRE(r["success"] == true);
  r = c.request("rewind/seek", {{"call", 2}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  json frame = top_frame(c, tid);
  CHECK(frame["name"] == "depth_sum");
  CHECK(evaluate(c, frame["id"], "n") == "2");
  r = c.request("rewind/seek", {{"logHit", 4}});
  REQUIRE(r["success"] == true);
  c.event("stopped");
  frame = top_frame(c, tid);
  CHECK(frame["name"] == "accumulate");
  CHECK(evaluate(c, frame["id"], "sum") == "55");  // the fifth line: "sum 5 55"
  CHECK(c.request("rewind/seek", {{"call", 99}})["success"] == false);
}

TEST_CASE("a query that cancel interrupts answers with what it found, and the session goes on",
          "[dap][queries]") {
  // compute_loop changes `state` at every pass of a loop of about three seconds: its history
  // takes long enough for a cancel to arrive while it runs.
  std::string trace = test::recorded_trace(REWIND_BIN, COMPUTE_LOOP);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"},
                                   {"supportsProgressReporting", true}})["success"] == true);
  REQUIRE(c.request("launch",
                    {{"mode", "replay"}, {"trace", trace}, {"stopOnEntry", true}})["success"] ==
          true);
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);
  c.event("stopped");
  uint64_t here = c.request("rewind/when")["body"]["event"];
  int seq = c.send("rewind/history", {{"expression", "state"}, {"count", 5}});
  json started = c.event("progressStart");
  CHECK(started["body"]["requestId"] == seq);
  CHECK(started["body"]["cancellable"] == true);
  REQUIRE(c.request("cancel", {{"requestId", seq}})["success"] == true);
  json r = c.response(seq);
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  CHECK(r["body"]["complete"] == false);
  CHECK(r["body"]["changes"].size() <= 5);
  CHECK(c.event("progressEnd")["body"]["progressId"] == started["body"]["progressId"]);
  // The session stands where it stood, and answers.
  CHECK(c.request("rewind/when")["body"]["event"] == here);
  CHECK(c.request("threads")["success"] == true);
}
