// The in-memory BM25 ranking (see bm25_index.h).
#include "store/bm25_index.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "store/bounded_rank.h"
#include "store/sqlite_util.h"
#include "store/stemmer.h"

namespace pf {

using sqlite::Statement;

uint64_t Bm25Index::id_hash(std::string_view chunk_id) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a: the same in every process
  for (unsigned char c : chunk_id) h = (h ^ c) * 1099511628211ull;
  return h;
}

Bm25Index::Builder::Builder() : index_(new Bm25Index) {}
Bm25Index::Builder::~Builder() = default;

Bm25Index::Builder::Builder(const Bm25Index& previous, std::vector<RowKey> now,
                            std::vector<int64_t>* missing)
    : index_(new Bm25Index) {
  std::sort(now.begin(), now.end(),
            [](const RowKey& a, const RowKey& b) { return a.rowid < b.rowid; });
  std::unordered_map<int64_t, uint32_t> at;  // previous's doc by rowid
  at.reserve(previous.docs_.size());
  for (uint32_t d = 0; d < previous.docs_.size(); ++d) at.emplace(previous.docs_[d].rowid, d);
  constexpr uint32_t kGone = UINT32_MAX;
  std::vector<uint32_t> remap(previous.docs_.size(), kGone);
  for (const RowKey& k : now) {
    auto it = at.find(k.rowid);
    if (it == at.end() || previous.docs_[it->second].id != k.id) {
      missing->push_back(k.rowid);
      continue;
    }
    const Doc& d = previous.docs_[it->second];
    remap[it->second] = static_cast<uint32_t>(index_->docs_.size());
    index_->docs_.push_back(d);
    paths_.push_back(previous.paths_[d.path]);
    total_tokens_ += d.length;
  }
  // A removed row's postings go with it; the counts of the rows kept are what they were.
  for (const auto& [term, list] : previous.postings_) {
    std::vector<Posting> kept;
    for (const Posting& p : list)
      if (remap[p.doc] != kGone)
        kept.push_back(Posting{remap[p.doc], {p.tf[0], p.tf[1], p.tf[2], p.tf[3]}});
    if (!kept.empty()) index_->postings_.emplace(term, std::move(kept));
  }
  index_->reused_ = index_->docs_.size();
}

uint32_t count_row_terms(const std::string_view (&columns)[4], StemBuffer& stem,
                         RowTermCounts& counts) {
  counts.clear();
  return for_each_row_term(columns, stem, [&](std::string_view term, size_t col) {
    auto it = counts.find(term);
    if (it == counts.end()) it = counts.emplace(std::string(term), std::array<uint32_t, 4>{}).first;
    ++it->second[col];
  });
}

void Bm25Index::Builder::add(int64_t rowid, uint64_t id, int64_t repo_id,
                             const std::string_view (&columns)[4], int64_t start_line) {
  if (!index_) return;
  const uint32_t length = count_row_terms(columns, stem_, row_);
  uint32_t doc = static_cast<uint32_t>(index_->docs_.size());
  paths_.emplace_back(columns[1]);
  index_->docs_.push_back(Doc{rowid, repo_id, length, 0, start_line, id});
  total_tokens_ += length;
  for (auto& [term, tf] : row_) {
    Posting p{doc, {}};
    for (size_t c = 0; c < 4; ++c) {
      if (tf[c] > UINT16_MAX) {  // over the compact layout: no index
        index_.reset();
        return;
      }
      p.tf[c] = static_cast<uint16_t>(tf[c]);
    }
    auto it = index_->postings_.find(term);
    if (it == index_->postings_.end()) it = index_->postings_.emplace(term, std::vector<Posting>{}).first;
    it->second.push_back(p);
  }
}

std::shared_ptr<const Bm25Index> Bm25Index::Builder::finish() {
  if (!index_) return nullptr;
  // Paths by rank, so ties compare two integers.
  std::vector<std::string> sorted = paths_;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (size_t d = 0; d < paths_.size(); ++d)
    index_->docs_[d].path = static_cast<uint32_t>(
        std::lower_bound(sorted.begin(), sorted.end(), paths_[d]) - sorted.begin());
  index_->tokens_ = total_tokens_;
  if (!index_->docs_.empty())
    index_->avgdl_ = static_cast<double>(total_tokens_) / static_cast<double>(index_->docs_.size());
  size_t bytes = index_->docs_.capacity() * sizeof(Doc);
  for (const std::string& p : sorted) bytes += p.capacity() + sizeof(p);
  index_->paths_ = std::move(sorted);
  for (auto& [term, list] : index_->postings_) {
    // By doc, for rank()'s lookups. Rows come in rowid order and a new row's rowid is above
    // every kept one's, so this holds already; sorting keeps it true if that ever changes.
    auto by_doc = [](const Posting& a, const Posting& b) { return a.doc < b.doc; };
    if (!std::is_sorted(list.begin(), list.end(), by_doc)) std::sort(list.begin(), list.end(), by_doc);
    list.shrink_to_fit();
    bytes += term.capacity() + sizeof(term) + list.capacity() * sizeof(Posting) + 32;
  }
  index_->bytes_ = bytes;
  return std::shared_ptr<const Bm25Index>(std::move(index_));
}

namespace {

// The four FTS columns exactly as schema.h's PF_FTS_VALUES makes them (trim() only drops
// spaces, which the tokenizer skips anyway), after chunk_id, id and repo_id; startLine last.
constexpr const char* kRowColumns =
    "SELECT chunk_id, id, repo_id, coalesce(functionName,'') || ' ' || coalesce(className,'') || "
    "' ' || coalesce(symbol,''), path, coalesce(heading_path,''), pf_text(content), startLine "
    "FROM copilot_code_chunks ";

void add_row(Bm25Index::Builder& builder, Statement& st) {
  std::string cols[4] = {st.text(3), st.text(4), st.text(5), st.text(6)};
  const std::string_view views[4] = {cols[0], cols[1], cols[2], cols[3]};
  builder.add(st.int64(0), Bm25Index::id_hash(st.text(1)), st.int64(2), views, st.int64(7));
}

}  // namespace

std::shared_ptr<const Bm25Index> Bm25Index::build(sqlite3* db, int64_t max_bytes,
                                                  const Bm25Index* previous) {
  {
    // From the files' sizes, which the chunks' content adds up to: one row a file, never the
    // chunks themselves (summing their length read every page of a 2.4 GB store, 3 s a search).
    Statement size(db, "SELECT coalesce(sum(size), 0) FROM files");
    if (size.step() && size.int64(0) > max_bytes) return nullptr;
  }
  if (previous) {
    std::vector<RowKey> now;
    Statement keys(db, "SELECT chunk_id, id FROM copilot_code_chunks");
    while (keys.step()) now.push_back(RowKey{keys.int64(0), id_hash(keys.text(1))});
    size_t rows = now.size();
    std::vector<int64_t> missing;
    Builder builder(*previous, std::move(now), &missing);
    if (missing.size() * 2 <= rows) {  // else reading everything costs about the same
      Statement row(db, std::string(kRowColumns) + "WHERE chunk_id = ?");
      for (int64_t rowid : missing) {
        row.bind(1, rowid);
        if (row.step()) add_row(builder, row);
        row.reset();
      }
      return builder.finish();
    }
  }
  Statement st(db, std::string(kRowColumns) + "ORDER BY chunk_id");
  Builder builder;
  while (st.step()) add_row(builder, st);
  return builder.finish();
}

std::vector<Bm25Index::Hit> Bm25Index::rank(const std::vector<std::string>& terms,
                                            const double (&w)[4], std::optional<int64_t> repo,
                                            int limit, int64_t match_budget, bool* exact,
                                            const LexicalStats* stats) const {
  if (exact) *exact = true;
  if (limit <= 0 || docs_.empty()) return {};
  const size_t n = terms.size();
  check_stats(stats, n);
  std::vector<const std::vector<Posting>*> lists(n, nullptr);
  std::vector<int64_t> df(n, 0);
  for (size_t i = 0; i < n; ++i) {
    auto it = postings_.find(terms[i]);
    if (it == postings_.end()) continue;
    lists[i] = &it->second;
    df[i] = static_cast<int64_t>(it->second.size());
  }
  BoundedTopK top = stats ? BoundedTopK(stats->df, static_cast<double>(stats->rows),
                                        average_length(*stats), w, match_budget, limit)
                          : BoundedTopK(df, static_cast<double>(docs_.size()), avgdl_, w,
                                        match_budget, limit);
  // The enumerated terms' counts per row they reach, in a scratch slot per row: stamped per
  // search instead of cleared.
  thread_local std::vector<uint32_t> slot, stamp;
  thread_local uint32_t round = 0;
  if (slot.size() < docs_.size()) {
    slot.assign(docs_.size(), 0);
    stamp.assign(docs_.size(), 0);
  }
  if (++round == 0) {
    std::fill(stamp.begin(), stamp.end(), 0);
    round = 1;
  }
  std::vector<uint32_t> touched;
  std::vector<BoundedTopK::Counts> counts;
  for (size_t i = 0; i < n; ++i) {
    if (!top.enumerated()[i] || !lists[i]) continue;
    for (const Posting& p : *lists[i]) {
      if (repo && docs_[p.doc].repo_id != *repo) continue;
      if (stamp[p.doc] != round) {
        stamp[p.doc] = round;
        slot[p.doc] = static_cast<uint32_t>(touched.size());
        touched.push_back(p.doc);
        counts.resize(counts.size() + n, BoundedTopK::Counts{});
      }
      counts[slot[p.doc] * n + i] = {p.tf[0], p.tf[1], p.tf[2], p.tf[3]};
    }
  }
  // BoundedTopK's row ids are doc numbers here.
  for (size_t k = 0; k < touched.size(); ++k)
    top.add(touched[k], docs_[touched[k]].length, counts.data() + k * n);
  auto fill = [&](int64_t doc, BoundedTopK::Counts* tf) {
    for (size_t i = 0; i < n; ++i) {
      if (top.enumerated()[i] || !lists[i]) continue;
      auto it = std::lower_bound(lists[i]->begin(), lists[i]->end(), static_cast<uint32_t>(doc),
                                 [](const Posting& p, uint32_t d) { return p.doc < d; });
      if (it != lists[i]->end() && it->doc == doc) tf[i] = {it->tf[0], it->tf[1], it->tf[2], it->tf[3]};
    }
  };
  auto before = [&](int64_t a, int64_t c) {
    const Doc &da = docs_[static_cast<size_t>(a)], &dc = docs_[static_cast<size_t>(c)];
    if (da.path != dc.path) return da.path < dc.path;
    if (da.start_line != dc.start_line) return da.start_line < dc.start_line;
    return da.rowid < dc.rowid;
  };
  std::vector<Hit> out;
  for (const BoundedTopK::Row& r : top.finish(fill, before, exact))
    out.push_back(Hit{docs_[static_cast<size_t>(r.rowid)].rowid, -1.0 * r.score});
  return out;
}

int64_t Bm25Index::doc_frequency(std::string_view term) const {
  auto it = postings_.find(term);
  return it == postings_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::vector<StoredChunk> ranked_rows(const Bm25Index& index, const LexicalQuery& q,
                                     const RowReader& read_rows) {
  const double weights[4] = {q.w_symbols, q.w_path, q.w_headings, q.w_body};
  std::vector<BoundedTopK::Row> top;
  for (const Bm25Index::Hit& h : index.rank(q.terms, weights, q.repo_id, q.limit, q.match_budget,
                                            nullptr, q.stats ? &*q.stats : nullptr))
    top.push_back({h.rowid, -h.score});
  return read_ranked(top, q.with_content, read_rows);
}

}  // namespace pf
