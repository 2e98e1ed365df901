// Golden chunks for the other tree-sitter languages: Python, Go, Rust, Java, C, C++, C#, Ruby
// and PHP.
#include <gtest/gtest.h>

#include <algorithm>
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

// Chunks src as the file at `path`, its language detected from the name, and checks that every
// line lands in a chunk and that the detected language is `language`, on every chunk.
std::vector<Chunk> chunk_detected(const std::string& path, const std::string& src,
                                  const std::string& language) {
  std::vector<Chunk> chunks = chunk_file(path, detect_language(path), src);
  test::expect_chunks_cover(src, chunks);
  for (const auto& c : chunks) EXPECT_EQ(c.language, language) << path;
  return chunks;
}

// For a class over the 80-line cap: checks that every chunk fits the cap, belongs to the class
// and carries its header as context, and that each method chunk starts with `lead` (its comment
// or decorator) unless it is one of `bare`; returns the method names in file order.
std::vector<std::string> methods_of_split_class(const std::vector<Chunk>& chunks,
                                                const std::string& cls, const std::string& header,
                                                const std::string& lead,
                                                const std::vector<std::string>& bare = {}) {
  std::vector<std::string> methods;
  for (const auto& c : chunks) {
    EXPECT_LE(c.end_line - c.start_line + 1, 80);
    EXPECT_EQ(c.class_name, cls);
    EXPECT_EQ(c.heading_path, header);
    if (c.chunk_type != "method") continue;
    methods.push_back(c.function_name);
    if (std::find(bare.begin(), bare.end(), c.function_name) != bare.end()) continue;
    EXPECT_EQ(c.content.rfind(lead, 0), 0u) << c.function_name;
  }
  return methods;
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
  auto chunks = chunk_detected("pool.py", src, "python");
  EXPECT_EQ(describe(chunks),
            "1-3 block fn= cls= sym=\n"
            "6-10 function fn=retry cls= sym=retry\n"
            "13-17 class fn= cls=Pool sym=Pool\n");
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
  auto chunks = chunk_detected("client.py", src, "python");
  // The decorator stays with its method.
  EXPECT_EQ(methods_of_split_class(chunks, "Client", "class Client(Base)", "    @property"),
            (std::vector<std::string>{"method0", "method1", "method2", "method3", "method4"}));
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
  auto chunks = chunk_detected("server.go", src, "go");
  EXPECT_EQ(describe(chunks),
            "1-3 block fn= cls= sym=\n"
            "5-8 type fn= cls= sym=Server\n"
            "10-13 method fn=Start cls=Server sym=Start\n"
            "15-17 function fn=New cls= sym=New\n");
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
  auto chunks = chunk_detected("cache.rs", src, "rust");
  EXPECT_EQ(describe(chunks),
            "1-1 block fn= cls= sym=\n"
            "3-6 type fn= cls= sym=Entry\n"
            "8-12 class fn= cls=Entry sym=Entry\n"
            "14-16 function fn=evict cls= sym=evict\n");
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
  auto chunks = chunk_detected("UserRepository.java", src, "java");
  EXPECT_EQ(describe(chunks),
            "1-3 block fn= cls= sym=\n"
            "5-12 class fn= cls=UserRepository sym=UserRepository\n"
            "14-16 type fn= cls=Named sym=Named\n");
}

TEST(CodeLanguages, C) {
  const char* src = R"(#include <stdlib.h>
#include <string.h>

#define BUF_MIN 16

/* A growable byte buffer. */
struct buf {
  char *data;
  size_t len, cap;
};

typedef int (*buf_visit_fn)(const char *chunk, size_t len);

enum buf_error { BUF_OK, BUF_NOMEM };

static const char *const kErrorNames[] = {
    "ok",
    "out of memory",
    NULL,
};

/* Grows b to hold at least need bytes. */
static char *buf_grow(struct buf *b, size_t need) {
  if (need <= b->cap) return b->data;
  b->data = realloc(b->data, need);
  return b->data;
}

#ifdef BUF_DEBUG
void buf_dump(const struct buf *b) { (void)b; }
#else
#define buf_dump(b) ((void)0)
#endif
)";
  auto chunks = chunk_detected("buf.c", src, "c");
  EXPECT_EQ(describe(chunks),
            "1-4 block fn= cls= sym=\n"
            "6-10 type fn= cls= sym=buf\n"
            "12-12 type fn= cls= sym=buf_visit_fn\n"
            "14-14 type fn= cls= sym=buf_error\n"
            "16-20 module fn= cls= sym=kErrorNames\n"
            "22-27 function fn=buf_grow cls= sym=buf_grow\n"    // returns a pointer
            "29-30 function fn=buf_dump cls= sym=buf_dump\n"    // #ifdef group flattened
            "31-33 function fn=buf_dump cls= sym=buf_dump\n");  // the #else macro
  EXPECT_EQ(chunks[5].content.rfind("/* Grows b", 0), 0u);      // the comment stays with it
}

// An include guard and a namespace around everything: their members are chunked one by one,
// and the guard and namespace lines go with the first and last of them.
TEST(CodeLanguages, CppHeaderWithNamespace) {
  const char* src = R"(#ifndef X_H
#define X_H
#include <vector>
namespace pf {
/// Doc for add.
int add(int a, int b) { return a + b; }
template <typename T>
class Box : public Base {
 public:
  Box() = default;
  T get() const { return v_; }
  void set(T v);
 private:
  T v_;
};
template <typename T> void Box<T>::set(T v) { v_ = v; }
struct Point { int x, y; };
enum class Color { kRed, kBlue };
using Ints = std::vector<int>;
typedef struct Node { int v; } Node;
extern "C" { void c_api(void); }
int Foo::bar() const { return 1; }
#define MAX(a, b) ((a) > (b) ? (a) : (b))
}  // namespace pf
#endif
)";
  auto chunks = chunk_detected("box.h", src, "cpp");
  EXPECT_EQ(describe(chunks),
            "1-3 block fn= cls= sym=\n"
            "4-6 function fn=add cls= sym=add\n"
            "7-15 class fn= cls=Box sym=Box\n"  // with its template line
            "16-16 method fn=set cls=Box sym=set\n"
            "17-17 class fn= cls=Point sym=Point\n"
            "18-18 type fn= cls= sym=Color\n"
            "19-19 type fn= cls= sym=Ints\n"
            "20-20 type fn= cls= sym=Node\n"
            "21-21 block fn= cls= sym=\n"
            "22-22 method fn=bar cls=Foo sym=bar\n"
            "23-24 function fn=MAX cls= sym=MAX\n"
            "25-25 block fn= cls= sym=\n");
  EXPECT_EQ(chunks[1].content.rfind("namespace pf {\n/// Doc for add.", 0), 0u);
}

TEST(CodeLanguages, CppLargeClassSplitsPerMethod) {
  std::ostringstream s;
  s << "namespace net {\n\nclass Server final : public Base {\n public:\n  int port_ = 0;\n\n";
  for (int m = 0; m < 4; ++m) {
    s << "  // Handles case " << m << ".\n";
    s << "  Statements& handle" << m << "(int x) const {\n";
    for (int l = 0; l < 25; ++l) s << "    x += " << l << ";\n";
    s << "    return table_;\n  }\n\n";
  }
  s << "  bool operator==(const Server& o) const {\n    return port_ == o.port_;\n  }\n};\n\n}  // "
       "namespace net\n";
  std::string src = s.str();
  auto chunks = chunk_detected("server.cc", src, "cpp");
  EXPECT_EQ(methods_of_split_class(chunks, "Server", "class Server final : public Base",
                                   "  // Handles case", {"operator=="}),
            (std::vector<std::string>{"handle0", "handle1", "handle2", "handle3", "operator=="}));
}

// A braced namespace is flattened; its lines go with its first and last type.
TEST(CodeLanguages, CSharp) {
  const char* src = R"(using System;
using System.Collections.Generic;

namespace Demo.Pools
{
    /// <summary>A pool.</summary>
    public class ConnectionPool : IDisposable
    {
        private readonly List<int> _free = new();

        public ConnectionPool(int size) { _free.Add(size); }

        public int Acquire()
        {
            return _free[0];
        }

        public int Count => _free.Count;
    }

    public interface IPool { int Acquire(); }
    public record Point(int X, int Y);
    public enum Color { Red, Blue }
    public struct Size { public int W; }
}
)";
  auto chunks = chunk_detected("Pool.cs", src, "csharp");
  EXPECT_EQ(describe(chunks),
            "1-2 block fn= cls= sym=\n"
            "4-19 class fn= cls=ConnectionPool sym=ConnectionPool\n"
            "21-21 type fn= cls=IPool sym=IPool\n"
            "22-22 class fn= cls=Point sym=Point\n"
            "23-23 type fn= cls= sym=Color\n"
            "24-25 class fn= cls=Size sym=Size\n");
}

TEST(CodeLanguages, CSharpLargeClassSplitsPerMember) {
  std::ostringstream s;
  s << "namespace Demo;\n\npublic sealed class Router : IRouter\n{\n    private int _n;\n\n";
  for (int m = 0; m < 4; ++m) {
    s << "    /// <summary>Route " << m << ".</summary>\n";
    s << "    public int Route" << m << "(int x)\n    {\n";
    for (int l = 0; l < 25; ++l) s << "        x += " << l << ";\n";
    s << "        return x;\n    }\n\n";
  }
  s << "}\n";
  std::string src = s.str();
  auto chunks = chunk_detected("Router.cs", src, "csharp");
  // The file-scoped namespace line is a block of its own; the rest is the class.
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks[0].chunk_type, "block");
  EXPECT_EQ(chunks[0].content, "namespace Demo;");
  chunks.erase(chunks.begin());
  EXPECT_EQ(methods_of_split_class(chunks, "Router", "public sealed class Router : IRouter",
                                   "    /// <summary>Route"),
            (std::vector<std::string>{"Route0", "Route1", "Route2", "Route3"}));
}

// A module that holds a class is a namespace (flattened); one that holds only methods is a
// mixin, chunked like a class.
TEST(CodeLanguages, Ruby) {
  const char* src = R"(require "json"

module Billing
  # Charges a card.
  class Charger < Base
    attr_reader :gateway

    def initialize(gateway)
      @gateway = gateway
    end

    def self.build
      new(Gateway.new)
    end

    private

    def charge(amount)
      gateway.post(amount)
    end
  end

  def self.helper; end
end

def top_level(x)
  x * 2
end
)";
  auto chunks = chunk_detected("charger.rb", src, "ruby");
  EXPECT_EQ(describe(chunks),
            "1-1 block fn= cls= sym=\n"
            "3-21 class fn= cls=Charger sym=Charger\n"
            "23-24 function fn=helper cls= sym=helper\n"
            "26-28 function fn=top_level cls= sym=top_level\n");
  const char* mixin = "module Auditable\n  def audit\n    log(:audit)\n  end\nend\n";
  EXPECT_EQ(describe(chunk_file("auditable.rb", "ruby", mixin)),
            "1-5 class fn= cls=Auditable sym=Auditable\n");
}

TEST(CodeLanguages, Php) {
  const char* src = R"(<?php

namespace App\Billing;

use App\Gateway;

/** Charges cards. */
final class Charger extends Base implements ChargerInterface
{
    private Gateway $gateway;

    public function __construct(Gateway $gateway)
    {
        $this->gateway = $gateway;
    }

    public function charge(int $amount): bool
    {
        return $this->gateway->post($amount);
    }
}

interface ChargerInterface { public function charge(int $amount): bool; }
trait Loggable { public function log(string $m): void {} }
enum Status: string { case Paid = 'paid'; }

function helper(array $items): int
{
    return count($items);
}
)";
  auto chunks = chunk_detected("Charger.php", src, "php");
  EXPECT_EQ(describe(chunks),
            "1-5 block fn= cls= sym=\n"
            "7-21 class fn= cls=Charger sym=Charger\n"
            "23-23 type fn= cls=ChargerInterface sym=ChargerInterface\n"
            "24-24 class fn= cls=Loggable sym=Loggable\n"
            "25-25 class fn= cls=Status sym=Status\n"
            "27-30 function fn=helper cls= sym=helper\n");
  EXPECT_EQ(chunks[1].content.rfind("/** Charges cards. */", 0), 0u);
}

}  // namespace
}  // namespace pf
