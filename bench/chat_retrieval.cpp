// Retrieval CPU per chat: what `pilotfish serve` does for each chat before the model is asked
// (hybrid_search with the chat's options, lexical leg only, for the serve's repository, then the
// system prompt built from the hits), timed in thread CPU time over many repetitions of each
// question. bench/chat_retrieval.sh runs it twice, with the store's in-memory ranking and with
// PILOTFISH_LEXICAL_RANKER=fts5 (FTS5's bm25(), the ranking before it), and prints the ratio.
//
//   pf_chat_retrieval DB REPO_ROOT QUESTIONS_FILE [--repeat N]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "agent/prompt.h"
#include "search/hybrid.h"
#include "store/store.h"

namespace {

double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: pf_chat_retrieval DB REPO_ROOT QUESTIONS_FILE [--repeat N]\n");
    return 2;
  }
  std::string db = argv[1], root = argv[2];
  int repeat = 200;
  for (int i = 4; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--repeat") repeat = std::atoi(argv[i + 1]);
  std::vector<std::string> questions;
  std::ifstream in(argv[3]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) questions.push_back(line);
  try {
    auto store = pf::open_sqlite_store(db, pf::OpenMode::kReadOnly);
    auto repo = store->find_repository(root);
    if (!repo) throw pf::Error("no repository " + root + " in " + db);
    pf::HybridOptions opt;  // as the chat sets them: serve's repository, 8 context chunks
    opt.base.repo_id = repo->id;
    opt.base.limit = 8;
    size_t chars = 0, hits_total = 0;
    std::vector<double> chat_us;
    for (int pass = -1; pass < repeat; ++pass)
      for (const std::string& q : questions) {
        double t0 = thread_cpu_us();
        auto hits = pf::hybrid_search(*store, q, opt, nullptr);
        std::string prompt = pf::system_prompt(hits, "");
        double us = thread_cpu_us() - t0;
        if (pass < 0) continue;  // warm-up
        chat_us.push_back(us);
        chars += prompt.size();
        hits_total += hits.size();
      }

    std::printf(
        "{\"questions\": %zu, \"repeat\": %d, \"chat_retrieval_us_p50\": %.1f, "
        "\"chat_retrieval_us_p99\": %.1f, \"hits_per_chat\": %.2f, \"prompt_chars\": %.0f}\n",
        questions.size(), repeat, percentile(chat_us, 0.5), percentile(chat_us, 0.99),
        static_cast<double>(hits_total) / static_cast<double>(chat_us.size()),
        static_cast<double>(chars) / static_cast<double>(chat_us.size()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pf_chat_retrieval: %s\n", e.what());
    return 1;
  }
  return 0;
}
