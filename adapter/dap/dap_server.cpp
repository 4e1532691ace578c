#include "adapter/dap/dap_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <asio/ip/tcp.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_channel.h"
#include "adapter/dap/dap_token.h"
#include "adapter/dap/dap_wire.h"
#include "engine/trace/trace_dir.h"

namespace rwd {

using nlohmann::json;

namespace {

/// Messages read ahead of the handling thread.
class Inbox {
 public:
  void push(std::optional<std::string> m) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(m));
    }
    cv_.notify_one();
  }
  /// The next message; nullopt once input ended.
  std::optional<std::string> pop() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty(); });
    auto m = std::move(queue_.front());
    queue_.pop_front();
    return m;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::optional<std::string>> queue_;
};

/// The message log of DapSessionOptions::log_file; does nothing without a file.
class MessageLog {
 public:
  explicit MessageLog(const std::string& path) {
    if (path.empty()) return;
    file_ = std::fopen(path.c_str(), "a");
    if (!file_)
      std::fprintf(stderr, "rewind: dap: cannot write the message log %s: %s\n", path.c_str(),
                   std::strerror(errno));
  }
  ~MessageLog() {
    if (file_) std::fclose(file_);
  }
  MessageLog(const MessageLog&) = delete;
  MessageLog& operator=(const MessageLog&) = delete;
  /// Appends `body` with its direction (thread-safe: the reading thread logs too).
  void add(const char* direction, const std::string& body) {
    if (!file_) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start_)
                  .count();
    std::fprintf(file_, "%lld %s %s\n", static_cast<long long>(ms), direction, body.c_str());
    std::fflush(file_);
  }

 private:
  std::FILE* file_ = nullptr;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

std::string serve_dap_session(int in_fd, int out_fd, const DapSessionOptions& opts) {
  bool gone = false;  // the client stopped reading: drop what is left to say
  MessageLog log(opts.log_file);
  DapSession session(
      [&](const json& msg) {
        if (gone) return;
        try {
          std::string body = msg.dump(-1, ' ', false, json::error_handler_t::replace);
          log.add("<--", body);
          write_dap_message(out_fd, body);
        } catch (const Error&) {
          gone = true;
        }
      },
      opts);
  int wake[2];
  if (pipe(wake) != 0) throw_errno("pipe");
  Inbox inbox;
  std::string broken;
  std::thread reader([&] {
    DapReader in(in_fd, wake[0]);
    if (opts.auth_timeout_ms > 0)
      in.set_deadline(
          std::chrono::steady_clock::now() + std::chrono::milliseconds(opts.auth_timeout_ms),
          [&] { return !session.authenticated(); },
          "no token within " + std::to_string(opts.auth_timeout_ms / 1000) +
              " s of connecting: connection closed");
    try {
      while (auto body = in.next()) {
        log.add("-->", *body);
        session.on_arrival(*body);
        inbox.push(std::move(*body));
      }
    } catch (const Error& e) {
      broken = e.what();
    }
    session.on_client_gone();
    inbox.push(std::nullopt);
  });
  while (auto body = inbox.pop())
    if (!session.handle(*body)) break;
  (void)!write(wake[1], "x", 1);
  reader.join();
  // A client dropped for want of a token hears why (the last message it gets).
  if (!broken.empty() && !session.authenticated()) session.tell("rewind: " + broken + "\n");
  close(wake[0]);
  close(wake[1]);
  return broken;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  asio::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

namespace {

/// Clients turned away at once, each on its own short-lived thread, at most this many at a
/// time (more are closed without an answer).
constexpr int kMaxBusyAnswers = 8;
std::atomic<int> busy_answers = 0;

/// Answers a client that connected while another is served: its first request (read for at
/// most 2 s) gets an error response saying so, then the connection closes. Owns `fd`.
void answer_busy(int fd, std::string served) {
  std::string message = "this rewind server is busy with another client (" + served +
                        "): connect again when it has disconnected";
  try {
    DapReader in(fd);
    in.set_deadline(
        std::chrono::steady_clock::now() + std::chrono::seconds(2), [] { return true; },
        "no request");
    json req = json::parse(in.next().value_or("{}"), nullptr, false);
    std::optional<int64_t> seq = message_seq(req);
    std::string command = string_member(req, "command");
    if (string_member(req, "type") == "request" && seq && *seq > 0) {
      json r = error_response(*seq, command.empty() ? "initialize" : command, message);
      r["seq"] = 1;
      write_dap_message(fd, r.dump(-1, ' ', false, json::error_handler_t::replace));
    } else {
      write_dap_message(fd, json{{"seq", 1},
                                 {"type", "event"},
                                 {"event", "output"},
                                 {"body", {{"category", "important"}, {"output", message + "\n"}}}}
                                .dump());
    }
  } catch (const Error&) {
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  --busy_answers;
}

}  // namespace

void serve_dap_tcp(const std::string& host, uint16_t port, DapSessionOptions opts) {
  asio::io_context io;
  asio::error_code ec;
  auto addr = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) throw Error("\"" + host + "\" is not an IP address");
  asio::ip::tcp::acceptor acceptor(io);
  asio::ip::tcp::endpoint endpoint(addr, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw Error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  uint16_t bound = acceptor.local_endpoint().port();
  // Every client authenticates: without a token given, a fresh one in a private file.
  std::string token_file;
  if (opts.token.empty()) {
    opts.token = random_token();
    token_file = write_token_file(traces_root(), bound, opts.token);
  }
  if (opts.auth_timeout_ms == 0) opts.auth_timeout_ms = 10000;
  std::fprintf(stderr, "rewind: DAP server listening on %s:%u\n", host.c_str(), unsigned(bound));
  if (!token_file.empty())
    std::fprintf(stderr,
                 "rewind: clients must give the token held in %s (\"token\" in launch or "
                 "attach)\n",
                 token_file.c_str());
  std::fflush(stderr);
  std::atomic<bool> busy = false;
  std::string served;  // the client being served, for the busy answer
  std::thread session;
  for (;;) {
    asio::ip::tcp::socket socket(io);
    acceptor.accept(socket, ec);
    if (ec) throw Error("accept: " + ec.message());
    auto peer = socket.remote_endpoint(ec);
    std::string who = ec ? "?" : peer.address().to_string() + ":" + std::to_string(peer.port());
    int fd = ::dup(socket.native_handle());
    socket.close(ec);
    if (fd < 0) continue;
    if (busy) {
      std::fprintf(stderr, "rewind: DAP client %s turned away: busy with %s\n", who.c_str(),
                   served.c_str());
      if (busy_answers < kMaxBusyAnswers) {
        ++busy_answers;
        std::thread(answer_busy, fd, served).detach();
      } else {
        ::close(fd);
      }
      continue;
    }
    if (session.joinable()) session.join();
    busy = true;
    served = who;
    std::fprintf(stderr, "rewind: DAP client %s connected\n", who.c_str());
    session = std::thread([fd, who, &opts, &busy] {
      std::string broken;
      try {
        broken = serve_dap_session(fd, fd, opts);
      } catch (const Error& e) {
        broken = e.what();
      }
      // Free before the client sees the connection end: it may connect again at once, and
      // must not be turned away as busy. The accept loop joins this thread before it serves
      // the next client, so this session's descriptor is closed by then.
      busy = false;
      ::shutdown(fd, SHUT_RDWR);
      ::close(fd);
      std::fprintf(stderr, "rewind: DAP client %s %s\n", who.c_str(),
                   broken.empty() ? "disconnected" : ("dropped: " + broken).c_str());
    });
  }
}

}  // namespace rwd
