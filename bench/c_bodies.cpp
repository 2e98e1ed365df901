// C chunked without its function bodies (index/c_bodies.h) against a parse of every body: the
// chunking time of each, on one thread, over every .c file under a folder (1 MiB at
// most, as the indexer takes them), and the files whose chunks differ between the two. With
// --headers: every .h file chunked as C without bodies against as C++ (how the indexer took
// headers before it looked at their content).
//   pf_c_bodies DIR [--max-lines N] [--headers]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "index/chunker.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pf_c_bodies DIR [--max-lines N] [--headers]\n");
    return 2;
  }
  pf::ChunkLimits skip;
  bool headers = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--max-lines" && i + 1 < argc) skip.max_lines = std::stoi(argv[++i]);
    else if (a == "--headers") headers = true;
  }
  pf::ChunkLimits whole = skip;
  whole.parse_all_bodies = true;
  const char* whole_language = headers ? "cpp" : "c";
  std::vector<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(argv[1])) {
    if (!e.is_regular_file() || e.file_size() > (1u << 20)) continue;
    std::string ext = e.path().extension();
    if (ext == (headers ? ".h" : ".c")) paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  double t_skip = 0, t_whole = 0;
  size_t bytes = 0, differ = 0, chunks = 0;
  for (const std::string& p : paths) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    bytes += text.size();
    auto t0 = Clock::now();
    auto a = pf::chunk_file(p, "c", text, skip);
    auto t1 = Clock::now();
    auto b = pf::chunk_file(p, whole_language, text, whole);
    auto t2 = Clock::now();
    t_skip += std::chrono::duration<double>(t1 - t0).count();
    t_whole += std::chrono::duration<double>(t2 - t1).count();
    chunks += b.size();
    bool same = a.size() == b.size();
    for (size_t i = 0; same && i < a.size(); ++i)
      same = a[i].start_line == b[i].start_line && a[i].end_line == b[i].end_line &&
             a[i].chunk_type == b[i].chunk_type && a[i].function_name == b[i].function_name &&
             a[i].symbol == b[i].symbol;
    if (!same) {
      ++differ;
      if (differ <= 10) std::fprintf(stderr, "differs: %s\n", p.c_str());
      if (differ == 1)  // the first one's chunks, side by side
        for (size_t i = 0; i < std::max(a.size(), b.size()); ++i)
          std::fprintf(stderr, "  %-40s | %s\n",
                       i < a.size() ? (std::to_string(a[i].start_line) + "-" +
                                       std::to_string(a[i].end_line) + " " + a[i].chunk_type +
                                       " " + a[i].function_name)
                                          .c_str()
                                    : "",
                       i < b.size() ? (std::to_string(b[i].start_line) + "-" +
                                       std::to_string(b[i].end_line) + " " + b[i].chunk_type +
                                       " " + b[i].function_name)
                                          .c_str()
                                    : "");
    }
  }
  std::printf(
      "{\"files\": %zu, \"mb\": %.1f, \"chunks\": %zu, \"whole_s\": %.2f, \"without_bodies_s\": "
      "%.2f, \"ratio\": %.3f, \"files_differing\": %zu}\n",
      paths.size(), bytes / 1e6, chunks, t_whole, t_skip, t_skip / t_whole, differ);
  return 0;
}
