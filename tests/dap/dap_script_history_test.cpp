// rewind/history on a Python local, over a real pipe, on a replay of python3 running
// tests/programs/python_lines/history.py: the bindings of `total` in one of three calls of
// running() made one after another (their frames at one address, no event between them),
// checked against what the program printed when it ran natively; an argument's binding at the
// call; rewind/seek to a binding, with the Python frame's locals there. rewind/calls of a
// Python function and rewind/logAll on a Python line, checked against the program's output.
#include <stdio.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/support/interpreters.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;
using test::top_frame;

namespace {

int line_of(const std::string& marker) {
  return int(test::line_of(PY_HISTORY, marker));
}

/// The lines the program printed natively that start with `word`, in order (without '\n').
std::vector<std::string> printed_lines(const std::string& word) {
  FILE* p = popen((test::python() + " " + PY_HISTORY).c_str(), "r");
  REQUIRE(p != nullptr);
  std::vector<std::string> out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (line.rfind(word + " ", 0) == 0) out.push_back(line);
  }
  REQUIRE(pclose(p) == 0);
  return out;
}

/// The values the program printed on lines "BIND n value" for `n`, in order, natively.
std::vector<std::string> printed_bindings(const std::string& n) {
  std::vector<std::string> out;
  for (const std::string& text : printed_lines("BIND")) {
    std::istringstream line(text);
    std::string word, call, value;
    line >> word >> call >> value;
    if (call == n) out.push_back(value);
  }
  return out;
}

json history(test::DapClient& c, const json& args) {
  c.deadline(std::chrono::seconds(300));
  json r = c.request("rewind/history", args);
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  return r["body"];
}

/// The value of local `name` of the top frame of `tid`, from the Variables view's first scope.
std::string local(test::DapClient& c, int tid, const std::string& name) {
  json scopes = c.request("scopes", {{"frameId", top_frame(c, tid)["id"]}});
  json vars = c.request(
      "variables", {{"variablesReference", scopes["body"]["scopes"][0]["variablesReference"]}});
  for (const json& v : vars["body"]["variables"])
    if (v["name"] == name) return v["value"];
  return "<none>";
}

/// Launches a replay of a recording of PY_HISTORY in `c` and runs to the return of its second
/// call, running(4) (a breakpoint with a hit count, left set); returns the stopped thread.
int stop_at_second_return(test::DapClient& c) {
  std::string trace = test::recorded_trace(REWIND_BIN, test::python() + " " + PY_HISTORY);
  c.deadline(std::chrono::seconds(120));
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
  REQUIRE(c.request("setBreakpoints",
                    {{"source", {{"path", PY_HISTORY}}},
                     {"breakpoints",
                      {{{"line", line_of("return total")}, {"hitCondition", "2"}}}}})["success"] ==
          true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  return stop["body"]["threadId"];
}

}  // namespace

TEST_CASE("rewind/history lists the bindings of a Python local in one call",
          "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  int tid = stop_at_second_return(c);
  json frame = top_frame(c, tid);
  REQUIRE(frame["name"] == "running");
  REQUIRE(local(c, tid, "n") == "4");

  json h = history(c, {{"expression", "total"}, {"frameId", frame["id"]}});
  CHECK(h["complete"] == true);
  CHECK(h["frameFunction"] == "running");
  // `total = 0`, then each value the call printed; not the other calls' (3 and 2).
  std::vector<std::string> want = printed_bindings("4");
  REQUIRE(want == std::vector<std::string>{"1", "5", "14", "30"});
  want.insert(want.begin(), "0");
  std::vector<std::string> got;
  for (const json& ch : h["changes"]) got.push_back(ch["newValue"]);
  CHECK(got == want);
  REQUIRE(h["changes"].size() == want.size());
  CHECK(h["changes"][0]["oldValue"] == "<unbound>");
  CHECK(h["changes"][0]["line"] == line_of("total = 0"));
  for (size_t i = 1; i < want.size(); ++i) {
    CHECK(h["changes"][i]["oldValue"] == want[i - 1]);
    CHECK(h["changes"][i]["function"] == "running");
    CHECK(h["changes"][i]["line"] == line_of("total = total + k * k"));
    CHECK(h["changes"][i]["source"]["path"] == PY_HISTORY);
    CHECK(h["changes"][i]["threadId"] == tid);
  }

  // An argument is bound by the call, at the caller's line.
  json n = history(c, {{"expression", "n"}, {"frameId", frame["id"]}});
  REQUIRE(n["changes"].size() == 1);
  CHECK(n["changes"][0]["newValue"] == "4");
  CHECK(n["changes"][0]["line"] == line_of("# the calls"));

  // To the third binding (total = 5): the Python frame's locals there.
  REQUIRE(c.request("rewind/history",
                    {{"expression", "total"}, {"frameId", frame["id"]}})["success"] == true);
  json r = c.request("rewind/seek", {{"change", 2}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  json at = top_frame(c, tid);
  CHECK(at["name"] == "running");
  CHECK(at["line"] == line_of("total = total + k * k"));
  CHECK(local(c, tid, "total") == "5");
  CHECK(local(c, tid, "n") == "4");

  // What cannot be followed is refused in one message.
  json bad = c.request("rewind/history", {{"expression", "nosuch"}, {"frameId", at["id"]}});
  CHECK(bad["success"] == false);
  INFO(bad.dump());
  CHECK(bad["message"].get<std::string>().find("not a local variable") != std::string::npos);
}

TEST_CASE("rewind/calls lists the calls of a Python function and rewind/seek goes to one",
          "[dap][python][debug-registers]") {
  std::string trace = test::recorded_trace(REWIND_BIN, test::python() + " " + PY_HISTORY);
  test::DapClient c(REWIND_BIN);
  c.deadline(std::chrono::seconds(120));
  int tid = c.launch_at_entry(trace)["body"]["threadId"];

  c.deadline(std::chrono::seconds(300));
  json r = c.request("rewind/calls", {{"function", "history.running"}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  json body = r["body"];
  CHECK(body["complete"] == true);
  REQUIRE(body["totalCalls"] == 3);
  const char* want_n[] = {"3", "4", "2"};
  // What each call returned, as the program printed the list of them natively.
  std::vector<std::string> results = printed_lines("RESULTS");
  REQUIRE(results.size() == 1);
  std::string returned;
  for (size_t i = 0; i < 3; ++i) {
    const json& call = body["calls"][i];
    CHECK(call["function"] == "running");
    CHECK(call["line"] == line_of("total = 0"));  // the first line of its body
    CHECK(call["source"]["path"] == PY_HISTORY);
    REQUIRE(call["arguments"].size() == 1);
    CHECK(call["arguments"][0]["name"] == "n");
    CHECK(call["arguments"][0]["value"] == want_n[i]);
    CHECK(call["caller"]["line"] == line_of("# the calls"));
    CHECK(call["returned"] == true);
    returned += (i ? ", " : "") + call.value("returnValue", std::string("?"));
    if (i > 0) CHECK(call["event"] >= body["calls"][i - 1]["event"]);
  }
  CHECK("RESULTS [" + returned + "]" == results[0]);
  // A function returning constants (RETURN_CONST from 3.12 on).
  json labels = c.request("rewind/calls", {{"function", "history.label"}});
  REQUIRE(labels["success"] == true);
  REQUIRE(labels["body"]["totalCalls"] == 3);
  returned.clear();
  for (const json& call : labels["body"]["calls"])
    returned += (returned.empty() ? "" : ", ") + call.value("returnValue", std::string("?"));
  CHECK("LABELS [" + returned + "]" == printed_lines("LABELS").at(0));
  // The session did not move.
  CHECK(c.request("rewind/when")["body"]["event"] == 1);

  // A condition in Python.
  json two = c.request("rewind/calls", {{"function", "history.running"}, {"condition", "n == 2"}});
  REQUIRE(two["success"] == true);
  REQUIRE(two["body"]["totalCalls"] == 1);
  CHECK(two["body"]["calls"][0]["arguments"][0]["value"] == "2");

  // To the second call (the three are made between the same two events).
  REQUIRE(c.request("rewind/calls", {{"function", "history.running"}})["success"] == true);
  json seek = c.request("rewind/seek", {{"call", 1}});
  INFO(seek.dump());
  REQUIRE(seek["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  json at = top_frame(c, tid);
  CHECK(at["name"] == "running");
  CHECK(at["line"] == line_of("total = 0"));
  CHECK(local(c, tid, "n") == "4");

  // A name that is no function's: an empty answer; a malformed condition: refused.
  json none = c.request("rewind/calls", {{"function", "history.no_such_function"}});
  REQUIRE(none["success"] == true);
  CHECK(none["body"]["totalCalls"] == 0);
  CHECK(c.request("rewind/calls",
                  {{"function", "history.running"}, {"condition", "n =="}})["success"] == false);
}

TEST_CASE("rewind/logAll on a Python line gives every hit's message, as the program printed it",
          "[dap][python][debug-registers]") {
  std::string trace = test::recorded_trace(REWIND_BIN, test::python() + " " + PY_HISTORY);
  test::DapClient c(REWIND_BIN);
  c.deadline(std::chrono::seconds(120));
  int tid = c.launch_at_entry(trace)["body"]["threadId"];

  // A logpoint on the line that logs each binding, with the same message: the program's
  // own lines (printed at its end), hit by hit.
  const int append = line_of("log.append");
  c.deadline(std::chrono::seconds(300));
  json r = c.request("rewind/logAll", {{"source", {{"path", PY_HISTORY}}},
                                       {"line", append},
                                       {"logMessage", "BIND {n} {total}"},
                                       {"count", 100}});
  INFO(r.dump());
  REQUIRE(r["success"] == true);
  json body = r["body"];
  CHECK(body["complete"] == true);
  std::vector<std::string> want = printed_lines("BIND");
  REQUIRE(want.size() == 9);  // 3 + 4 + 2 bindings
  CHECK(body["totalHits"] == want.size());
  std::vector<std::string> got;
  for (const json& hit : body["hits"]) {
    got.push_back(hit["message"]);
    CHECK(hit["function"] == "running");
    CHECK(hit["line"] == append);
    CHECK(hit["source"]["path"] == PY_HISTORY);
    CHECK(hit["threadId"] == tid);
  }
  CHECK(got == want);
  // The session did not move.
  CHECK(c.request("rewind/when")["body"]["event"] == 1);

  // With a condition in Python, and a name that is no local.
  r = c.request("rewind/logAll", {{"source", {{"path", PY_HISTORY}}},
                                  {"line", append},
                                  {"logMessage", "{total} {nosuch}"},
                                  {"condition", "n == 2"}});
  REQUIRE(r["success"] == true);
  REQUIRE(r["body"]["totalHits"] == 2);
  CHECK(r["body"]["hits"][0]["message"] == "1 <no local nosuch>");
  CHECK(r["body"]["hits"][1]["message"] == "5 <no local nosuch>");

  // By function: each call, at the first line of its body.
  r = c.request("rewind/logAll", {{"function", "history.running"}, {"logMessage", "running({n})"}});
  REQUIRE(r["success"] == true);
  REQUIRE(r["body"]["totalHits"] == 3);
  CHECK(r["body"]["hits"][1]["message"] == "running(4)");
  CHECK(r["body"]["hits"][1]["line"] == line_of("total = 0"));

  // To the fifth hit of the line's logpoint (the second call's second binding, before the
  // line runs): the frame's locals are what its message said.
  REQUIRE(c.request("rewind/logAll", {{"source", {{"path", PY_HISTORY}}},
                                      {"line", append},
                                      {"logMessage", "BIND {n} {total}"}})["success"] == true);
  json seek = c.request("rewind/seek", {{"logHit", 4}});
  INFO(seek.dump());
  REQUIRE(seek["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  json at = top_frame(c, tid);
  CHECK(at["name"] == "running");
  CHECK(at["line"] == append);
  CHECK("BIND " + local(c, tid, "n") + " " + local(c, tid, "total") == want[4]);
}

TEST_CASE(
    "rewind/previousChange and rewind/nextChange move between a Python local's bindings "
    "in one call",
    "[dap][python][debug-registers]") {
  test::DapClient c(REWIND_BIN);
  int tid = stop_at_second_return(c);
  REQUIRE(local(c, tid, "total") == "30");
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", PY_HISTORY}}},
                                       {"breakpoints", json::array()}})["success"] == true);

  // Each move stops just after a binding of this call's `total` (the values the call
  // printed, then `total = 0`), in the same call (n is 4), and tells the value on the console.
  // The move's console line, then its stop.
  auto moved = [&](const char* command, const std::string& name) {
    json r = c.request(command, {{"expression", name}, {"frameId", top_frame(c, tid)["id"]}});
    INFO(r.dump());
    REQUIRE(r["success"] == true);
    std::string said;
    while (said.rfind("rewind: " + name + " ", 0) != 0)
      said = c.event("output")["body"].value("output", "");
    CHECK(c.event("stopped")["body"]["reason"] == "goto");
    return said;
  };
  auto move = [&](const char* command, const std::string& name) {
    std::string said = moved(command, name);
    CHECK(top_frame(c, tid)["name"] == "running");
    CHECK(local(c, tid, "n") == "4");
    return std::make_pair(local(c, tid, name), said);
  };
  std::vector<std::string> want = printed_bindings("4");
  REQUIRE(want == std::vector<std::string>{"1", "5", "14", "30"});
  want.insert(want.begin(), "0");
  for (size_t i = want.size(); i-- > 0;) {
    auto [value, said] = move("rewind/previousChange", "total");
    CHECK(value == want[i]);
    CHECK(said.find("total = " + want[i] + " (event ") != std::string::npos);
    CHECK(top_frame(c, tid)["line"] == line_of(i == 0 ? "total = 0" : "total = total + k * k"));
  }
  // Before `total = 0` the call had not begun: no change that way, and the session stays.
  auto [first, none_before] = move("rewind/previousChange", "total");
  CHECK(first == "0");
  CHECK(none_before.find("total does not change before this point in this call of running") !=
        std::string::npos);
  for (size_t i = 1; i < want.size(); ++i)
    CHECK(move("rewind/nextChange", "total").first == want[i]);
  // After 30 the call returns, and running(2) puts its frame at the same address: no change.
  auto [last, none_after] = move("rewind/nextChange", "total");
  CHECK(last == "30");
  CHECK(none_after.find("does not change after") != std::string::npos);

  // An argument: bound once, by the call, at the caller's line (the frame is being set up:
  // the caller's is the top one).
  CHECK(move("rewind/nextChange", "n").second.find("does not change after") != std::string::npos);
  CHECK(moved("rewind/previousChange", "n").find("n = 4 (event ") != std::string::npos);
  json frames = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"];
  INFO(frames.dump());
  auto script = std::find_if(frames.begin(), frames.end(), [](const json& f) {
    return f.contains("source") && f["source"].value("path", "") == PY_HISTORY;
  });
  REQUIRE(script != frames.end());
  CHECK((*script)["line"] == line_of("# the calls"));
  CHECK((*script)["name"] != "running");

  // A name that is not a local of the frame is refused, and the session does not move.
  json bad =
      c.request("rewind/previousChange", {{"expression", "nosuch"}, {"frameId", (*script)["id"]}});
  CHECK(bad["success"] == false);
  INFO(bad.dump());
  CHECK(bad["message"].get<std::string>().find("not a local variable") != std::string::npos);
}
