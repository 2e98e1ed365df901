// The PostgreSQL store's lexical ranking in the database (see pg_search.h).
#include "store/pg_search.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_set>
#include <utility>

#include "core/error.h"
#include "core/log.h"
#include "store/fts_tokenizer.h"
#include "store/pg_segments.h"
#include "store/pg_util.h"

namespace pf {

namespace {

// The store's rows and tokens, as each batch keeps them.
void read_totals(pg::Connection& c, LexicalStats& s) {
  auto r = c.exec("SELECT (SELECT value FROM pilotfish_meta WHERE key = 'lexical_rows'), "
                  "(SELECT value FROM pilotfish_meta WHERE key = 'lexical_tokens')");
  s.rows = r.int64(0, 0);
  s.tokens = r.int64(0, 1);
}

// A row's counts of a term from its live postings (in chunk order); zeros when it has none.
BoundedTopK::Counts counts_of(const std::vector<PgLivePosting>& live, int64_t chunk) {
  auto it = std::lower_bound(live.begin(), live.end(), chunk,
                             [](const PgLivePosting& p, int64_t c) { return p.chunk < c; });
  return it != live.end() && it->chunk == chunk ? it->counts : BoundedTopK::Counts{};
}

}  // namespace

std::string pg_postings_version() { return std::string(kTokenizerVersion) + "+postings1"; }

LexicalStats PgSearch::stats(const std::vector<std::string>& terms) {
  LexicalStats s;
  read_totals(c_, s);
  for (const PgTermRead& t : pg_read_terms(c_, terms, false, std::nullopt)) s.df.push_back(t.df);
  return s;
}

std::vector<BoundedTopK::Row> PgSearch::rank(const LexicalQuery& q, bool* exact) {
  if (exact) *exact = true;
  last_candidates_ = 0;
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
  const std::vector<PgTermRead> read = pg_read_terms(c_, distinct, true, q.repo_id);
  LexicalStats s;
  if (q.stats) {
    s = *q.stats;
  } else {
    read_totals(c_, s);
    for (size_t i = 0; i < n; ++i) s.df.push_back(read[at[i]].df);
  }
  const double w[4] = {q.w_symbols, q.w_path, q.w_headings, q.w_body};
  BoundedTopK top(s.df, static_cast<double>(s.rows), average_length(s), w, q.match_budget, q.limit);
  std::vector<std::pair<int64_t, int64_t>> rows;  // (chunk, the segment keeping its length)
  std::unordered_set<int64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    if (!top.enumerated()[i]) continue;
    for (const PgLivePosting& p : read[at[i]].live)
      if (seen.insert(p.chunk).second) rows.emplace_back(p.chunk, p.segment);
  }
  if (rows.empty()) return {};
  const std::map<int64_t, uint32_t> lengths = pg_read_lengths(c_, rows);
  if (snapshot) snapshot->commit();
  std::vector<BoundedTopK::Counts> tf(n);
  for (const auto& [chunk, segment] : rows) {
    auto length = lengths.find(chunk);
    if (length == lengths.end()) throw Error("the store's postings name a chunk without a length");
    for (size_t i = 0; i < n; ++i)
      tf[i] = top.enumerated()[i] ? counts_of(read[at[i]].live, chunk) : BoundedTopK::Counts{};
    top.add(chunk, length->second, tf.data());
  }
  last_candidates_ = top.candidates();
  bool proved = false;
  auto fill = [&](int64_t chunk, BoundedTopK::Counts* counts) {
    for (size_t i = 0; i < n; ++i)
      if (!top.enumerated()[i]) counts[i] = counts_of(read[at[i]].live, chunk);
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
