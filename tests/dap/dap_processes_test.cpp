// A trace of two live processes debugged over DAP: tests/programs/fork_worker.c, a parent
// and its fork()ed worker talking over pipes. A line breakpoint in the worker's function and
// one in the parent's are both hit, each only in its own process, forwards and then
// backwards in the same session; the threads request names each thread "PROGRAM [PID/TID]";
// the worker gets a process event when it appears; rewind/timeline marks the thread switches;
// a checkpoint taken on request holds both processes.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/support/source_line.h"

using nlohmann::json;
using test::evaluate;
using test::top_frame;

namespace {

/// One breakpoint stop: which function ("w" worker_step, "p" parent_got) with its argument,
/// and the thread that stopped.
struct Hit {
  std::string where;
  int tid = 0;
  bool operator==(const Hit&) const = default;
};

Hit hit_of(test::DapClient& c, const json& stop) {
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  int tid = stop["body"]["threadId"];
  json top = top_frame(c, tid);
  if (top["name"] == "worker_step") return {"w" + evaluate(c, top["id"], "job"), tid};
  REQUIRE(top["name"] == "parent_got");
  return {"p" + evaluate(c, top["id"], "answer"), tid};
}

/// Records FORK_WORKER into a new directory `dir` with `rewind record` options `options`;
/// returns the trace's path.
std::string record_fork_worker(std::string& dir, const std::string& options = "") {
  char tmpl[] = "/tmp/rewind-dap-fork.XXXXXX";
  dir = mkdtemp(tmpl);
  std::string trace = dir + "/trace";
  std::string cmd = std::string(REWIND_BIN) + " record " + options + " -o " + trace + " " +
                    FORK_WORKER + " >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return trace;
}

}  // namespace

TEST_CASE("a parent and its forked worker: breakpoints in each, hit both ways over DAP", "[dap]") {
  // Every syscall traced: each read and write is an event, so the jobs' round trips show in
  // the timeline as switches between the processes whatever the machine's load. (Buffered,
  // a pipe read that did not block leaves no event: the sanitizer build's CI run once saw
  // only 2 switches.)
  std::string dir;
  std::string trace = record_fork_worker(dir, "--no-syscall-buffer");

  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  json first_process = c.event("process");
  const int parent = first_process["body"]["systemProcessId"];
  c.event("initialized");
  json lines = {{{"line", test::line_of(FORK_WORKER_C, "long answer = job * job;")}},
                {{"line", test::line_of(FORK_WORKER_C, "total += answer;")}}};
  json set =
      c.request("setBreakpoints", {{"source", {{"path", FORK_WORKER_C}}}, {"breakpoints", lines}});
  REQUIRE(set["body"]["breakpoints"][0]["verified"] == true);
  REQUIRE(set["body"]["breakpoints"][1]["verified"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);

  // Forwards: each process's hits in its own order; the worker is another process.
  std::vector<Hit> forward;
  int worker = 0;
  for (int i = 0; i < 6; ++i) {
    if (i > 0) REQUIRE(c.request("continue")["success"] == true);
    forward.push_back(hit_of(c, c.event("stopped")));
    const Hit& h = forward.back();
    if (h.where[0] == 'p') {
      CHECK(h.tid == parent);
    } else {
      CHECK(h.tid != parent);
      if (!worker) worker = h.tid;
      CHECK(h.tid == worker);
    }
    if (i == 0) {
      // Both processes live: each thread by its program, process and thread ids.
      json threads = c.request("threads")["body"]["threads"];
      std::vector<std::string> names;
      for (const json& t : threads) {
        names.push_back(t["name"]);
        // The first hit may be the parent's (the recording's order of the two processes):
        // the worker is then known by the other thread listed, which its later hits check.
        if (!worker && t["id"] != parent) worker = t["id"];
      }
      std::string p = std::to_string(parent), w = std::to_string(worker);
      CHECK(names == std::vector<std::string>{"fork_worker [" + p + "/" + p + "]",
                                              "fork_worker [" + w + "/" + w + "]"});
    }
  }
  std::vector<std::string> parent_hits, worker_hits;
  for (const Hit& h : forward) (h.where[0] == 'p' ? parent_hits : worker_hits).push_back(h.where);
  CHECK(parent_hits == std::vector<std::string>{"p1", "p4", "p9"});
  CHECK(worker_hits == std::vector<std::string>{"w1", "w2", "w3"});
  // The worker's process event, with its recorded pid.
  std::vector<json> processes = c.seen("process");
  REQUIRE(processes.size() == 2);
  CHECK(processes[1]["body"]["systemProcessId"] == worker);
  CHECK(processes[1]["body"]["name"] == "fork_worker");

  // The timeline shows the schedule: an event of another task than the one before names
  // the task it switched from; in this trace both processes take turns.
  json tl = c.request("rewind/timeline", {{"start", 1}, {"count", 10000}})["body"]["events"];
  int switches = 0;
  for (size_t i = 1; i < tl.size(); ++i) {
    INFO("event " << tl[i]["event"]);
    bool other = tl[i]["threadId"] != 0 && tl[i]["threadId"] != tl[i - 1]["threadId"];
    CHECK(tl[i].contains("switchedFrom") == other);
    if (other) {
      CHECK(tl[i]["switchedFrom"] == tl[i - 1]["threadId"]);
      ++switches;
    }
  }
  INFO("switches " << switches);
  CHECK(switches >= 6);  // to the worker and back for each of the 3 jobs

  // Backwards from the last hit: the same hits in the reverse order, in the same threads.
  std::vector<Hit> backward;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(c.request("reverseContinue")["success"] == true);
    backward.push_back(hit_of(c, c.event("stopped")));
  }
  std::vector<Hit> expected(forward.rbegin() + 1, forward.rend());
  CHECK(backward == expected);
  // A checkpoint of both processes on request, just after an event where both live: the
  // first such event from here on where no task is inside its fork (just after the fork's
  // event the parent still is, and a copy is refused). Then go on, and come back to it.
  uint64_t here = c.request("rewind/when")["body"]["event"];
  json added;
  for (uint64_t e = here; e < here + 20 && added["success"] != true; ++e) {
    REQUIRE(c.request("rewind/seek", {{"event", e}})["success"] == true);
    c.event("stopped");
    if (c.request("threads")["body"]["threads"].size() != 2) break;
    added = c.request("rewind/checkpoints", {{"action", "add"}});
    here = e;
  }
  INFO(added.dump());
  REQUIRE(added["success"] == true);
  CHECK(added["body"]["event"] == here);
  REQUIRE(c.request("continue")["success"] == true);
  c.event("stopped");
  REQUIRE(c.request("rewind/checkpoints",
                    {{"action", "restore"}, {"id", added["body"]["id"]}})["success"] == true);
  c.event("stopped");
  CHECK(c.request("rewind/when")["body"]["event"] == here);
  CHECK(c.request("threads")["body"]["threads"].size() == 2);
  // And forwards again from the restored checkpoint, to the parent's last hit.
  bool last = false;
  for (int i = 0; i < 6 && !last; ++i) {
    REQUIRE(c.request("continue")["success"] == true);
    json stop = c.event("stopped");  // at the recording's end: reason "pause"
    if (stop["body"]["reason"] != "breakpoint") break;
    last = hit_of(c, stop) == Hit{"p9", parent};
  }
  CHECK(last);
  REQUIRE(c.request("disconnect")["success"] == true);
  c.check_schema();
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("steps of a process that waits while the other one runs end", "[dap]") {
  // Stopped at the worker's breakpoint, the parent waits in a read that it made through
  // rewind's library before the last event (the worker's). A step back of the parent cannot
  // move it past that event by steps of its own; it once went back and forth inside the
  // hidden library for ever (the request never answered).
  std::string dir;
  std::string trace = record_fork_worker(dir);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
  const int parent = c.event("process")["body"]["systemProcessId"];
  c.event("initialized");
  json lines = {{{"line", test::line_of(FORK_WORKER_C, "long answer = job * job;")}},
                {{"line", test::line_of(FORK_WORKER_C, "total += answer;")}}};
  REQUIRE(c.request("setBreakpoints", {{"source", {{"path", FORK_WORKER_C}}},
                                       {"breakpoints", lines}})["success"] == true);
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  REQUIRE(stop["body"]["reason"] == "breakpoint");
  REQUIRE(stop["body"]["threadId"] != parent);
  for (const std::string granularity : {"line", "instruction"}) {
    INFO(granularity);
    json r = c.request("stepBack", {{"threadId", parent}, {"granularity", granularity}});
    REQUIRE(r["success"] == true);
    CHECK(c.event("stopped")["body"]["threadId"] == parent);
    // Shown at the program's read, as the stack shows a task inside rewind's library.
    json st = c.request("stackTrace", {{"threadId", parent}})["body"]["stackFrames"];
    REQUIRE(!st.empty());
    INFO(st.dump());
    bool in_main = false;
    for (const json& f : st) in_main |= f["name"] == "main";
    CHECK(in_main);
  }
  REQUIRE(c.request("disconnect")["success"] == true);
  c.check_schema();
  std::system(("rm -rf " + dir).c_str());
}
