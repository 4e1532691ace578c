// `rewind dap --listen`: clients one after another over TCP, attach to a trace, and the
// loopback and token rules (a server on another address needs a token; a client without
// it, or with a wrong one, is refused and its connection closed).
#include <ifaddrs.h>

#include <catch2/catch.hpp>
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

}  // namespace

TEST_CASE("a loopback server serves one client after another", "[dap][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  test::DapServer server(REWIND_BIN, "0");
  REQUIRE(server.port() > 0);
  CHECK(server.first_line() ==
        "rewind: DAP server listening on 127.0.0.1:" + std::to_string(server.port()));
  std::string ip = other_address();
  if (!ip.empty()) CHECK_FALSE(can_connect(ip, server.port()));  // bound to loopback only
  for (int round = 0; round < 2; ++round) {
    test::DapClient c(server.port());
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json attach = c.request("attach", {{"trace", trace}, {"stopOnEntry", true}});
    REQUIRE(attach["success"] == true);
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

TEST_CASE("a server on a non-loopback address needs a token from every client", "[dap][tcp]") {
  std::string trace = test::recorded_trace(REWIND_BIN, DEMO);
  {
    test::DapServer refused(REWIND_BIN, "0.0.0.0:0");
    CHECK(refused.port() == 0);
    CHECK(refused.first_line().find("needs --token") != std::string::npos);
    int status = refused.wait_exit();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) != 0);
  }
  test::DapServer server(REWIND_BIN, "0.0.0.0:0", {"--token", "s3cret"});
  REQUIRE(server.port() > 0);
  {
    test::DapClient c(server.port());
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json attach = c.request("attach", {{"trace", trace}});
    CHECK(attach["success"] == false);
    CHECK(attach["message"] == "this rewind server needs a \"token\": connection refused");
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
  {
    test::DapClient c(server.port());
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json attach = c.request("attach", {{"trace", trace}, {"token", "guess"}});
    CHECK(attach["success"] == false);
    CHECK(attach["message"] == "wrong token: connection refused");
    CHECK(c.closed());
  }
  {
    test::DapClient c(server.port());
    REQUIRE(c.request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    json launch = c.request("launch", {{"mode", "replay"}, {"trace", trace}, {"token", "s3cret"}});
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
