#include "adapter/dap/dap_server.h"

#include <unistd.h>

#include <asio/ip/tcp.hpp>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <optional>
#include <thread>

#include "adapter/dap/dap_wire.h"

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

}  // namespace

std::string serve_dap_session(int in_fd, int out_fd, const DapSessionOptions& opts) {
  bool gone = false;  // the client stopped reading: drop what is left to say
  DapSession session(
      [&](const json& msg) {
        if (gone) return;
        try {
          write_dap_message(out_fd, msg.dump(-1, ' ', false, json::error_handler_t::replace));
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
    try {
      while (auto body = in.next()) {
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

void serve_dap_tcp(const std::string& host, uint16_t port, const DapSessionOptions& opts,
                   int max_sessions) {
  if (!is_loopback_host(host) && opts.token.empty())
    throw Error("listening on " + host +
                " (not a loopback address) needs --token: anyone who can reach the port could "
                "read the recorded program's memory");
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
  std::fprintf(stderr, "rewind: DAP server listening on %s:%u\n", host.c_str(),
               unsigned(acceptor.local_endpoint().port()));
  std::fflush(stderr);
  for (int served = 0; max_sessions == 0 || served < max_sessions; ++served) {
    asio::ip::tcp::socket socket(io);
    acceptor.accept(socket, ec);
    if (ec) throw Error("accept: " + ec.message());
    auto peer = socket.remote_endpoint(ec);
    std::string who = ec ? "?" : peer.address().to_string() + ":" + std::to_string(peer.port());
    std::fprintf(stderr, "rewind: DAP client %s connected\n", who.c_str());
    int fd = socket.native_handle();
    std::string broken = serve_dap_session(fd, fd, opts);
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket.close(ec);
    std::fprintf(stderr, "rewind: DAP client %s %s\n", who.c_str(),
                 broken.empty() ? "disconnected" : ("dropped: " + broken).c_str());
  }
}

}  // namespace rwd
