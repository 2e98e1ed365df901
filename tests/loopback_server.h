// A blocking loopback TCP server on a thread of its own, for tests that need a real peer with
// scripted behaviour (a WebSocket or HTTP server written with Beast's server side): it accepts
// connections one after another and hands each socket to the session function.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <thread>

namespace pf::test {

class LoopbackServer {
 public:
  using Session = std::function<void(boost::asio::ip::tcp::socket&)>;
  explicit LoopbackServer(Session session)
      : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this, session] {
      for (;;) {
        boost::asio::ip::tcp::socket socket(io_);
        boost::system::error_code ec;
        acceptor_.accept(socket, ec);
        if (ec || stop_) return;
        ++connections_;
        session(socket);
      }
    });
  }
  ~LoopbackServer() {
    // A blocking accept is not woken by close() from another thread: connect to end it.
    stop_ = true;
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket wake(io);
    boost::system::error_code ec;
    wake.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;
  unsigned short port() const { return port_; }
  int connections() const { return connections_; }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace pf::test
