// Golden tests for the tree-sitter chunker on real-world shaped TypeScript, TSX and JavaScript,
// plus the invariants every chunking must keep (true line numbers, no line dropped, the cap).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/text.h"
#include "index/chunk_builder.h"
#include "index/chunker.h"
#include "test_util.h"

namespace pf {
namespace {

struct Expect {
  int start, end;
  const char* type;
  const char* fn;
  const char* cls;
  const char* sym;
};

void expect_chunks(const std::vector<Chunk>& got, const std::vector<Expect>& want) {
  ASSERT_EQ(got.size(), want.size()) << [&] {
    std::ostringstream o;
    for (auto& c : got)
      o << c.start_line << "-" << c.end_line << " " << c.chunk_type << " fn=" << c.function_name
        << " cls=" << c.class_name << " sym=" << c.symbol << "\n";
    return o.str();
  }();
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("chunk " + std::to_string(i));
    EXPECT_EQ(got[i].start_line, want[i].start);
    EXPECT_EQ(got[i].end_line, want[i].end);
    EXPECT_EQ(got[i].chunk_type, want[i].type);
    EXPECT_EQ(got[i].function_name, want[i].fn);
    EXPECT_EQ(got[i].class_name, want[i].cls);
    EXPECT_EQ(got[i].symbol, want[i].sym);
  }
}

const char* kTypeScript = R"(import { Injectable } from '@nestjs/common'
import type { Repo } from './repo'

/**
 * Options for the cache.
 */
export interface CacheOptions {
  ttl: number
  max?: number
}

export type Key = string | number

export enum Mode { Strict, Loose }

const DEFAULT_TTL = 60
let counter = 0

/** Builds a key from parts. */
export function makeKey(parts: string[]): Key {
  return parts.join(':')
}

export const normalize = (k: Key): string => String(k).toLowerCase()

@Injectable()
export class CacheService {
  private store = new Map<Key, unknown>()
  constructor(private readonly repo: Repo) {}
  get(key: Key) {
    return this.store.get(key)
  }
}

export default CacheService
)";

TEST(CodeChunker, TypeScriptDeclarationsBecomeChunks) {
  auto chunks = chunk_file("src/cache.ts", "typescript", kTypeScript);
  expect_chunks(chunks, {
                            {1, 2, "block", "", "", ""},
                            {4, 10, "type", "", "", "CacheOptions"},
                            {12, 12, "type", "", "", "Key"},
                            {14, 14, "type", "", "", "Mode"},
                            {16, 17, "block", "", "", ""},
                            {19, 22, "function", "makeKey", "", "makeKey"},
                            {24, 24, "function", "normalize", "", "normalize"},
                            {26, 33, "class", "", "CacheService", "CacheService"},
                            {35, 35, "module", "", "", "default"},
                        });
  test::expect_chunks_cover(kTypeScript, chunks);
  for (const auto& c : chunks) {
    EXPECT_EQ(c.language, "typescript");
    EXPECT_EQ(c.path, "src/cache.ts");
    EXPECT_EQ(c.content_hash.size(), 16u);
    EXPECT_GT(c.tokens, 0);
  }
}

// A chunk's `tokens`: each word (letters, digits, '_', any non-ASCII byte) and each punctuation
// byte counts one; white space counts nothing.
TEST(EstimateTokens, CountsWordsAndPunctuation) {
  EXPECT_EQ(estimate_tokens(""), 0);
  EXPECT_EQ(estimate_tokens(" \t\r\n"), 0);
  EXPECT_EQ(estimate_tokens("foo(bar, 2)"), 6);
  EXPECT_EQ(estimate_tokens("x+=1;"), 5);
  EXPECT_EQ(estimate_tokens("  snake_case\tcamelCase\n"), 2);
  EXPECT_EQ(estimate_tokens("h\xc3\xa9llo w\xc3\xb6rld!"), 3);
}

const char* kCommonJs = R"('use strict'

const assert = require('node:assert')
const { kUrl } = require('./symbols')

// Pool dispatcher.
class Pool extends PoolBase {
  constructor (origin, opts) {
    super()
    this[kUrl] = origin
  }
}

Pool.prototype.close = function close (cb) {
  return cb()
}

function defaultFactory (origin, opts) {
  return new Pool(origin, opts)
}

module.exports = Pool
)";

TEST(CodeChunker, CommonJsClassesPrototypesAndExports) {
  auto chunks = chunk_file("lib/pool.js", "javascript", kCommonJs);
  expect_chunks(chunks, {
                            {1, 4, "block", "", "", ""},
                            {6, 12, "class", "", "Pool", "Pool"},
                            {14, 16, "method", "close", "Pool", "close"},
                            {18, 20, "function", "defaultFactory", "", "defaultFactory"},
                            {22, 22, "module", "", "", "module.exports"},
                        });
  test::expect_chunks_cover(kCommonJs, chunks);
}

TEST(CodeChunker, TsxUsesTheTsxGrammar) {
  const char* src = R"(import React from 'react'

export function Button({ label }: { label: string }) {
  return <button className="btn">{label}</button>
}

export const List = <T,>({ items }: { items: T[] }) => (
  <ul>{items.map((i) => <li>{String(i)}</li>)}</ul>
)
)";
  auto chunks = chunk_file("ui/button.tsx", "tsx", src);
  expect_chunks(chunks, {
                            {1, 1, "block", "", "", ""},
                            {3, 5, "function", "Button", "", "Button"},
                            {7, 9, "function", "List", "", "List"},
                        });
}

std::string big_class(int methods, int body_lines) {
  std::ostringstream s;
  s << "// header comment\n";
  s << "export class Client extends Base {\n";
  s << "  private a = 1\n";
  for (int m = 0; m < methods; ++m) {
    s << "  /** Method " << m << ". */\n";
    s << "  method" << m << "(x: number) {\n";
    for (int l = 0; l < body_lines; ++l) s << "    x = x + " << l << "\n";
    s << "    return x\n  }\n\n";
  }
  s << "}\n";
  return s.str();
}

TEST(CodeChunker, LargeClassSplitsPerMethodWithClassContext) {
  std::string src = big_class(6, 20);  // ~150 lines, over the 80-line cap
  ChunkLimits limits;
  auto chunks = chunk_file("src/client.ts", "typescript", src, limits);
  test::expect_chunks_cover(src, chunks);
  int methods = 0;
  for (const auto& c : chunks) {
    EXPECT_LE(c.end_line - c.start_line + 1, limits.max_lines);
    EXPECT_EQ(c.class_name, "Client");
    EXPECT_EQ(c.heading_path, "export class Client extends Base");
    if (c.chunk_type == "method") {
      ++methods;
      EXPECT_EQ(c.function_name, "method" + std::to_string(methods - 1));
      // The doc comment stays with its method.
      EXPECT_EQ(c.content.rfind("  /** Method", 0), 0u) << c.content;
    }
  }
  EXPECT_EQ(methods, 6);
  EXPECT_EQ(chunks.front().start_line, 1);  // the header comment is kept with the class header
}

TEST(CodeChunker, OversizedFunctionSplitsAtStatements) {
  std::ostringstream s;
  s << "function huge(a) {\n";
  for (int i = 0; i < 300; ++i) s << "  a.push(" << i << ")\n";
  s << "  return a\n}\n";
  std::string src = s.str();
  auto chunks = chunk_file("big.js", "javascript", src);
  test::expect_chunks_cover(src, chunks);
  ASSERT_GE(chunks.size(), 4u);
  for (const auto& c : chunks) {
    EXPECT_LE(c.end_line - c.start_line + 1, 80);
    EXPECT_EQ(c.function_name, "huge");
    EXPECT_EQ(c.chunk_type, "function");
  }
  EXPECT_EQ(chunks.front().content.rfind("function huge(a) {", 0), 0u);
  EXPECT_EQ(chunks.back().content.substr(chunks.back().content.size() - 1), "}");
}

TEST(CodeChunker, GiantStringIsWindowedNotDropped) {
  std::ostringstream s;
  s << "const text = `\n";
  for (int i = 0; i < 500; ++i) s << "line " << i << "\n";
  s << "`\n";
  std::string src = s.str();
  auto chunks = chunk_file("t.js", "javascript", src);
  test::expect_chunks_cover(src, chunks);
  for (const auto& c : chunks) EXPECT_LE(c.end_line - c.start_line + 1, 80);
}

TEST(CodeChunker, DeepNestingDoesNotCrash) {
  std::string src = "const x = " + std::string(10000, '[') + "1" + std::string(10000, ']') + "\n";
  std::string blocks;
  for (int i = 0; i < 10000; ++i) blocks += "{\n";
  for (int i = 0; i < 10000; ++i) blocks += "}\n";
  auto a = chunk_file("deep1.js", "javascript", src);
  auto b = chunk_file("deep2.js", "javascript", blocks);
  EXPECT_FALSE(a.empty());
  test::expect_chunks_cover(blocks, b);
}

TEST(CodeChunker, SyntaxErrorsStillCoverEveryLine) {
  const char* src =
      "function ok() { return 1 }\n\nfunction broken( {\n  let = = ;\n}\n\nclass X { m() {} }\n";
  auto chunks = chunk_file("bad.ts", "typescript", src);
  test::expect_chunks_cover(src, chunks);
}

// Found by a mutation fuzzer: error recovery on this input in the TSX grammar runs a million
// parser operations (over 10 s) without an end in sight. The parse's work budget gives up, the
// file is still chunked, line by line, and the reason is given; the same every time, however
// busy the machine, since the budget counts work, not time. The TypeScript grammar parses it.
const char* kExplodingTsx =
    "async (a = (b = (c (= 1)) => 2) => 3\n"
    "async (a = (b = (c = 1)) => 2) => 3\n"
    "async (a = (b} = (c = 1)) => 2) => 3\n";

TEST(CodeChunker, PathologicalInputFallsBackToLineWindows) {
  std::vector<Chunk> first;
  for (int round = 0; round < 2; ++round) {
    std::string why = "not set";
    auto chunks = chunk_file("patho.tsx", "tsx", kExplodingTsx, {}, &why);
    EXPECT_EQ(why, kFallbackParseBudget);
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_EQ(chunks[0].chunk_type, "block");
    EXPECT_EQ(chunks[0].end_line, 3);
    test::expect_chunks_cover(kExplodingTsx, chunks);
    if (round == 0) first = chunks;
    EXPECT_EQ(chunks[0].content, first[0].content);
  }
  std::string why = "not set";
  chunk_file("patho.ts", "typescript", kExplodingTsx, {}, &why);
  EXPECT_EQ(why, "");
  // An older finding (over 20 s in an earlier tree-sitter) now parses quickly; it must still
  // cover every line.
  std::string src =
      "{\"providers\":{\"p\":{\"type\":\"\xef\xbf\xbdpenai,\"*****************************"
      "baseUrl\":"
      "\"http://"
      "h\",\"model\x0fs\":[{\":\"m\"}]}},\"d#faults\":{[{\"id\":\"m\"}]}},\"d\"chatModel\":"
      "\"p:##m\",\"fallbackModels\":[\"p:m\"]}}";
  for (const char* lang : {"typescript", "tsx"}) {
    auto chunks = chunk_file("patho.ts", lang, src);
    ASSERT_EQ(chunks.size(), 1u) << lang;
    test::expect_chunks_cover(src, chunks);
  }
}

// The budget grows with the file: a large, ordinary source file (about 1 MB, the indexer's size
// cap) is chunked by its syntax, however slow the machine or the build (sanitizers) is.
TEST(CodeChunker, LargeOrdinaryFileIsWithinTheBudget) {
  std::string src;
  for (int i = 0; src.size() < 1000000; ++i)
    src += "export function handler" + std::to_string(i) +
           "(req: Request, res: Response): void {\n  const value = req.headers['x-" +
           std::to_string(i) + "'] ?? `${req.url}/${i}`\n  if (!value) throw new Error('no " +
           std::to_string(i) + "')\n  res.send({ value, at: Date.now() })\n}\n\n";
  std::string why = "not set";
  auto chunks = chunk_file("big.ts", "typescript", src, {}, &why);
  EXPECT_EQ(why, "");
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks.front().chunk_type, "function");
  EXPECT_EQ(chunks.back().function_name.rfind("handler", 0), 0u);
}

TEST(CodeChunker, CrLfLineEndings) {
  std::string src =
      "function a() {\r\n  return 1\r\n}\r\n\r\nfunction b() {\r\n  return 2\r\n}\r\n";
  auto chunks = chunk_file("crlf.js", "javascript", src);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].start_line, 5);
  EXPECT_EQ(chunks[1].content, "function b() {\r\n  return 2\r\n}");
}

TEST(Chunker, PackageJsonSummary) {
  const char* pkg = R"({
  "name": "demo",
  "version": "1.2.3",
  "description": "A demo",
  "scripts": { "build": "tsc", "test": "node --test" },
  "dependencies": { "undici": "^7.0.0" },
  "devDependencies": { "typescript": "5.6.2" }
}
)";
  auto chunks = chunk_file("package.json", detect_language("package.json"), pkg);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].chunk_type, "module");
  EXPECT_EQ(chunks[0].start_line, 1);
  EXPECT_EQ(chunks[0].end_line, 8);
  EXPECT_EQ(chunks[0].symbol, "demo");
  EXPECT_NE(chunks[0].content.find("Package: demo@1.2.3"), std::string::npos);
  EXPECT_NE(chunks[0].content.find("Dependencies: undici@^7.0.0"), std::string::npos);
  EXPECT_NE(chunks[0].content.find("DevDependencies: typescript@5.6.2"), std::string::npos);
  EXPECT_NE(chunks[0].content.find("build: tsc"), std::string::npos);
}

TEST(Chunker, BrokenPackageJsonFallsBackToWindows) {
  std::string pkg = "{ \"name\": \"x\",\n";
  for (int i = 0; i < 150; ++i) pkg += "  \"k" + std::to_string(i) + "\": 1,\n";
  std::string why;
  auto chunks = chunk_file("package.json", "package.json", pkg, {}, &why);
  EXPECT_EQ(why, kFallbackPackageJson);
  ASSERT_EQ(chunks.size(), 3u);  // 60-line windows, not one unbounded chunk
  test::expect_chunks_cover(pkg, chunks);
}

// A package.json in an indexed repository is untrusted: one nested 150,000 deep under "exports"
// crashed the indexer when its summary wrote the value out. It is now chunked as plain text.
TEST(Chunker, DeeplyNestedPackageJsonFallsBackToWindows) {
  std::string pkg = "{\"name\": \"x\", \"version\": \"1.0.0\", \"exports\":\n";
  for (int i = 0; i < 150000; ++i) pkg += "[\n";
  for (int i = 0; i < 150000; ++i) pkg += "]\n";
  pkg += "}\n";
  auto chunks = chunk_file("package.json", "package.json", pkg);
  ASSERT_FALSE(chunks.empty());
  EXPECT_NE(chunks[0].chunk_type, "module") << "no summary of a document refused as too deep";
  test::expect_chunks_cover(pkg, chunks);
}

TEST(Chunker, OtherTextInLineWindows) {
  std::string text;
  for (int i = 1; i <= 130; ++i) text += "key" + std::to_string(i) + ": value\n";
  std::string why = "not set";
  auto chunks = chunk_file("config.yml", detect_language("config.yml"), text, {}, &why);
  EXPECT_EQ(why, "");  // windows are plain text's chunker, not a fallback
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].language, "yaml");
  EXPECT_EQ(chunks[1].start_line, 61);
  EXPECT_EQ(chunks[2].end_line, 130);
  test::expect_chunks_cover(text, chunks);
}

// C chunked by tree-sitter (as a file the token scan gives back is) is parsed without its
// function bodies but those of functions too long for one chunk; the chunks are those of a
// parse of every body, on real C (tree-sitter's runtime, llama.cpp's ggml)
// at the default cap and at one that splits most functions.
TEST(Chunker, CParsedWithoutFunctionBodiesChunksAsAWholeParse) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* dir : {"third_party/tree-sitter/vendor/tree-sitter/lib/src",
                          "third_party/llama.cpp/ggml/src"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(test::source_dir() + "/" + dir, ec)) {
      std::string ext = e.path().extension();
      // .c only: a header is parsed as C++ (and ggml's hold C++ under #ifdef __cplusplus).
      if (ext == ".c" && e.file_size() < (1u << 20)) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 8u);
  int split = 0;
  for (int cap : {80, 25}) {
    for (const std::string& path : files) {
      SCOPED_TRACE(path + " at " + std::to_string(cap) + " lines");
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      ChunkLimits skip;
      skip.max_lines = cap;
      skip.c_by_syntax_tree = true;
      ChunkLimits whole = skip;
      whole.parse_all_bodies = true;
      std::string why_skip = "unset", why_whole = "unset";
      auto a = chunk_file("x.c", "c", text.str(), skip, &why_skip);
      auto b = chunk_file("x.c", "c", text.str(), whole, &why_whole);
      EXPECT_EQ(why_skip, why_whole);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].start_line, b[i].start_line) << i;
        EXPECT_EQ(a[i].end_line, b[i].end_line) << i;
        EXPECT_EQ(a[i].chunk_type, b[i].chunk_type) << i;
        EXPECT_EQ(a[i].function_name, b[i].function_name) << i;
        EXPECT_EQ(a[i].symbol, b[i].symbol) << i;
        EXPECT_EQ(a[i].content_hash, b[i].content_hash) << i;
        split += i > 0 && a[i].chunk_type == "function" &&
                 a[i].function_name == a[i - 1].function_name;
      }
      test::expect_chunks_cover(text.str(), a);
    }
  }
  EXPECT_GT(split, 100);  // functions over the cap were split by their statements
}

TEST(Chunker, DetectsLanguages) {
  EXPECT_EQ(detect_language("a/b.ts"), "typescript");
  EXPECT_EQ(detect_language("types/index.d.ts"), "typescript");
  EXPECT_EQ(detect_language("c.tsx"), "tsx");
  for (const char* js : {"a.js", "a.jsx", "a.mjs", "a.cjs"})
    EXPECT_EQ(detect_language(js), "javascript");
  EXPECT_EQ(detect_language("docs/x.mdx"), "markdown");
  EXPECT_EQ(detect_language("packages/p/package.json"), "package.json");
  EXPECT_EQ(detect_language("LICENSE"), "text");
}

}  // namespace
}  // namespace pf
