// The in-memory BM25 ranking (see bm25_index.h).
#include "store/bm25_index.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

#include "core/log.h"
#include "store/code_tokenizer.h"
#include "store/sqlite_util.h"
#include "store/stemmer.h"

namespace pf {

using sqlite::Statement;

std::shared_ptr<const Bm25Index> Bm25Index::build(sqlite3* db, int64_t max_bytes) {
  {
    Statement size(db,
                   "SELECT coalesce(sum(length(content) + length(path) + "
                   "length(coalesce(heading_path,''))), 0) FROM copilot_code_chunks");
    if (size.step() && size.int64(0) > max_bytes) return nullptr;
  }
  auto index = std::shared_ptr<Bm25Index>(new Bm25Index);
  // The four FTS columns exactly as schema.h's PF_FTS_VALUES makes them (trim() only drops
  // spaces, which the tokenizer skips anyway).
  Statement st(db,
               "SELECT chunk_id, repo_id, coalesce(functionName,'') || ' ' || "
               "coalesce(className,'') || ' ' || coalesce(symbol,''), path, "
               "coalesce(heading_path,''), content, startLine FROM copilot_code_chunks "
               "ORDER BY chunk_id");
  std::unordered_map<std::string, std::array<uint32_t, 4>, Hash, std::equal_to<>> row;
  std::vector<std::string> paths;
  StemBuffer stem;
  int64_t total_tokens = 0;
  while (st.step()) {
    uint32_t length = 0;
    for (int col = 0; col < 4; ++col) {
      std::string text = st.text(2 + col);
      uint32_t column_size = 0;
      for_each_code_token(text, true, [&](std::string_view tok, bool is_part, size_t, size_t) {
        // FTS5 counts a token unless it is colocated with the one before (fts5_storage.c).
        if (!is_part || column_size == 0) ++column_size;
        std::string_view term = stem_word(tok, stem);
        auto it = row.find(term);
        if (it == row.end()) it = row.emplace(std::string(term), std::array<uint32_t, 4>{}).first;
        ++it->second[static_cast<size_t>(col)];
      });
      length += column_size;
    }
    uint32_t doc = static_cast<uint32_t>(index->docs_.size());
    paths.push_back(st.text(3));
    index->docs_.push_back(Doc{st.int64(0), st.int64(1), length, 0, st.int64(6)});
    total_tokens += length;
    for (auto& [term, tf] : row) {
      Posting p{doc, {}};
      for (size_t c = 0; c < 4; ++c) {
        if (tf[c] > UINT16_MAX) return nullptr;
        p.tf[c] = static_cast<uint16_t>(tf[c]);
      }
      auto it = index->postings_.find(term);
      if (it == index->postings_.end()) it = index->postings_.emplace(term, std::vector<Posting>{}).first;
      it->second.push_back(p);
    }
    row.clear();
  }
  // Paths by rank, so ties compare two integers.
  std::vector<std::string> sorted = paths;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (size_t d = 0; d < paths.size(); ++d)
    index->docs_[d].path = static_cast<uint32_t>(
        std::lower_bound(sorted.begin(), sorted.end(), paths[d]) - sorted.begin());
  if (!index->docs_.empty())
    index->avgdl_ = static_cast<double>(total_tokens) / static_cast<double>(index->docs_.size());
  size_t bytes = index->docs_.capacity() * sizeof(Doc);
  for (auto& [term, list] : index->postings_) {
    list.shrink_to_fit();
    bytes += term.capacity() + sizeof(term) + list.capacity() * sizeof(Posting) + 32;
  }
  index->bytes_ = bytes;
  return index;
}

std::vector<Bm25Index::Hit> Bm25Index::rank(const std::vector<std::string>& terms,
                                            const double (&w)[4], std::optional<int64_t> repo,
                                            int limit) const {
  if (limit <= 0 || docs_.empty()) return {};
  const double k1 = 1.2, b = 0.75;
  const double n_row = static_cast<double>(docs_.size());
  // Scratch per thread, stamped instead of cleared.
  thread_local std::vector<double> score;
  thread_local std::vector<uint32_t> stamp;
  thread_local uint32_t round = 0;
  if (score.size() < docs_.size()) {
    score.assign(docs_.size(), 0.0);
    stamp.assign(docs_.size(), 0);
  }
  if (++round == 0) {
    std::fill(stamp.begin(), stamp.end(), 0);
    round = 1;
  }
  std::vector<uint32_t> touched;
  for (const std::string& term : terms) {
    auto it = postings_.find(term);
    if (it == postings_.end()) continue;
    const std::vector<Posting>& list = it->second;
    const double n_hit = static_cast<double>(list.size());
    double idf = std::log((n_row - n_hit + 0.5) / (n_hit + 0.5));
    if (idf <= 0.0) idf = 1e-6;
    for (const Posting& p : list) {
      const Doc& d = docs_[p.doc];
      if (repo && d.repo_id != *repo) continue;
      // The weight once per instance, column by column, as bm25() adds them.
      double freq = 0.0;
      for (int c = 0; c < 4; ++c)
        for (uint16_t k = 0; k < p.tf[c]; ++k) freq += w[c];
      const double dl = static_cast<double>(d.length);
      double term_score = idf * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + b * dl / avgdl_)));
      if (stamp[p.doc] != round) {
        stamp[p.doc] = round;
        score[p.doc] = 0.0;
        touched.push_back(p.doc);
      }
      score[p.doc] += term_score;
    }
  }
  auto better = [&](uint32_t a, uint32_t c) {
    double sa = -1.0 * score[a], sc = -1.0 * score[c];
    if (sa != sc) return sa < sc;
    const Doc &da = docs_[a], &dc = docs_[c];
    if (da.path != dc.path) return da.path < dc.path;
    if (da.start_line != dc.start_line) return da.start_line < dc.start_line;
    return da.rowid < dc.rowid;
  };
  size_t keep = std::min(touched.size(), static_cast<size_t>(limit));
  std::partial_sort(touched.begin(), touched.begin() + static_cast<std::ptrdiff_t>(keep),
                    touched.end(), better);
  std::vector<Hit> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i)
    out.push_back(Hit{docs_[touched[i]].rowid, -1.0 * score[touched[i]]});
  return out;
}

int64_t Bm25Index::doc_frequency(std::string_view term) const {
  auto it = postings_.find(term);
  return it == postings_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::shared_ptr<const Bm25Index> shared_bm25_index(sqlite3* db, const std::string& store_key,
                                                   int64_t generation, int64_t max_bytes) {
  struct Entry {
    int64_t generation = -1;
    std::shared_ptr<const Bm25Index> index;
    std::chrono::steady_clock::time_point built{};
    bool building = false;
  };
  static std::mutex mu;
  static std::map<std::string, Entry> cache;
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu);
    Entry& e = cache[store_key];
    if (e.generation == generation) return e.index;
    if (e.building || (e.generation >= 0 && now - e.built < std::chrono::seconds(1))) return nullptr;
    e.building = true;
  }
  std::shared_ptr<const Bm25Index> index;
  try {
    index = Bm25Index::build(db, max_bytes);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - now).count();
    log::debug("store", index ? "ranking " + std::to_string(index->rows()) + " chunks in memory (" +
                                    std::to_string(index->memory_bytes() >> 10) + " KiB, built in " +
                                    std::to_string(static_cast<int>(ms)) + " ms)"
                              : std::string("store too large to rank in memory; FTS5 ranks"));
  } catch (...) {
    std::lock_guard lock(mu);
    cache[store_key].building = false;
    throw;
  }
  std::lock_guard lock(mu);
  Entry& e = cache[store_key];
  e.building = false;
  if (generation >= e.generation) e = Entry{generation, index, now, false};
  return index;
}

std::optional<std::vector<std::string>> or_query_terms(std::string_view match) {
  std::vector<std::string> terms;
  size_t i = 0;
  while (i < match.size()) {
    if (!terms.empty()) {
      if (match.substr(i, 4) != " OR ") return std::nullopt;
      i += 4;
    }
    if (i >= match.size() || match[i] != '"') return std::nullopt;
    size_t end = match.find('"', i + 1);
    if (end == std::string_view::npos || end == i + 1) return std::nullopt;
    std::string_view term = match.substr(i + 1, end - i - 1);
    // One index token: lower-case word bytes, and '-' inside (the tokenizer joins "keep-alive").
    if (term.front() == '-' || term.back() == '-') return std::nullopt;
    for (unsigned char c : term)
      if ((!detail::is_word_byte(c) && c != '-') || detail::is_upper(c)) return std::nullopt;
    if (term.size() > kMaxTokenBytes) return std::nullopt;
    terms.emplace_back(term);
    i = end + 1;
  }
  if (terms.empty()) return std::nullopt;
  return terms;
}

}  // namespace pf
