// The HTTP client's streamed reads (net/http_client.h) against a raw loopback peer that writes
// exactly the bytes a test scripts: a body reaches on_body as it arrives, chunked or with a
// length, whatever the read boundaries; on_body saying stop closes the connection; a failure's
// headers are kept and its body is cut at 64 KiB.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "loopback_server.h"
#include "net/http_client.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Reads one request's head, then writes each piece of `pieces` with a pause between them, so
// that the client meets the body in several reads.
test::LoopbackServer::Session answer_with(std::vector<std::string> pieces) {
  return [pieces](tcp::socket& socket) {
    asio::streambuf head;
    boost::system::error_code ec;
    asio::read_until(socket, head, "\r\n\r\n", ec);
    for (const std::string& p : pieces) {
      asio::write(socket, asio::buffer(p), ec);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    socket.close(ec);
  };
}

HttpRequest request_to(unsigned short port) {
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions";
  req.body = "{}";
  req.timeout = std::chrono::milliseconds(5000);
  return req;
}

TEST(HttpClientStream, AChunkedBodyReachesTheSinkWholeAndInOrder) {
  test::LoopbackServer server(answer_with({
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
      "6\r\ndata: \r\n",
      "3\r\none\r\n",
      "2\r\n\n\n\r\n7\r\ndata: t",  // a chunk cut in two
      "\r\n4\r\nwo\n\n\r\n0\r\n\r\n",
  }));
  std::string got;
  int pieces = 0;
  HttpResponse r = http_stream(request_to(server.port()), [&](std::string_view bytes) {
    got += bytes;
    ++pieces;
    return true;
  });
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(got, "data: one\n\ndata: two\n\n");
  EXPECT_GE(pieces, 2);  // as it arrived, not at the end
  EXPECT_TRUE(r.body.empty());
  EXPECT_TRUE(r.headers.empty());  // a stream's headers are not kept
}

TEST(HttpClientStream, ABodyWithALengthEndsAtItsLength) {
  test::LoopbackServer server(answer_with({
      "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello",
      " world",
      "and bytes past the length",
  }));
  std::string got;
  HttpResponse r = http_stream(request_to(server.port()), [&](std::string_view bytes) {
    got += bytes;
    return true;
  });
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(got, "hello world");
}

TEST(HttpClientStream, ASinkThatSaysStopEndsTheExchange) {
  std::string rest(200 * 1024, 'x');
  test::LoopbackServer server(answer_with({
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(5 + rest.size()) + "\r\n\r\nfirst",
      rest,
  }));
  std::string got;
  int calls = 0;
  auto t0 = std::chrono::steady_clock::now();
  HttpResponse r = http_stream(request_to(server.port()), [&](std::string_view bytes) {
    got += bytes;
    ++calls;
    return false;
  });
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(calls, 1);  // never called again after it said stop
  EXPECT_LT(got.size(), 64 * 1024u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4));
}

TEST(HttpClientStream, AFailureKeepsItsHeadersAndTheStartOfItsBody) {
  std::string huge = "{\"error\": {\"message\": \"slow down\"}}" + std::string(1 << 20, ' ');
  test::LoopbackServer server(answer_with({
      "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: " +
          std::to_string(huge.size()) + "\r\n\r\n",
      huge.substr(0, 1000),
      huge.substr(1000),
  }));
  bool sink_called = false;
  HttpResponse r = http_stream(request_to(server.port()), [&](std::string_view) {
    sink_called = true;
    return true;
  });
  EXPECT_EQ(r.status, 429);
  EXPECT_FALSE(sink_called);  // only a 2xx body is streamed
  EXPECT_EQ(r.header("retry-after"), "7");
  ASSERT_EQ(r.body.size(), 64 * 1024u);
  EXPECT_EQ(r.body.substr(0, 35), huge.substr(0, 35));
}

// The sink runs inside the read; what it throws must come out of the awaiting coroutine, never
// out of the io_context's loop (which would end a server's network thread).
TEST(HttpClientStream, WhatTheSinkThrowsComesOutOfTheCoroutine) {
  test::LoopbackServer server(answer_with({
      "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n",
      "data: x\n",
  }));
  asio::io_context io;
  std::function<bool(std::string_view)> sink = [](std::string_view) -> bool {
    throw std::runtime_error("the sink failed");
  };
  std::string caught;
  asio::co_spawn(io, async_http_stream(request_to(server.port()), sink),
                 [&](std::exception_ptr e, HttpResponse) {
                   try {
                     if (e) std::rethrow_exception(e);
                   } catch (const std::exception& ex) {
                     caught = ex.what();
                   }
                 });
  EXPECT_NO_THROW(io.run());
  EXPECT_NE(caught.find("the sink failed"), std::string::npos) << caught;
}

TEST(HttpClientStream, ABodyCutOffBeforeItsLengthIsAnError) {
  test::LoopbackServer server(answer_with({
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part",
  }));
  std::string got;
  EXPECT_THROW(http_stream(request_to(server.port()),
                           [&](std::string_view bytes) {
                             got += bytes;
                             return true;
                           }),
               NetError);
  EXPECT_EQ(got, "only part");
}

// Host names the port when it is not the scheme's default (RFC 9110 §7.2): servers build URLs
// from it (Slack's apps.connections.open answers a socket URL on the Host it was asked at).
TEST(HttpClient, TheHostHeaderNamesANonDefaultPort) {
  std::string seen;
  test::LoopbackServer server([&seen](tcp::socket& socket) {
    asio::streambuf head;
    boost::system::error_code ec;
    asio::read_until(socket, head, "\r\n\r\n", ec);
    seen.assign(asio::buffers_begin(head.data()), asio::buffers_end(head.data()));
    std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    asio::write(socket, asio::buffer(ok), ec);
    socket.close(ec);
  });
  HttpResponse r = http_request(request_to(server.port()));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(seen.find("\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n"),
            std::string::npos)
      << seen;
}

}  // namespace
}  // namespace pf
