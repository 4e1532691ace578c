// Source paths as real builds write them (issue 30): a program compiled out of source
// (`cd build && gcc ../src/history.c`: DWARF names "../src/history.c" against the build
// directory), through a path holding "..", from a symbolic link to the source tree, and by
// CMake and Meson out of source. Over
// DAP, a line breakpoint set with the file's plain absolute path binds and is hit in each, and
// the stop names the file without "..". Sources moved since the recording are found through
// the launch's sourceMap or substitutePath.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/dap/dap_client.h"
#include "tests/support/source_line.h"

using nlohmann::json;

namespace {

/// The program's text (tests/programs/path_history.c), copied into each project.
std::string program_text() {
  std::ifstream in(PATH_HISTORY_C);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
const int kAddLine = test::line_of(PATH_HISTORY_C, "total += v;");

struct Build {
  std::string name;          // for messages
  std::string command;       // run in the project directory; makes ./prog
  std::string stop_path;     // the path the stop must name
  std::string request_path;  // the path the breakpoint is set by
};

/// Sends configurationDone and returns the innermost frame of the stop that follows, checked
/// to be the breakpoint at kAddLine.
json run_to_breakpoint(test::DapClient& c) {
  REQUIRE(c.request("configurationDone")["success"] == true);
  json stop = c.event("stopped");
  CHECK(stop["body"]["reason"] == "breakpoint");
  json frame =
      c.request("stackTrace", {{"threadId", stop["body"]["threadId"]}})["body"]["stackFrames"][0];
  CHECK(frame["line"] == kAddLine);
  return frame;
}

}  // namespace

TEST_CASE("line breakpoints bind in out-of-source, '..' and symlinked builds", "[dap][paths]") {
  char tmpl[] = "/tmp/rewind-paths.XXXXXX";
  std::string proj = mkdtemp(tmpl);
  std::filesystem::create_directories(proj + "/src");
  std::filesystem::create_directories(proj + "/build");
  std::ofstream(proj + "/src/history.c") << program_text();
  std::ofstream(proj + "/src/CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.13)\nproject(history C)\nadd_executable(prog "
         "history.c)\n";
  std::ofstream(proj + "/src/meson.build")
      << "project('history', 'c')\nexecutable('prog', 'history.c')\n";
  REQUIRE(symlink((proj + "/src").c_str(), (proj + "/link").c_str()) == 0);
  std::string real = proj + "/src/history.c";
  std::vector<Build> builds = {
      {"gcc, out of source", "cd build && gcc -g -O0 ../src/history.c -o ../prog", real, real},
      {"gcc, a path with ..", "gcc -g -O0 " + proj + "/build/../src/./history.c -o prog", real,
       real},
      {"gcc, through a symlinked tree", "gcc -g -O0 " + proj + "/link/history.c -o prog",
       proj + "/link/history.c", real},
      {"gcc, the real tree asked for through the link", "gcc -g -O0 " + real + " -o prog", real,
       proj + "/link/history.c"},
  };
  // Real build systems, out of source: CMake passes absolute paths; Meson compiles
  // "../src/history.c" from its build directory (scripts/install-deps.sh installs both).
  builds.push_back(
      {"CMake, Debug, out of source",
       "rm -rf build-cmake && cmake -S src -B build-cmake -DCMAKE_BUILD_TYPE=Debug "
       ">/dev/null && cmake --build build-cmake >/dev/null && cp build-cmake/prog prog",
       real, real});
  builds.push_back(
      {"Meson, debug, out of source",
       "rm -rf build-meson && meson setup --buildtype=debug build-meson src >/dev/null "
       "&& ninja -C build-meson >/dev/null && cp build-meson/prog prog",
       real, real});
  if (std::system("command -v clang >/dev/null 2>&1") == 0)
    builds.push_back({"clang, out of source",
                      "cd build && clang -g -O0 ../src/history.c -o ../prog", real, real});
  for (const Build& b : builds) {
    INFO(b.name);
    REQUIRE(std::system(("cd " + proj + " && " + b.command).c_str()) == 0);
    std::string trace = proj + "/trace";
    std::filesystem::remove_all(trace);
    REQUIRE(std::system((std::string(REWIND_BIN) + " record -o " + trace + " " + proj +
                         "/prog >/dev/null 2>&1")
                            .c_str()) == 0);
    test::DapClient c(REWIND_BIN);
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
    c.event("initialized");
    json set = c.request("setBreakpoints", {{"source", {{"path", b.request_path}}},
                                            {"breakpoints", {{{"line", kAddLine}}}}});
    REQUIRE(set["success"] == true);
    CHECK(set["body"]["breakpoints"][0]["verified"] == true);
    CHECK(set["body"]["breakpoints"][0]["line"] == kAddLine);
    json frame = run_to_breakpoint(c);
    CHECK(frame["source"]["path"] == b.stop_path);
    CHECK(c.request("evaluate",
                    {{"expression", "v"}, {"frameId", frame["id"]}})["body"]["result"] == "0");
    c.request("disconnect");
    c.check_schema();
  }
  std::filesystem::remove_all(proj);
}

TEST_CASE("sourceMap and substitutePath: sources moved since the recording", "[dap][paths]") {
  char tmpl[] = "/tmp/rewind-paths.XXXXXX";
  std::string proj = mkdtemp(tmpl);
  std::filesystem::create_directories(proj + "/src");
  std::ofstream(proj + "/src/history.c") << program_text();
  REQUIRE(std::system(
              ("cd " + proj + " && gcc -g -O0 " + proj + "/src/history.c -o prog").c_str()) == 0);
  std::string trace = proj + "/trace";
  REQUIRE(std::system((std::string(REWIND_BIN) + " record -o " + trace + " " + proj +
                       "/prog >/dev/null 2>&1")
                          .c_str()) == 0);
  // The tree moves (a checkout elsewhere, another machine): the recording names the old path.
  std::filesystem::rename(proj + "/src", proj + "/moved");
  const std::string here = proj + "/moved/history.c";
  const json forms[] = {
      {{"sourceMap", {{proj + "/src", proj + "/moved"}}}},
      {{"substitutePath", {{{"from", proj + "/src/"}, {"to", proj + "/moved"}}}}},
  };
  for (const json& form : forms) {
    INFO(form.dump());
    test::DapClient c(REWIND_BIN);
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json args = form;
    args["mode"] = "replay";
    args["trace"] = trace;
    REQUIRE(c.request("launch", args)["success"] == true);
    c.event("initialized");
    json set = c.request("setBreakpoints",
                         {{"source", {{"path", here}}}, {"breakpoints", {{{"line", kAddLine}}}}});
    REQUIRE(set["success"] == true);
    CHECK(set["body"]["breakpoints"][0]["verified"] == true);
    CHECK(set["body"]["breakpoints"][0]["source"]["path"] == here);
    json frame = run_to_breakpoint(c);
    CHECK(frame["source"]["path"] == here);
    json content = c.request("source", {{"source", {{"path", here}}}});
    REQUIRE(content["success"] == true);
    CHECK(content["body"]["content"] == program_text());
    bool listed = false;
    json loaded = c.request("loadedSources");
    INFO(loaded.dump());
    for (const json& s : loaded["body"]["sources"]) listed |= s["path"] == here;
    CHECK(listed);
    c.request("disconnect");
    c.check_schema();
  }
  // Without the map the moved file is unknown: the breakpoint does not bind.
  {
    test::DapClient c(REWIND_BIN);
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    REQUIRE(c.request("launch", {{"mode", "replay"}, {"trace", trace}})["success"] == true);
    c.event("initialized");
    json set = c.request("setBreakpoints",
                         {{"source", {{"path", here}}}, {"breakpoints", {{{"line", kAddLine}}}}});
    CHECK(set["body"]["breakpoints"][0]["verified"] == false);
    // A map with a relative path is refused, naming it.
    test::DapClient bad(REWIND_BIN);
    REQUIRE(bad.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json r = bad.request(
        "launch",
        {{"mode", "replay"}, {"trace", trace}, {"sourceMap", {{"build", proj + "/moved"}}}});
    CHECK(r["success"] == false);
    CHECK(r["message"].get<std::string>().find("\"build\"") != std::string::npos);
  }
  std::filesystem::remove_all(proj);
}
