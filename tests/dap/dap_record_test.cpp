// `rewind dap` starting programs itself over real pipes: Record & Debug with program, args,
// cwd and env, in the client's terminal (runInTerminal), and a malformed header. Every
// message the adapter sends is checked against the schema (dap_client.h).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "engine/trace/trace_files.h"
#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"

using nlohmann::json;
TEST_CASE("Record & Debug: program, args, cwd and env; output as events", "[dap]") {
  std::string traces = test::temp_dir("rewind-dap-record");
  setenv("REWIND_TRACE_DIR", traces.c_str(), 1);  // where the adapter puts the new trace
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  json launch = c.request("launch", {{"program", "/bin/sh"},
                                     {"args", {"-c", "echo foo=$FOO; pwd; echo oops >&2"}},
                                     {"cwd", "/usr"},
                                     {"env", {{"FOO", "bar"}, {"HOME", nullptr}}},
                                     {"stopOnEntry", true}});
  REQUIRE(launch["success"] == true);
  std::string out, err;
  for (const json& o : c.seen("output")) {
    if (o["body"]["category"] == "stdout") out += o["body"]["output"].get<std::string>();
    if (o["body"]["category"] == "stderr") err += o["body"]["output"].get<std::string>();
  }
  CHECK(out == "foo=bar\n/usr\n");
  CHECK(err == "oops\n");
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "entry");
  json when = c.request("rewind/when");
  CHECK(when["body"]["event"] == 1);
  REQUIRE(c.request("continue")["success"] == true);
  CHECK(c.event("stopped")["body"]["reason"] == "pause");  // the end of the recording
  // The replay does not print the output again.
  size_t outputs = 0;
  for (const json& o : c.seen("output")) outputs += o["body"]["category"] == "stdout";
  CHECK(outputs >= 1);
  std::string again;
  for (const json& o : c.seen("output"))
    if (o["body"]["category"] == "stdout") again += o["body"]["output"].get<std::string>();
  CHECK(again == out);
  REQUIRE(c.request("terminate")["success"] == true);
  CHECK(c.event("exited")["body"]["exitCode"] == 0);
  c.check_schema();
  std::system(("rm -rf " + traces).c_str());
}

TEST_CASE("a disconnect while recording a program that ignores SIGTERM still ends it", "[dap]") {
  // The disconnect's SIGTERM reaches the program, which ignores it; the adapter's second one,
  // after its grace, ends the recording (rewind record kills the program), and the trace is
  // kept. Before, the launch never answered: the recording ran as long as the program.
  std::string traces = test::temp_dir("rewind-dap-ignore-term");
  setenv("REWIND_TRACE_DIR", traces.c_str(), 1);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  int launch = c.send("launch", {{"program", "/bin/sh"},
                                 {"args", {"-c", "trap '' TERM; echo ready; exec sleep 600"}}});
  // Its output shows the program runs under rewind record, which passes SIGTERM on by then.
  for (bool ready = false; !ready;) {
    c.deadline(std::chrono::seconds(60));
    json o = c.event("output");
    ready = o["body"]["category"] == "stdout" && o["body"]["output"] == "ready\n";
  }
  const auto asked = std::chrono::steady_clock::now();
  int disconnect = c.send("disconnect");
  c.deadline(std::chrono::seconds(60));
  json r = c.response(launch);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  CHECK(r["success"] == true);  // the trace so far is debuggable
  CHECK(waited < 30);           // the grace (3 s) and the recording's end, not sleep's 600 s
  CHECK(c.response(disconnect)["success"] == true);
  std::string console;
  for (const json& o : c.seen("output"))
    if (o["body"]["category"] == "console") console += o["body"]["output"].get<std::string>();
  CHECK(console.find("killed by SIGKILL") != std::string::npos);
  bool kept = false;
  for (const auto& e : std::filesystem::directory_iterator(traces))
    kept |= e.path().filename().string().rfind("sh-", 0) == 0 &&
            std::filesystem::exists(e.path() / "processes");
  CHECK(kept);
  std::system(("rm -rf " + traces).c_str());
}

TEST_CASE("Record & Debug: the recording's output, grouped, again after a restart; a rebuild",
          "[dap]") {
  char tmpl[] = "/tmp/rewind-dap-rerecord.XXXXXX";
  std::string dir = mkdtemp(tmpl);
  setenv("REWIND_TRACE_DIR", (dir + "/traces").c_str(), 1);
  std::string program = dir + "/greet";
  std::filesystem::copy_file("/bin/echo", program);
  test::DapClient c(REWIND_BIN);
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  REQUIRE(c.request("launch", {{"program", program},
                               {"args", {"hello"}},
                               {"stopOnEntry", true}})["success"] == true);
  // The output came as it ran, in a group headed by what was recorded.
  auto grouped_output = [&](size_t from) {
    std::vector<json> outputs = c.seen("output");
    std::string text;
    for (size_t i = from; i < outputs.size(); ++i) {
      const json& b = outputs[i]["body"];
      if (b.contains("group")) text += "[" + b["group"].get<std::string>() + "]";
      if (b["category"] == "stdout" || b.contains("group")) text += b["output"].get<std::string>();
    }
    return text;
  };
  CHECK(grouped_output(0) == "[start]rewind: recording " + program + "\nhello\n[end]");
  c.event("initialized");
  REQUIRE(c.request("configurationDone")["success"] == true);
  REQUIRE(c.event("stopped")["body"]["reason"] == "entry");

  // VS Code clears its console before a restart: the recording's output comes again.
  size_t before = c.seen("output").size();
  REQUIRE(c.request("restart")["success"] == true);
  REQUIRE(c.event("stopped")["body"]["reason"] == "entry");
  CHECK(grouped_output(before) ==
        "[start]rewind: the output of the recording of " + program + "\nhello\n[end]");
  CHECK(c.seen("rewind/programChanged").empty());

  // Rebuilt (a new file in its place): a restart still replays the old recording, and says so.
  std::filesystem::copy_file("/bin/echo", program + ".new");
  std::filesystem::rename(program + ".new", program);
  before = c.seen("output").size();
  REQUIRE(c.request("restart")["success"] == true);
  json changed = c.event("rewind/programChanged");  // before the stop
  CHECK(changed["body"]["program"] == program);
  REQUIRE(c.event("stopped")["body"]["reason"] == "entry");
  bool said = false;
  std::vector<json> outputs = c.seen("output");
  for (size_t i = before; i < outputs.size(); ++i)
    said |= outputs[i]["body"]["category"] == "console" &&
            outputs[i]["body"]["output"].get<std::string>().find(
                "has changed since it was recorded") != std::string::npos;
  CHECK(said);
  REQUIRE(c.request("terminate")["success"] == true);
  c.check_schema();
  std::filesystem::remove_all(dir);
}

TEST_CASE("a malformed header ends rewind dap with a one-line error", "[dap]") {
  int to[2], from[2], err[2];
  REQUIRE(pipe(to) == 0);
  REQUIRE(pipe(from) == 0);
  REQUIRE(pipe(err) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    dup2(err[1], 2);
    close(to[1]);
    execl(REWIND_BIN, REWIND_BIN, "dap", nullptr);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  close(err[1]);
  std::string garbage = "Content-Length: nope\r\n\r\n{}";
  REQUIRE(write(to[1], garbage.data(), garbage.size()) == ssize_t(garbage.size()));
  close(to[1]);
  std::string message;
  char ch;
  while (read(err[0], &ch, 1) == 1) message += ch;
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(message == "rewind: dap: DAP input: bad Content-Length header \"Content-Length: nope\"\n");
}

namespace {

/// Does what an editor's terminal does with runInTerminal arguments: runs `args` in `cwd`
/// with `env` applied (null removes a variable), stdin from /dev/null and stdout and stderr
/// to the file `screen`. Returns the pid.
pid_t run_in_fake_terminal(const json& args, const std::string& screen) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(args["cwd"].get<std::string>().c_str()) != 0) _exit(126);
    for (auto& [name, value] : args["env"].items()) {
      if (value.is_null())
        unsetenv(name.c_str());
      else
        setenv(name.c_str(), value.get<std::string>().c_str(), 1);
    }
    int null = open("/dev/null", O_RDONLY), out = open(screen.c_str(), O_WRONLY | O_CREAT, 0600);
    dup2(null, 0);
    dup2(out, 1);
    dup2(out, 2);
    std::vector<std::string> argv = args["args"];
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Initializes `c` as a client that can run a terminal and sends a launch of `program` with
/// `console`; returns the launch's seq (the adapter asks runInTerminal before it answers).
int launch_in_terminal(test::DapClient& c, json program, const std::string& console) {
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"},
                                   {"supportsRunInTerminalRequest", true}})["success"] == true);
  program["console"] = console;
  return c.send("launch", program);
}

}  // namespace

TEST_CASE("Record & Debug in the client's terminal (runInTerminal)", "[dap]") {
  std::string traces = test::temp_dir("rewind-dap-terminal");
  setenv("REWIND_TRACE_DIR", traces.c_str(), 1);
  std::string screen = traces + "/screen";
  const json program = {{"program", "/bin/sh"},
                        {"args", {"-c", "echo foo=$FOO home=${HOME-unset}; pwd; echo oops >&2"}},
                        {"cwd", "/usr"},
                        {"env", {{"FOO", "bar"}, {"HOME", nullptr}}},
                        {"stopOnEntry", true}};

  SECTION("the terminal runs rewind record; the session debugs what it recorded") {
    test::DapClient c(REWIND_BIN);
    int launch = launch_in_terminal(c, program, "integratedTerminal");
    json run = c.reverse_request("runInTerminal");
    const json& a = run["arguments"];
    CHECK(a["kind"] == "integrated");
    CHECK(a["cwd"] == "/usr");
    CHECK(a["env"] == json({{"FOO", "bar"}, {"HOME", nullptr}}));
    std::vector<std::string> argv = a["args"];
    REQUIRE(argv.size() >= 4);
    CHECK(argv[0] == REWIND_BIN);
    CHECK(argv[1] == "record");
    CHECK(std::find(argv.begin(), argv.end(), "--status-file") != argv.end());
    CHECK(argv.back() == "echo foo=$FOO home=${HOME-unset}; pwd; echo oops >&2");
    pid_t terminal = run_in_fake_terminal(a, screen);
    c.reply(run, true, {{"processId", terminal}});
    json r = c.response(launch);
    REQUIRE(r["success"] == true);
    int status = 0;
    REQUIRE(waitpid(terminal, &status, 0) == terminal);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The program's output went to the terminal, not to output events.
    CHECK(file_text(screen) == "foo=bar home=unset\n/usr\noops\n");
    for (const json& o : c.seen("output")) CHECK(o["body"]["category"] == "console");
    c.event("initialized");
    REQUIRE(c.request("configurationDone")["success"] == true);
    CHECK(c.event("stopped")["body"]["reason"] == "entry");
    REQUIRE(c.request("continue")["success"] == true);
    CHECK(c.event("stopped")["body"]["reason"] == "pause");  // the end of the recording
    REQUIRE(c.request("terminate")["success"] == true);
    CHECK(c.event("exited")["body"]["exitCode"] == 0);
    c.check_schema();
  }

  SECTION("a terminal the client cannot open fails the launch with the client's reason") {
    test::DapClient c(REWIND_BIN);
    int launch = launch_in_terminal(c, program, "externalTerminal");
    json run = c.reverse_request("runInTerminal");
    CHECK(run["arguments"]["kind"] == "external");
    c.reply(run, false, nullptr, "no terminal program configured");
    json r = c.response(launch);
    CHECK(r["success"] == false);
    CHECK(r["message"].get<std::string>().find("no terminal program configured") !=
          std::string::npos);
    // No empty trace is left behind.
    for (const auto& e : std::filesystem::directory_iterator(traces))
      CHECK(e.path().filename().string().rfind("sh-", 0) != 0);
    c.check_schema();
  }

  SECTION("a client without runInTerminal gets the output as events, and is told why") {
    test::DapClient c(REWIND_BIN);
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json launch_args = program;
    launch_args["console"] = "integratedTerminal";
    REQUIRE(c.request("launch", launch_args)["success"] == true);
    std::string out, console;
    for (const json& o : c.seen("output")) {
      if (o["body"]["category"] == "stdout") out += o["body"]["output"].get<std::string>();
      if (o["body"]["category"] == "console") console += o["body"]["output"].get<std::string>();
    }
    CHECK(out == "foo=bar home=unset\n/usr\n");
    CHECK(console.find("does not support runInTerminal") != std::string::npos);
    c.check_schema();
  }

  SECTION("a disconnect while the terminal records stops the program and keeps the trace") {
    test::DapClient c(REWIND_BIN);
    int launch =
        launch_in_terminal(c, {{"program", "/bin/sleep"}, {"args", {"600"}}}, "integratedTerminal");
    json run = c.reverse_request("runInTerminal");
    std::vector<std::string> argv = run["arguments"]["args"];
    std::string status_file = *(std::find(argv.begin(), argv.end(), "--status-file") + 1);
    pid_t terminal = run_in_fake_terminal(run["arguments"], screen);
    c.reply(run, true, {{"processId", terminal}});
    std::string trace_dir = *(std::find(argv.begin(), argv.end(), "-o") + 1);
    // rewind record runs, and has started the program: it writes the trace's version file
    // after it starts passing SIGTERM on to the program. (A SIGTERM before that ends rewind
    // itself, and the launch fails instead. Its files/ directory comes earlier: waiting for
    // a non-empty trace directory raced with that under ASan.)
    auto started = [&] {
      return access(status_file.c_str(), F_OK) == 0 &&
             std::filesystem::exists(trace_dir + "/" + rwd::kVersionFile);
    };
    for (int i = 0; i < 400 && !started(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(started());
    int disconnect = c.send("disconnect");
    json r = c.response(launch);
    CHECK(r["success"] == true);  // the trace so far is debuggable
    CHECK(c.response(disconnect)["success"] == true);
    int status = 0;
    REQUIRE(waitpid(terminal, &status, 0) == terminal);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGTERM);  // sleep was stopped, not left running
    bool kept = false;
    for (const auto& e : std::filesystem::directory_iterator(traces))
      kept |= e.path().filename().string().rfind("sleep-", 0) == 0 &&
              std::filesystem::exists(e.path() / "processes");
    CHECK(kept);
  }

  SECTION("an unknown console is refused") {
    test::DapClient c(REWIND_BIN);
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json launch_args = program;
    launch_args["console"] = "printer";
    json r = c.request("launch", launch_args);
    CHECK(r["success"] == false);
    CHECK(r["message"].get<std::string>().find("unknown console \"printer\"") != std::string::npos);
  }
  std::system(("rm -rf " + traces).c_str());
}
