// C chunked by the token scan (index/c_chunker.h) against tree-sitter: the chunking time of
// each on one thread over every .c file under a folder (1 MiB at most, as the indexer takes
// them), the files the scan gave back to tree-sitter, and how far the chunks agree: the
// functions (first chunk of each) tree-sitter names that the scan names with the same rows,
// and the files whose chunks are all the same; and the files the scan gives back (those it
// rejects as C++ counted apart). With --headers: every .h file, the scan
// against tree-sitter's C++ (the grammar headers get). With --whole: tree-sitter parses every
// body (parse_all_bodies), else C's top-level bodies are skipped as the fallback does.
//   pf_c_chunking DIR [--max-lines N] [--headers] [--whole] [--show N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "index/c_chunker.h"
#include "index/chunk_builder.h"
#include "index/chunker.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

using Key = std::tuple<int, int, std::string>;

// The first chunk of each named function: rows and name.
std::set<Key> functions(const std::vector<pf::Chunk>& chunks) {
  std::set<Key> out;
  for (size_t i = 0; i < chunks.size(); ++i)
    if (chunks[i].chunk_type == "function" && !chunks[i].function_name.empty() &&
        (i == 0 || chunks[i - 1].function_name != chunks[i].function_name))
      out.insert({chunks[i].start_line, chunks[i].end_line, chunks[i].function_name});
  return out;
}

std::string describe(const pf::Chunk& c) {
  return std::to_string(c.start_line) + "-" + std::to_string(c.end_line) + " " + c.chunk_type +
         " " + c.symbol;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pf_c_chunking DIR [--max-lines N] [--headers] [--whole] [--show N]\n");
    return 2;
  }
  pf::ChunkLimits scan;
  bool headers = false, whole = false;
  int show = 3;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--max-lines" && i + 1 < argc) scan.max_lines = std::stoi(argv[++i]);
    else if (a == "--headers") headers = true;
    else if (a == "--whole") whole = true;
    else if (a == "--show" && i + 1 < argc) show = std::stoi(argv[++i]);
  }
  pf::ChunkLimits tree = scan;
  tree.c_by_syntax_tree = true;
  tree.parse_all_bodies = whole;
  const char* language = headers ? "cpp" : "c";
  std::vector<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(argv[1])) {
    if (!e.is_regular_file() || e.file_size() > (1u << 20)) continue;
    if (e.path().extension() == (headers ? ".h" : ".c")) paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  double t_scan = 0, t_tree = 0;
  size_t bytes = 0, differ = 0, given_back = 0, given_back_cpp = 0, chunks_scan = 0, chunks_tree = 0, fns = 0, fns_same = 0;
  int shown = 0;
  for (const std::string& p : paths) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    bytes += text.size();
    auto t0 = Clock::now();
    auto a = pf::chunk_file(p, language, text, scan);
    auto t1 = Clock::now();
    auto b = pf::chunk_file(p, language, text, tree);
    auto t2 = Clock::now();
    t_scan += std::chrono::duration<double>(t1 - t0).count();
    t_tree += std::chrono::duration<double>(t2 - t1).count();
    chunks_scan += a.size(), chunks_tree += b.size();
    pf::ChunkBuilder probe(p, language, text);
    if (const char* why = pf::chunk_c(probe, text, scan, headers)) {
      ++given_back;
      given_back_cpp += why == pf::kCScanCpp;
    }
    std::set<Key> fa = functions(a), fb = functions(b);
    fns += fb.size();
    for (const Key& k : fb) fns_same += fa.count(k);
    bool same = a.size() == b.size();
    for (size_t i = 0; same && i < a.size(); ++i)
      same = a[i].start_line == b[i].start_line && a[i].end_line == b[i].end_line &&
             a[i].chunk_type == b[i].chunk_type && a[i].symbol == b[i].symbol;
    if (same) continue;
    ++differ;
    if (shown++ >= show) continue;
    std::fprintf(stderr, "differs: %s (scan | tree-sitter)\n", p.c_str());
    for (size_t i = 0, printed = 0; i < std::max(a.size(), b.size()) && printed < 12; ++i) {
      std::string x = i < a.size() ? describe(a[i]) : "", y = i < b.size() ? describe(b[i]) : "";
      if (x == y) continue;
      std::fprintf(stderr, "  %-50s | %s\n", x.c_str(), y.c_str());
      ++printed;
    }
  }
  std::printf(
      "{\"files\": %zu, \"mb\": %.1f, \"scan_s\": %.2f, \"tree_sitter_s\": %.2f, \"ratio\": "
      "%.3f, \"chunks_scan\": %zu, \"chunks_tree_sitter\": %zu, \"functions\": %zu, "
      "\"functions_same\": %zu, \"files_differing\": %zu, \"given_back\": %zu, "
      "\"given_back_as_cpp\": %zu}\n",
      paths.size(), bytes / 1e6, t_scan, t_tree, t_tree > 0 ? t_scan / t_tree : 0, chunks_scan,
      chunks_tree, fns, fns_same, differ, given_back, given_back_cpp);
  return 0;
}
