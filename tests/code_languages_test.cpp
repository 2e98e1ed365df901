// Golden chunks for the other tree-sitter languages: Python, Go, Rust and Java.
#include <gtest/gtest.h>

#include <sstream>

#include "index/chunker.h"
#include "test_util.h"

namespace pf {
namespace {

std::string describe(const std::vector<Chunk>& chunks) {
  std::ostringstream o;
  for (auto& c : chunks)
    o << c.start_line << "-" << c.end_line << " " << c.chunk_type << " fn=" << c.function_name
      << " cls=" << c.class_name << " sym=" << c.symbol << "\n";
  return o.str();
}

TEST(CodeLanguages, Python) {
  const char* src = R"(import os

TIMEOUT = 30


# Retries a call.
@functools.wraps(fn)
def retry(fn, attempts=3):
    for _ in range(attempts):
        fn()


class Pool:
    """A pool of connections."""

    def acquire(self):
        return self.free.pop()
)";
  auto chunks = chunk_file("pool.py", detect_language("pool.py"), src);
  EXPECT_EQ(describe(chunks),
            "1-3 block fn= cls= sym=\n"
            "6-10 function fn=retry cls= sym=retry\n"
            "13-17 class fn= cls=Pool sym=Pool\n");
  test::expect_chunks_cover(src, chunks);
  EXPECT_EQ(chunks[1].language, "python");
}

TEST(CodeLanguages, PythonLargeClassSplitsPerMethod) {
  std::ostringstream s;
  s << "class Client(Base):\n    timeout = 10\n\n";
  for (int m = 0; m < 5; ++m) {
    s << "    @property\n    def method" << m << "(self):\n";
    for (int l = 0; l < 25; ++l) s << "        self.x += " << l << "\n";
    s << "\n";
  }
  std::string src = s.str();
  auto chunks = chunk_file("client.py", "python", src);
  test::expect_chunks_cover(src, chunks);
  int methods = 0;
  for (const auto& c : chunks) {
    EXPECT_LE(c.end_line - c.start_line + 1, 80);
    EXPECT_EQ(c.class_name, "Client");
    EXPECT_EQ(c.heading_path, "class Client(Base)");
    if (c.chunk_type == "method") {
      EXPECT_EQ(c.function_name, "method" + std::to_string(methods++));
      EXPECT_EQ(c.content.rfind("    @property", 0), 0u);  // the decorator stays with it
    }
  }
  EXPECT_EQ(methods, 5);
}

TEST(CodeLanguages, Go) {
  const char* src = R"(package server

import "net/http"

// Server serves requests.
type Server struct {
	addr string
}

// Start listens.
func (s *Server) Start() error {
	return http.ListenAndServe(s.addr, nil)
}

func New(addr string) *Server {
	return &Server{addr: addr}
}
)";
  auto chunks = chunk_file("server.go", detect_language("server.go"), src);
  EXPECT_EQ(describe(chunks),
            "1-3 block fn= cls= sym=\n"
            "5-8 type fn= cls= sym=Server\n"
            "10-13 method fn=Start cls=Server sym=Start\n"
            "15-17 function fn=New cls= sym=New\n");
  test::expect_chunks_cover(src, chunks);
}

TEST(CodeLanguages, Rust) {
  const char* src = R"(use std::fmt;

/// A cache entry.
pub struct Entry {
    key: String,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.key)
    }
}

pub fn evict(entries: &mut Vec<Entry>) {
    entries.clear();
}
)";
  auto chunks = chunk_file("cache.rs", detect_language("cache.rs"), src);
  EXPECT_EQ(describe(chunks),
            "1-1 block fn= cls= sym=\n"
            "3-6 type fn= cls= sym=Entry\n"
            "8-12 class fn= cls=Entry sym=Entry\n"
            "14-16 function fn=evict cls= sym=evict\n");
  test::expect_chunks_cover(src, chunks);
}

TEST(CodeLanguages, Java) {
  const char* src = R"(package com.example;

import java.util.List;

/** Holds users. */
public class UserRepository {
  private final List<User> users;

  public UserRepository(List<User> users) {
    this.users = users;
  }
}

interface Named {
  String name();
}
)";
  auto chunks = chunk_file("UserRepository.java", detect_language("UserRepository.java"), src);
  EXPECT_EQ(describe(chunks),
            "1-3 block fn= cls= sym=\n"
            "5-12 class fn= cls=UserRepository sym=UserRepository\n"
            "14-16 type fn= cls=Named sym=Named\n");
  test::expect_chunks_cover(src, chunks);
}

}  // namespace
}  // namespace pf
