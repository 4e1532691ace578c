// `rewind dap` over real pipes: a replay of tests/programs/symbols_demo.c debugged the way an
// editor does it (breakpoints of each kind, stack, scopes, variables, steps both ways,
// evaluate, memory, disassembly, modules, rewind's own requests, errors), pause, and a library
// loaded during the run (Record & Debug: dap_record_test.cpp). Every message the adapter sends
// is checked against the schema.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "engine/trace/trace_files.h"
#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using nlohmann::json;
using test::evaluate;
using test::top_frame;

namespace {

uint32_t line_of(const std::string& marker) {
  return test::line_of(SOURCE_C, marker);
}

std::map<std::string, json> by_name(const json& variables) {
  std::map<std::string, json> out;
  for (const json& v : variables) out[v["name"]] = v;
  return out;
}

/// Starts a replay session of `trace` up to configurationDone (not sent).
void launch_replay(test::DapClient& c, const std::string& trace) {
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"},
                                   {"supportsInvalidatedEvent", true}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  c.event("initialized");
}

}  // namespace

TEST_CASE("a replay debugged over DAP on stdio", "[dap]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapClient c(REWIND_BIN);

  json init = c.request(
      "initialize",
      {{"adapterID", "rewind"}, {"linesStartAt1", true}, {"supportsInvalidatedEvent", true}});
  REQUIRE(init["success"] == true);
  CHECK(init["body"]["supportsStepBack"] == true);
  CHECK(init["body"]["supportsConditionalBreakpoints"] == true);
  CHECK(init["body"]["supportsDataBreakpoints"] == true);
  CHECK(init["body"]["supportsDisassembleRequest"] == true);
  CHECK(init["body"]["supportsGotoTargetsRequest"] == false);
  // Signals: fatal, all, named; Python: uncaught (default on), raised; R errors.
  std::vector<std::string> filter_ids;
  for (const json& f : init["body"]["exceptionBreakpointFilters"])
    filter_ids.push_back(f["filter"]);
  CHECK(filter_ids == std::vector<std::string>{"fatal", "all", "signals", "python-uncaught",
                                               "python-raised", "r-error"});
  // A request is served exactly when its capability is announced: each one announced false is
  // answered "does not support", each one announced true is not (it fails otherwise here:
  // nothing is launched yet).
  const std::map<std::string, std::string> by_capability = {
      {"supportsRestartRequest", "restart"},
      {"supportsCompletionsRequest", "completions"},
      {"supportsModulesRequest", "modules"},
      {"supportsLoadedSourcesRequest", "loadedSources"},
      {"supportsReadMemoryRequest", "readMemory"},
      {"supportsDisassembleRequest", "disassemble"},
      {"supportsBreakpointLocationsRequest", "breakpointLocations"},
      {"supportsExceptionInfoRequest", "exceptionInfo"},
      {"supportsGotoTargetsRequest", "gotoTargets"},
      {"supportsStepInTargetsRequest", "stepInTargets"},
      {"supportsWriteMemoryRequest", "writeMemory"},
      {"supportsTerminateThreadsRequest", "terminateThreads"},
      {"supportsRestartFrame", "restartFrame"}};
  for (const auto& [capability, command] : by_capability) {
    INFO(capability << " / " << command);
    REQUIRE(init["body"].contains(capability));
    json r = c.request(command);
    bool unsupported = r["success"] == false &&
                       r["message"] == "rewind does not support the \"" + command + "\" request";
    CHECK(unsupported == (init["body"][capability] == false));
  }

  // Bad input never ends the session.
  c.send_raw("{not json");
  CHECK(c.event("output")["body"]["output"].get<std::string>().find("malformed") !=
        std::string::npos);
  json unknown = c.request("frobnicate");
  CHECK(unknown["success"] == false);
  CHECK(unknown["message"] == "rewind does not support the \"frobnicate\" request");
  json early = c.request("threads");
  CHECK(early["success"] == false);
  CHECK(early["message"].get<std::string>().find("launch") != std::string::npos);
  json missing = c.request("launch", {{"mode", "record"}});
  CHECK(missing["success"] == false);
  CHECK(missing["message"] == "missing argument \"program\"");
  json no_program = c.request("launch", {{"program", "/no/such/program"}});
  CHECK(no_program["success"] == false);
  CHECK(no_program["message"] == "cannot find program \"/no/such/program\"");
  json bad_mode = c.request("launch", {{"mode", "rewrite"}});
  CHECK(bad_mode["message"] == "unknown launch mode \"rewrite\": use \"record\" or \"replay\"");

  json launch = c.request("launch", {{"mode", "replay"}, {"trace", trace}});
  REQUIRE(launch["success"] == true);
  CHECK(c.event("process")["body"]["startMethod"] == "launch");
  c.event("initialized");
  uint32_t body_line = line_of("total += i;");
  uint32_t blank_line = line_of("int loop_sum(int n)") - 1;
  json locations = c.request(
      "breakpointLocations",
      {{"source", {{"path", SOURCE_C}}}, {"line", blank_line}, {"endLine", body_line + 1}});
  REQUIRE(locations["success"] == true);
  std::vector<int> lines;
  for (const json& l : locations["body"]["breakpoints"]) lines.push_back(l["line"]);
  CHECK(std::find(lines.begin(), lines.end(), int(body_line)) != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), int(body_line) - 2) != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), int(blank_line)) == lines.end());

  json bps = c.request("setBreakpoints", {{"source", {{"path", SOURCE_C}}},
                                          {"breakpoints", {{{"line", body_line}}}}});
  REQUIRE(bps["success"] == true);
  REQUIRE(bps["body"]["breakpoints"].size() == 1);
  CHECK(bps["body"]["breakpoints"][0]["verified"] == true);
  CHECK(bps["body"]["breakpoints"][0]["line"] == body_line);
  json filters =
      c.request("setExceptionBreakpoints",
                {{"filters", {"fatal"}},
                 {"filterOptions", {{{"filterId", "signals"}, {"condition", "SIGFOO"}}}}});
  CHECK(filters["body"]["breakpoints"][0]["verified"] == true);
  CHECK(filters["body"]["breakpoints"][1]["verified"] == false);
  CHECK(filters["body"]["breakpoints"][1]["message"] == "not a signal: SIGFOO");
  REQUIRE(c.request("configurationDone")["success"] == true);

  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "breakpoint");
  CHECK(stop["body"]["hitBreakpointIds"] == json::array({bps["body"]["breakpoints"][0]["id"]}));
  int tid = stop["body"]["threadId"];
  json threads = c.request("threads");
  REQUIRE(threads["body"]["threads"].size() == 1);
  CHECK(threads["body"]["threads"][0]["id"] == tid);
  CHECK(!c.seen("module").empty());

  json frame = top_frame(c, tid);
  CHECK(frame["name"] == "loop_sum");
  CHECK(frame["line"] == body_line);
  CHECK(frame["source"]["path"] == SOURCE_C);
  json scopes = c.request("scopes", {{"frameId", frame["id"]}});
  REQUIRE(scopes["body"]["scopes"].size() == 4);
  CHECK(scopes["body"]["scopes"][0]["name"] == "Locals");
  json locals = c.request(
      "variables", {{"variablesReference", scopes["body"]["scopes"][0]["variablesReference"]}});
  auto values = by_name(locals["body"]["variables"]);
  CHECK(values["total"]["value"] == "0");
  CHECK(values["i"]["value"] == "0");
  json regs = c.request(
      "variables", {{"variablesReference", scopes["body"]["scopes"][3]["variablesReference"]}});
  CHECK(by_name(regs["body"]["variables"])["rip"]["value"] == frame["instructionPointerReference"]);

  // The program as loaded: modules, memory, disassembly around the pc.
  json mods = c.request("modules");
  bool demo_has_symbols = false;
  for (const json& m : mods["body"]["modules"])
    if (m["path"].get<std::string>().find("trace") != std::string::npos ||
        m["name"] == "symbols_demo_gcc_O0")
      demo_has_symbols |= m["symbolStatus"] == "Symbols loaded.";
  CHECK(demo_has_symbols);
  CHECK(mods["body"]["totalModules"].get<int>() >= 3);  // the program, ld.so, libc
  json counter =
      c.request("evaluate", {{"expression", "global_counter"}, {"frameId", frame["id"]}});
  REQUIRE(counter["body"].contains("memoryReference"));
  json mem = c.request("readMemory",
                       {{"memoryReference", counter["body"]["memoryReference"]}, {"count", 4}});
  CHECK(mem["body"]["data"] == "KgAAAA==");  // 42, little-endian
  json dis = c.request("disassemble", {{"memoryReference", frame["instructionPointerReference"]},
                                       {"instructionOffset", -4},
                                       {"instructionCount", 8},
                                       {"resolveSymbols", true}});
  REQUIRE(dis["body"]["instructions"].size() == 8);
  json at_pc = dis["body"]["instructions"][4];
  CHECK(at_pc["address"] == frame["instructionPointerReference"]);
  CHECK(at_pc["symbol"] == "loop_sum");
  CHECK(at_pc["line"] == body_line);
  CHECK(!at_pc["instruction"].get<std::string>().empty());

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

  // Changing a variable happens in a diversion; moving on returns to the recording.
  json scopes2 = c.request("scopes", {{"frameId", frame["id"]}});
  json set = c.request("setVariable",
                       {{"variablesReference", scopes2["body"]["scopes"][0]["variablesReference"]},
                        {"name", "total"},
                        {"value", "100 + 23"}});
  REQUIRE(set["success"] == true);
  CHECK(set["body"]["value"] == "123");
  CHECK(c.event("invalidated")["body"]["areas"] == json::array({"variables"}));
  CHECK(evaluate(c, frame["id"], "total") == "123");
  json set_reg = c.request("setExpression",
                           {{"expression", "$rip"}, {"value", "0"}, {"frameId", frame["id"]}});
  CHECK(set_reg["success"] == false);
  REQUIRE(c.request("next", {{"threadId", tid}})["success"] == true);
  c.event("stopped");
  CHECK(evaluate(c, top_frame(c, tid)["id"], "total") == "0");

  // The REPL's completions and rewind's own requests.
  // (The frame of the stop now: ids from before the next are stale.)
  json comp = c.request("completions",
                        {{"text", "glo"}, {"column", 4}, {"frameId", top_frame(c, tid)["id"]}});
  std::vector<std::string> labels;
  for (const json& t : comp["body"]["targets"]) labels.push_back(t["label"]);
  CHECK(std::find(labels.begin(), labels.end(), "global_counter") != labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "global_ratio") != labels.end());
  json when = c.request("rewind/when");
  uint64_t now_event = when["body"]["event"];
  CHECK(now_event > 0);
  CHECK(when["body"]["function"] == "loop_sum");
  json tl = c.request("rewind/timeline", {{"start", 1}, {"count", 100000}});
  REQUIRE(tl["success"] == true);
  CHECK(tl["body"]["eventCount"] == when["body"]["eventCount"]);
  bool has_write = false;
  for (const json& e : tl["body"]["events"]) has_write |= e.value("syscall", "") == "write";
  CHECK(has_write);
  // Each event says whose it was: the loader's start-up, rewind's own set-up (the syscall
  // buffer's registration, libc's patching), or the program's (no "origin").
  std::map<std::string, std::set<std::string>> by_origin;
  for (const json& e : tl["body"]["events"])
    by_origin[e.value("origin", "program")].insert(
        e.value("syscall", e["kind"].get<std::string>()));
  CHECK(tl["body"]["events"][0].count("origin") == 0);  // the exec
  CHECK(by_origin["loader"].count("openat") == 1);      // the loader opens libc
  CHECK(by_origin["loader"].count("cpuid") == 1);       // its CPU feature probes
  CHECK(by_origin["program"].count("cpuid") == 0);
  CHECK(by_origin["loader"].count("write") == 0);
  CHECK(by_origin["rewind"].count("rewind_register_buffer") == 1);
  CHECK(by_origin["rewind"].count("mprotect") == 1);  // the untraced page, libc's patching
  CHECK(by_origin["rewind"].count("write") == 0);
  CHECK(by_origin["program"].count("write") == 1);
  CHECK(by_origin["program"].count("rewind_register_buffer") == 0);
  CHECK(c.request("exceptionInfo", {{"threadId", tid}})["success"] == false);
  CHECK(c.request("rewind/seek", {{"event", 0}})["success"] == false);

  // A function breakpoint and an instruction breakpoint, met again after a restart.
  json fbp = c.request("setFunctionBreakpoints", {{"breakpoints", {{{"name", "recurse"}}}}});
  CHECK(fbp["body"]["breakpoints"][0]["verified"] == true);
  REQUIRE(c.request("restart")["success"] == true);
  json fstop = c.event("stopped");
  CHECK(fstop["body"]["reason"] == "function breakpoint");
  CHECK(top_frame(c, tid)["name"] == "recurse");
  REQUIRE(c.request("setFunctionBreakpoints", {{"breakpoints", json::array()}})["success"]);
  json ibp = c.request("setInstructionBreakpoints",
                       {{"breakpoints", {{{"instructionReference", at_pc["address"]}}}}});
  CHECK(ibp["body"]["breakpoints"][0]["verified"] == true);
  CHECK(ibp["body"]["breakpoints"][0]["line"] == body_line);
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", SOURCE_C}}},
                                       {"breakpoints", json::array()}})["success"] == true);
  REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "instruction breakpoint");
  CHECK(top_frame(c, tid)["instructionPointerReference"] == at_pc["address"]);

  // A hit condition counts from the start of the recording again after each restart.
  REQUIRE(c.request("setInstructionBreakpoints", {{"breakpoints", json::array()}})["success"]);
  REQUIRE(
      c.request("setBreakpoints",
                {{"source", {{"path", SOURCE_C}}},
                 {"breakpoints", {{{"line", body_line}, {"hitCondition", "== 2"}}}}})["success"]);
  for (int run = 0; run < 2; ++run) {
    REQUIRE(c.request("restart")["success"] == true);
    json hit = c.event("stopped");
    CHECK(hit["body"]["reason"] == "breakpoint");
    CHECK(evaluate(c, top_frame(c, tid)["id"], "i") == "1");  // the second hit, each time
  }
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", SOURCE_C}}},
                                       {"breakpoints", json::array()}})["success"] == true);

  // A jump in time to an event, and back to where we were.
  json seek = c.request("rewind/seek", {{"event", now_event}});
  REQUIRE(seek["success"] == true);
  CHECK(seek["body"]["event"] == now_event);
  CHECK(c.event("stopped")["body"]["reason"] == "goto");
  // A frameId from an earlier stop is refused, without asking the client to show the error
  // (clients race with stops: VS Code asks for the old frame's scopes after a seek).
  json stale = c.request("scopes", {{"frameId", frame["id"]}});
  CHECK(stale["success"] == false);
  CHECK(stale["body"]["error"]["showUser"] == false);

  // A jump to the program's write stops inside libc's write, whose source is not on this
  // machine: that frame has no source (VS Code shows its disassembly instead of an error).
  // (The write is the flush at exit: every frame is libc's.)
  uint64_t write_event = 0;
  for (const json& e : tl["body"]["events"])
    if (e.value("syscall", "") == "write" && !write_event) write_event = e["event"];
  REQUIRE(c.request("rewind/seek", {{"event", write_event}})["success"] == true);
  c.event("stopped");
  json in_write = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"];
  REQUIRE(in_write.size() >= 2);
  // Buffered or not, the stop shows libc's write on top: librewind_preload.so's frames (a
  // traced syscall from its hook) are rewind's, not the program's.
  CHECK(in_write[0]["name"].get<std::string>().find("write") != std::string::npos);
  for (const json& f : in_write) CHECK(f["name"].get<std::string>().rfind("rwd_", 0) != 0);
  CHECK(!in_write[0].contains("source"));
  CHECK(in_write[0]["presentationHint"] == "subtle");
  CHECK(in_write[0].contains("instructionPointerReference"));
  for (const json& f : in_write)
    if (f.contains("source"))
      CHECK(access(f["source"]["path"].get<std::string>().c_str(), R_OK) == 0);
  // The last events (exit_group, the exit, the end) have no point after them with a live
  // task: a seek there stops at the end and says why, naming the event asked for.
  uint64_t last = when["body"]["eventCount"];
  json at_end = c.request("rewind/seek", {{"event", last}});
  REQUIRE(at_end["success"] == true);
  CHECK(c.event("stopped")["body"]["description"].get<std::string>().find(
            "The end of the recording") != std::string::npos);
  CHECK(at_end["body"]["event"] < last);
  bool told = false;
  for (const json& o : c.seen("output"))
    told |= o["body"]["output"].get<std::string>().find(
                "event " + std::to_string(last) +
                " (the end of the recording) comes after the program's last instruction") !=
            std::string::npos;
  CHECK(told);
  REQUIRE(c.request("rewind/seek", {{"event", now_event}})["success"] == true);
  c.event("stopped");

  // A struct's children, fetched lazily through variablesReference (main's tri).
  REQUIRE(c.request("setInstructionBreakpoints", {{"breakpoints", json::array()}})["success"]);
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", SOURCE_C}}},
                                       {"breakpoints", {{{"line", body_line}}}}})["success"]);
  REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
  c.event("stopped");
  size_t depth = c.request("stackTrace", {{"threadId", tid}})["body"]["stackFrames"].size();
  CHECK(depth >= 2);
  json st = c.request("stackTrace", {{"threadId", tid}, {"startFrame", 1}, {"levels", 1}});
  REQUIRE(st["body"]["stackFrames"].size() == 1);
  CHECK(st["body"]["totalFrames"] == depth);
  json main_frame = st["body"]["stackFrames"][0];
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

  // To the end: the program's own output arrives as output events, once.
  REQUIRE(c.request("setBreakpoints",
                    {{"source", {{"path", SOURCE_C}}}, {"breakpoints", json::array()}})["success"]);
  REQUIRE(c.request("continue", {{"threadId", tid}})["success"] == true);
  json end = c.event("stopped");
  CHECK(end["body"]["reason"] == "pause");
  std::string printed;
  for (const json& o : c.seen("output"))
    if (o["body"]["category"] == "stdout") printed += o["body"]["output"].get<std::string>();
  CHECK(printed == "triangle 7 17.75 hello 2 5 1 47\n");

  REQUIRE(c.request("terminate")["success"] == true);
  CHECK(c.event("exited")["body"]["exitCode"] == 0);
  c.event("terminated");
  int status = c.wait_exit();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  c.check_schema();
  std::system(("rm -rf " + trace.substr(0, trace.rfind('/'))).c_str());
}

TEST_CASE("pause stops a running continue, forwards and backwards", "[dap]") {
  // Every syscall traced: 60,000 events replay for seconds (buffered, in milliseconds).
  std::string trace =
      test::recorded_trace(REWIND_BIN, std::string("--no-syscall-buffer ") + SLOW_PROGRAM);
  test::DapClient c(REWIND_BIN);
  launch_replay(c, trace);
  json info = c.request("rewind/when");
  uint64_t total = info["body"]["eventCount"];
  REQUIRE(c.request("configurationDone")["success"] == true);
  // The continue runs on; pause interrupts it where the replay is.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  json pause = c.request("pause", {{"threadId", 1}});
  CHECK(pause["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "pause");
  CHECK(!stop["body"].contains("description"));  // not the end of the recording
  uint64_t at = c.request("rewind/when")["body"]["event"];
  CHECK(at > 1);
  CHECK(at < total);
  // From the end, a reverse continue with no breakpoint would run back to the start (about
  // three seconds here); pause stops it on the way, at a point no later than where it began.
  REQUIRE(c.request("continue", {{"threadId", 1}})["success"] == true);
  CHECK(c.event("stopped")["body"].contains("description"));  // the end
  REQUIRE(c.request("reverseContinue", {{"threadId", 1}})["success"] == true);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(c.request("pause", {{"threadId", 1}})["success"] == true);
  json back = c.event("stopped");
  CHECK(back["body"]["reason"] == "pause");
  // Not the start of the recording: only the mark of a move backwards.
  CHECK(back["body"]["description"] == "◀ reverse · pause");
  uint64_t back_at = c.request("rewind/when")["body"]["event"];
  CHECK(back_at > 1);
  CHECK(back_at < total);
  // It is a real point of the replay: stepping on from it works; a thread that does not
  // exist is refused.
  int tid = back["body"]["threadId"];
  CHECK(c.request("next", {{"threadId", tid + 100000}})["success"] == false);
  REQUIRE(c.request("next", {{"threadId", tid}})["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "step");
  REQUIRE(c.request("disconnect")["success"] == true);
  c.check_schema();
}

TEST_CASE("a breakpoint in a library loaded during the run binds and hits", "[dap]") {
  std::string trace = test::recorded_trace(REWIND_BIN, std::string(PLUGIN_HOST) + " " + PLUGIN_LIB);
  test::DapClient c(REWIND_BIN);
  launch_replay(c, trace);
  uint32_t line = test::line_of(PLUGIN_C, "plugin breakpoint line");
  json bps = c.request("setBreakpoints",
                       {{"source", {{"path", PLUGIN_C}}}, {"breakpoints", {{{"line", line}}}}});
  REQUIRE(bps["success"] == true);
  // Not loaded yet, but the trace holds the library's copy: bound there at once.
  CHECK(bps["body"]["breakpoints"][0]["verified"] == true);
  CHECK(bps["body"]["breakpoints"][0]["line"] == line);
  int id = bps["body"]["breakpoints"][0]["id"];
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "breakpoint");
  REQUIRE(stop["body"].contains("hitBreakpointIds"));
  CHECK(stop["body"]["hitBreakpointIds"][0] == id);
  json frame = top_frame(c, stop["body"]["threadId"]);
  CHECK(frame["name"] == "plugin_scale");
  CHECK(frame["line"] == line);
  CHECK(evaluate(c, frame["id"], "x") == "14");
  for (const json& e : c.seen("breakpoint"))  // never shown unbound
    CHECK(e["body"]["breakpoint"]["verified"] == true);
  c.check_schema();
}
