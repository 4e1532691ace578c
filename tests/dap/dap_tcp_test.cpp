// `rewind dap --listen`, over real TCP sockets on this machine: clients one after another,
// attach to a trace, and the security rules of docs/dap.md "Security": every client gives a
// token (given with --token or --token-file, or made by the server in a private file) before
// anything else is served, traces only from the server's traces directory, a client that
// stays silent is dropped after 10 s, and a second client is told at once that the server is
// busy.
#include <ifaddrs.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <utility>

#include "tests/dap/dap_client.h"
#include "tests/support/recorded_trace.h"

using nlohmann::json;

namespace {

/// A non-loopback IPv4 address of this machine, "" when it has none.
std::string other_address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* a = list; a && found.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char buf[64];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, buf, sizeof buf);
    if (std::string(buf).rfind("127.", 0) != 0) found = buf;
  }
  freeifaddrs(list);
  return found;
}

bool can_connect(const std::string& ip, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

/// Reads the server's log until a line holding one of `texts`; fails at its end.
void wait_for_line(test::DapServer& server, const std::vector<std::string>& texts) {
  for (;;) {
    std::string line = server.read_line();
    REQUIRE(!line.empty());
    for (const auto& text : texts)
      if (line.find(text) != std::string::npos) return;
  }
}

/// The directory holding `trace` (the traces root the tests give the server).
std::string parent_of(const std::string& trace) {
  return trace.substr(0, trace.rfind('/'));
}

/// initialize, then attach to `trace` with `token`; returns the attach response.
json attach(test::DapClient& c, const std::string& trace, const std::string& token) {
  REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
  json args = {{"trace", trace}, {"stopOnEntry", true}};
  if (!token.empty()) args["token"] = token;
  return c.request("attach", args);
}

}  // namespace

TEST_CASE("a loopback server serves one client after another", "[dap][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapServer server(REWIND_BIN, "0", {}, {{"REWIND_TRACE_DIR", parent_of(trace)}});
  REQUIRE(server.port() > 0);
  CHECK(server.first_line() ==
        "rewind: DAP server listening on 127.0.0.1:" + std::to_string(server.port()));
  std::string ip = other_address();
  if (!ip.empty()) CHECK_FALSE(can_connect(ip, server.port()));  // bound to loopback only
  // Without --token the server made one: 128 random bits in a file only its user can read.
  CHECK(server.token_file() ==
        parent_of(trace) + "/dap-" + std::to_string(server.port()) + ".token");
  CHECK(server.token().size() == 32);
  CHECK(server.token().find_first_not_of("0123456789abcdef") == std::string::npos);
  struct stat st;
  REQUIRE(stat(server.token_file().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // By name in the traces directory, then by its absolute path.
  for (const std::string& name : {std::string("trace"), trace}) {
    test::DapClient c(server.port());
    json attached = attach(c, name, server.token());
    INFO(attached.dump());
    REQUIRE(attached["success"] == true);
    CHECK(c.event("process")["body"]["startMethod"] == "attach");
    c.event("initialized");
    REQUIRE(c.request("configurationDone")["success"] == true);
    CHECK(c.event("stopped")["body"]["reason"] == "entry");
    json threads = c.request("threads");
    CHECK(threads["body"]["threads"].size() == 1);
    // Sources come through the adapter: the client may be on another machine.
    json st = c.request("stackTrace", {{"threadId", threads["body"]["threads"][0]["id"]}});
    REQUIRE(c.request("setFunctionBreakpoints",
                      {{"breakpoints", {{{"name", "loop_sum"}}}}})["success"] == true);
    REQUIRE(c.request("continue")["success"] == true);
    c.event("stopped");
    json frame =
        c.request("stackTrace",
                  {{"threadId", threads["body"]["threads"][0]["id"]}})["body"]["stackFrames"][0];
    REQUIRE(frame["source"].contains("sourceReference"));
    json src = c.request("source", {{"source", frame["source"]},
                                    {"sourceReference", frame["source"]["sourceReference"]}});
    REQUIRE(src["success"] == true);
    CHECK(src["body"]["content"].get<std::string>().find("int loop_sum(int n)") !=
          std::string::npos);
    REQUIRE(c.request("disconnect")["success"] == true);
    CHECK(c.closed());
    c.check_schema();
  }
}

TEST_CASE("every client of a TCP server must give its token first", "[dap][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  std::vector<std::pair<std::string, std::string>> env = {{"REWIND_TRACE_DIR", parent_of(trace)}};
  // On any address, with the token it made or one it was given.
  test::DapServer made(REWIND_BIN, "0.0.0.0:0", {}, env);
  REQUIRE(made.port() > 0);
  REQUIRE(!made.token().empty());
  test::DapServer server(REWIND_BIN, "0.0.0.0:0", {"--token", "s3cret"}, env);
  REQUIRE(server.port() > 0);
  for (int port : {made.port(), server.port()}) {
    test::DapClient c(port);
    json attached = attach(c, trace, "");
    CHECK(attached["success"] == false);
    CHECK(attached["message"] == "this rewind server needs a \"token\": connection refused");
    CHECK(c.closed());
    c.check_schema();
  }
  // Before the token, nothing is served: not a file, not the threads of another session.
  for (const auto& [command, args] :
       {std::pair<std::string, json>{"source", {{"source", {{"path", "/etc/passwd"}}}}},
        {"threads", json::object()},
        {"rewind/timeline", json::object()}}) {
    INFO(command);
    test::DapClient c(server.port());
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json r = c.request(command, args);
    CHECK(r["success"] == false);
    CHECK(r["message"] ==
          "this rewind server needs a \"token\" in launch or attach before any other request: "
          "connection refused");
    CHECK(r.dump().find("root:") == std::string::npos);
    CHECK(c.closed());
    c.check_schema();
  }
  for (int port : {made.port(), server.port()}) {
    test::DapClient c(port);
    json attached = attach(c, trace, "guess");
    CHECK(attached["success"] == false);
    CHECK(attached["message"] == "wrong token: connection refused");
    CHECK(c.closed());
  }
  for (const auto& [port, token] :
       {std::pair<int, std::string>{made.port(), made.token()}, {server.port(), "s3cret"}}) {
    test::DapClient c(port);
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json launch = c.request("launch", {{"mode", "replay"}, {"trace", trace}, {"token", token}});
    REQUIRE(launch["success"] == true);
    c.event("initialized");
    REQUIRE(c.request("configurationDone")["success"] == true);
    c.event("stopped");
    CHECK(c.request("threads")["success"] == true);
    REQUIRE(c.request("disconnect")["success"] == true);
    CHECK(c.closed());
    c.check_schema();
  }
}

TEST_CASE("--token-file reads the token from a file only its owner can read", "[dap][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  std::string file = parent_of(trace) + "/my.token";
  std::ofstream(file) << "  from-a-file  \nsecond line ignored\n";
  chmod(file.c_str(), 0644);
  {
    test::DapServer exposed(REWIND_BIN, "0", {"--token-file", file});
    CHECK(exposed.port() == 0);
    CHECK(exposed.first_line() == "rewind: the token file " + file +
                                      " can be read by other users: make it private (chmod 600 " +
                                      file + ")");
    CHECK(WEXITSTATUS(exposed.wait_exit()) != 0);
  }
  chmod(file.c_str(), 0600);
  test::DapServer server(REWIND_BIN, "0", {"--token-file", file},
                         {{"REWIND_TRACE_DIR", parent_of(trace)}});
  REQUIRE(server.port() > 0);
  {
    test::DapClient c(server.port());
    CHECK(attach(c, trace, "from-a-file")["success"] == true);
  }
  // The token options belong to --listen: over stdin/stdout the editor is trusted.
  CHECK(WEXITSTATUS(std::system((std::string(REWIND_BIN) + " dap --token x </dev/null "
                                                           ">/dev/null 2>&1")
                                    .c_str())) == 2);
  std::remove(file.c_str());
}

TEST_CASE("a TCP server opens only the traces in its traces directory", "[dap][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  char tmpl[] = "/tmp/rewind-test-root.XXXXXX";
  std::string root = mkdtemp(tmpl);
  REQUIRE(std::system(("cp -r " + trace + " " + root + "/inside").c_str()) == 0);
  REQUIRE(symlink(trace.c_str(), (root + "/link-out").c_str()) == 0);
  test::DapServer server(REWIND_BIN, "0", {}, {{"REWIND_TRACE_DIR", root}});
  REQUIRE(server.port() > 0);
  // Outside, missing, or not a trace: the same answer, so nothing of the file system shows.
  for (const std::string& name :
       {trace, std::string("../../etc"), std::string("/etc"), std::string("/tmp"),
        std::string("missing"), std::string("link-out"), std::string("inside/..")}) {
    INFO(name);
    test::DapClient c(server.port());
    json r = attach(c, name, server.token());
    CHECK(r["success"] == false);
    CHECK(r["message"] == "no trace '" + name + "' among this server's traces (" + root +
                              "; a server started with --allow-any-trace opens others)");
    c.request("disconnect");
    c.check_schema();
  }
  {
    test::DapClient c(server.port());
    json r = attach(c, "inside", server.token());
    CHECK(r["success"] == true);
    c.request("disconnect");
  }
  test::DapServer any(REWIND_BIN, "0", {"--allow-any-trace"}, {{"REWIND_TRACE_DIR", root}});
  {
    test::DapClient c(any.port());
    json r = attach(c, trace, any.token());
    CHECK(r["success"] == true);
    c.request("disconnect");
  }
  std::system(("rm -rf " + root).c_str());
}

TEST_CASE("a silent client is dropped after 10 s; a second client hears busy at once",
          "[dap][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapServer server(REWIND_BIN, "0", {}, {{"REWIND_TRACE_DIR", parent_of(trace)}});
  REQUIRE(server.port() > 0);
  test::DapClient silent(server.port());
  CHECK(server.read_line().find("connected") != std::string::npos);
  // While the silent one holds the server, another is answered, not left waiting.
  {
    test::DapClient second(server.port());
    json r = second.request("initialize", {{"adapterID", "rewind"}});
    CHECK(r["success"] == false);
    CHECK(r["message"].get<std::string>().find("this rewind server is busy with another client") ==
          0);
    CHECK(second.closed());
    second.check_schema();
  }
  // The silent client is told why and dropped.
  CHECK(silent.closed());
  std::vector<json> said = silent.seen("output");
  REQUIRE(said.size() == 1);
  CHECK(said[0]["body"]["output"] ==
        "rewind: no token within 10 s of connecting: connection closed\n");
  silent.check_schema();
  wait_for_line(server, {"no token within"});
  // A client that sends a burst and hangs up without reading does not kill the server.
  {
    test::DapClient rude(server.port());
    for (int i = 0; i < 200; ++i) rude.send("initialize", {{"adapterID", "rewind"}});
  }
  // Its session ended (reset or read to its end): the server is free again.
  wait_for_line(server, {"dropped", " disconnected"});
  test::DapClient next(server.port());
  CHECK(attach(next, trace, server.token())["success"] == true);
  next.request("disconnect");
}
