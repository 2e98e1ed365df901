// The PostgreSQL store's lexical ranking in the database (see pg_search.h).
#include "store/pg_search.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/error.h"
#include "core/log.h"
#include "store/fts_tokenizer.h"
#include "store/pg_segments.h"
#include "store/pg_util.h"

namespace pf {

namespace {

// The rows a search scores: those holding an enumerated term, each once, with its counts of
// every term and the segment that keeps its length.
class Candidates {
 public:
  Candidates(const PgTermBlocks& blocks, const std::vector<bool>& enumerated, size_t terms,
             std::optional<int64_t> repo)
      : terms_(terms) {
    std::unordered_set<int64_t> dead;  // deleted: each of its terms has a tombstone
    PgPosting p;
    for (const auto& e : blocks.entries()) {
      if (!enumerated[e.term] || e.postings.tombstones == 0) continue;
      for (PgPostingReader r(e.postings); r.next(&p);)
        if (p.tombstone()) dead.insert(p.chunk);
    }
    for (const auto& e : blocks.entries()) {
      if (!enumerated[e.term] || (repo && e.repo_id != *repo)) continue;
      for (PgPostingReader r(e.postings); r.next(&p);)
        if (!p.tombstone() && !dead.count(p.chunk) && at_.emplace(p.chunk, rows_.size()).second)
          rows_.emplace_back(p.chunk, e.segment);
    }
    counts_.resize(rows_.size() * terms_);
    fill_counts(blocks);
  }

  // (chunk, segment keeping its length), in the order found.
  const std::vector<std::pair<int64_t, int64_t>>& rows() const { return rows_; }
  const BoundedTopK::Counts& counts(int64_t chunk, size_t term) const {
    return counts_[at_.at(chunk) * terms_ + term];
  }

 private:
  // Every term's counts of each row, from the term's postings in the row's segment (a live
  // chunk's postings are all in the segment that keeps its length), walked once in chunk
  // order beside the segment's rows and left as soon as they are passed.
  void fill_counts(const PgTermBlocks& blocks) {
    std::unordered_map<int64_t, std::vector<std::pair<int64_t, size_t>>> by_segment;
    for (size_t i = 0; i < rows_.size(); ++i)
      by_segment[rows_[i].second].emplace_back(rows_[i].first, i);
    for (auto& [segment, rows] : by_segment) std::sort(rows.begin(), rows.end());
    PgPosting p;
    for (const auto& e : blocks.entries()) {
      auto it = by_segment.find(e.segment);
      if (it == by_segment.end()) continue;
      const auto& rows = it->second;
      size_t k = 0;
      for (PgPostingReader r(e.postings); k < rows.size() && r.next(&p);) {
        while (k < rows.size() && rows[k].first < p.chunk) ++k;
        if (k < rows.size() && rows[k].first == p.chunk && !p.tombstone())
          counts_[rows[k].second * terms_ + e.term] = p.counts;
      }
    }
  }

  size_t terms_;
  std::vector<std::pair<int64_t, int64_t>> rows_;
  std::unordered_map<int64_t, size_t> at_;
  std::vector<BoundedTopK::Counts> counts_;
};

}  // namespace

std::string pg_postings_version() { return std::string(kTokenizerVersion) + "+postings2"; }

LexicalStats PgSearch::stats(const std::vector<std::string>& terms) {
  LexicalStats s;
  const PgSnapshot snap = pg_read_snapshot(c_);
  s.rows = snap.rows;
  s.tokens = snap.tokens;
  const PgTermBlocks blocks(c_, snap, terms);
  for (size_t i = 0; i < terms.size(); ++i) s.df.push_back(blocks.df(i));
  return s;
}

std::vector<BoundedTopK::Row> PgSearch::rank(const LexicalQuery& q, bool* exact) {
  if (exact) *exact = true;
  if (q.terms.empty() || q.limit <= 0) return {};
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = q.terms.size();
  check_stats(q.stats ? &*q.stats : nullptr, n);
  std::optional<pg::Transaction> snapshot;  // the counts, postings and lengths of one snapshot
  if (!c_.in_transaction()) snapshot.emplace(c_, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  std::vector<std::string> distinct;
  std::vector<size_t> at(n);  // the query's term i is distinct[at[i]]
  for (size_t i = 0; i < n; ++i) {
    auto it = std::find(distinct.begin(), distinct.end(), q.terms[i]);
    at[i] = static_cast<size_t>(it - distinct.begin());
    if (it == distinct.end()) distinct.push_back(q.terms[i]);
  }
  const PgSnapshot snap = pg_read_snapshot(c_);
  const PgTermBlocks blocks(c_, snap, distinct);
  LexicalStats s;
  if (q.stats) {
    s = *q.stats;
  } else {
    s.rows = snap.rows;
    s.tokens = snap.tokens;
    for (size_t i = 0; i < n; ++i) s.df.push_back(blocks.df(at[i]));
  }
  const double w[4] = {q.w_symbols, q.w_path, q.w_headings, q.w_body};
  BoundedTopK top(s.df, static_cast<double>(s.rows), average_length(s), w, q.match_budget, q.limit);
  std::vector<bool> enumerated(distinct.size(), false);
  for (size_t i = 0; i < n; ++i)
    if (top.enumerated()[i]) enumerated[at[i]] = true;
  const Candidates rows(blocks, enumerated, distinct.size(), q.repo_id);
  if (rows.rows().empty()) return {};
  const std::vector<int64_t> lengths = pg_read_lengths(c_, snap, rows.rows());
  if (snapshot) snapshot->commit();
  std::vector<BoundedTopK::Counts> tf(n);
  for (size_t r = 0; r < rows.rows().size(); ++r) {
    const int64_t chunk = rows.rows()[r].first;
    if (lengths[r] < 0) throw Error("the store's postings name a chunk without a length");
    for (size_t i = 0; i < n; ++i) tf[i] = rows.counts(chunk, at[i]);
    top.add(chunk, static_cast<uint32_t>(lengths[r]), tf.data());
  }
  bool proved = false;
  auto fill = [&](int64_t chunk, BoundedTopK::Counts* counts) {
    for (size_t i = 0; i < n; ++i)
      if (!top.enumerated()[i]) counts[i] = rows.counts(chunk, at[i]);
  };
  std::vector<BoundedTopK::Row> out =
      top.finish(fill, [](int64_t a, int64_t b) { return a < b; }, &proved);
  if (exact) *exact = proved;
  if (log::enabled(log::Level::kDebug)) {
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
    log::debug("store", "ranked in PostgreSQL: " + std::to_string(top.candidates()) + " rows, " +
                            (proved ? "exact, " : "bounded, ") +
                            std::to_string(static_cast<int>(ms.count())) + " ms");
  }
  return out;
}

}  // namespace pf
