// The PostgreSQL store's lexical ranking in the database (see pg_search.h).
#include "store/pg_search.h"

#include <algorithm>
#include <chrono>
#include <charconv>
#include <optional>
#include <unordered_set>

#include "core/error.h"
#include "core/log.h"
#include "store/bm25_index.h"
#include "store/fts_tokenizer.h"
#include "store/pg_util.h"
#include "store/stemmer.h"

namespace pf {

using pg::Param;

namespace {

constexpr uint32_t kMaxPgCount = 4095;  // (16383 - 3) / 4: the largest count a position holds
// A term without positions is once in the body (position 4 * 1 + 3).
constexpr std::array<uint32_t, 4> kOnceInTheBody = {0, 0, 0, 1};

// term quoted for tsvector and tsquery input ('...', with ' doubled and \ escaped).
void append_quoted(std::string& out, std::string_view term) {
  out += '\'';
  for (char ch : term) {
    if (ch == '\'' || ch == '\\') out += ch == '\'' ? '\'' : '\\';
    out += ch;
  }
  out += '\'';
}

// A big-endian integer of 2, 4 or 8 bytes, as binary results carry them; throws on another size.
int64_t big_endian(std::string_view bytes) {
  if (bytes.size() != 2 && bytes.size() != 4 && bytes.size() != 8)
    throw Error("unexpected integer of " + std::to_string(bytes.size()) + " bytes from the store");
  uint64_t v = 0;
  for (unsigned char ch : bytes) v = (v << 8) | ch;
  return static_cast<int64_t>(v);
}

// A non-negative integer at the start of s (advancing it); false when there is none.
bool read_number(std::string_view& s, int64_t& v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v < 0) return false;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return true;
}

}  // namespace

std::string pg_vector_version() { return std::string(kTokenizerVersion) + "+counts"; }

PgChunkTerms pg_chunk_terms(const Chunk& c) {
  PgChunkTerms out;
  const std::string symbols = c.function_name + " " + c.class_name + " " + c.symbol;
  const std::string_view columns[4] = {symbols, c.path, c.heading_path, c.content};
  StemBuffer stem;
  RowTermCounts counts;
  out.length = count_row_terms(columns, stem, counts);
  out.terms.reserve(counts.size());
  for (const auto& [term, tf] : counts) out.terms.push_back(term);
  std::sort(out.terms.begin(), out.terms.end());  // the same text for the same chunk
  for (const std::string& term : out.terms) {
    if (!out.vector.empty()) out.vector += ' ';
    append_quoted(out.vector, term);
    const auto& tf = counts.find(term)->second;
    if (tf == kOnceInTheBody) continue;  // no positions: half the terms of a chunk, 4 bytes each
    char sep = ':';
    for (uint32_t col = 0; col < 4; ++col) {
      if (tf[col] == 0) continue;
      out.vector += sep;
      out.vector += std::to_string(4 * std::min(tf[col], kMaxPgCount) + col);
      sep = ',';
    }
  }
  return out;
}

void pg_vector_counts(std::string_view v, const std::vector<std::string>& terms,
                      std::vector<BoundedTopK::Counts>& counts) {
  counts.assign(terms.size(), BoundedTopK::Counts{});
  auto take = [&](size_t bytes) {
    if (v.size() < bytes) throw Error("a search vector from the store is cut short");
    std::string_view out = v.substr(0, bytes);
    v.remove_prefix(bytes);
    return static_cast<uint64_t>(big_endian(out));
  };
  const uint64_t lexemes = take(4);
  for (uint64_t l = 0; l < lexemes; ++l) {
    const size_t nul = v.find('\0');
    if (nul == std::string_view::npos) throw Error("a search vector from the store is cut short");
    const std::string_view lexeme = v.substr(0, nul);
    v.remove_prefix(nul + 1);
    const uint64_t positions = take(2);
    size_t k = 0;
    while (k < terms.size() && terms[k] != lexeme) ++k;
    if (positions == 0 && k < terms.size()) counts[k] = kOnceInTheBody;
    for (uint64_t p = 0; p < positions; ++p) {
      const uint64_t pos = take(2) & 0x3fff;  // the top two bits are the weight
      if (k < terms.size()) counts[k][pos % 4] = static_cast<uint32_t>(pos / 4);
    }
  }
  if (!v.empty()) throw Error("a search vector from the store has bytes past its end");
}

std::string pg_tsquery_pairs(const std::vector<std::string>& terms) {
  std::vector<std::string> distinct;
  for (const std::string& t : terms)
    if (std::find(distinct.begin(), distinct.end(), t) == distinct.end()) distinct.push_back(t);
  if (distinct.size() < 2 || distinct.size() > kMaxPairedTerms) return {};
  std::string out;
  for (size_t a = 0; a < distinct.size(); ++a)
    for (size_t b = a + 1; b < distinct.size(); ++b) {
      if (!out.empty()) out += " | ";
      out += '(';
      append_quoted(out, distinct[a]);
      out += " & ";
      append_quoted(out, distinct[b]);
      out += ')';
    }
  return out;
}

std::string pg_tsquery_any(const std::vector<std::string>& terms) {
  std::string out;
  for (const std::string& t : terms) {
    if (!out.empty()) out += " | ";
    append_quoted(out, t);
  }
  return out;
}

void PgLexicalDeltas::add(const std::vector<std::string>& terms, uint32_t length, int sign) {
  for (const std::string& t : terms) rows_with_term_[t] += sign;
  rows_ += sign;
  tokens_ += sign * static_cast<int64_t>(length);
}

const char* PgLexicalDeltas::deleted_columns() {
  return " RETURNING coalesce(lexical_length, 0), "
         "array_to_string(tsvector_to_array(\"searchVector\"), ' ')";
}

void PgLexicalDeltas::add_deleted(const std::vector<std::pair<int64_t, std::string>>& rows) {
  std::vector<std::string> terms;
  for (const auto& [length, joined] : rows) {
    terms.clear();
    std::string_view s = joined;  // index terms hold no space
    while (!s.empty()) {
      size_t sp = s.find(' ');
      if (sp != 0) terms.emplace_back(s.substr(0, sp));
      if (sp == std::string_view::npos) break;
      s.remove_prefix(sp + 1);
    }
    add(terms, static_cast<uint32_t>(length), -1);
  }
}

void PgLexicalDeltas::flush(pg::Connection& c) {
  if (rows_ == 0 && tokens_ == 0 && rows_with_term_.empty()) return;
  std::vector<std::string> terms, counts, gone;
  terms.reserve(rows_with_term_.size());
  for (const auto& [term, d] : rows_with_term_)
    if (d != 0) terms.push_back(term);
  std::sort(terms.begin(), terms.end());  // the B-tree's order: neighbouring pages
  for (const std::string& t : terms) {
    int64_t d = rows_with_term_[t];
    counts.push_back(std::to_string(d));
    if (d < 0) gone.push_back(t);
  }
  if (!terms.empty())
    c.exec("INSERT INTO lexical_terms(term, chunks) SELECT * FROM unnest($1::text[], $2::bigint[]) "
           "ON CONFLICT (term) DO UPDATE SET chunks = lexical_terms.chunks + excluded.chunks",
           {Param::text(pg::text_array(terms)), Param::text(pg::text_array(counts))});
  if (!gone.empty())
    c.exec("DELETE FROM lexical_terms WHERE term = ANY($1::text[]) AND chunks <= 0",
           {Param::text(pg::text_array(gone))});
  c.exec("UPDATE pilotfish_meta SET value = (value::bigint + CASE key WHEN 'lexical_rows' THEN $1 "
         "ELSE $2 END::bigint)::text WHERE key IN ('lexical_rows', 'lexical_tokens')",
         {Param::number(rows_), Param::number(tokens_)});
  clear();
}

void PgLexicalDeltas::clear() {
  rows_with_term_.clear();
  rows_ = tokens_ = 0;
}

void pg_recount_lexical_terms(pg::Connection& c) {
  c.run("TRUNCATE lexical_terms;"
        "INSERT INTO lexical_terms(term, chunks) SELECT t, count(*) FROM copilot_code_chunks, "
        "unnest(tsvector_to_array(\"searchVector\")) t GROUP BY t;"
        "UPDATE pilotfish_meta SET value = (SELECT count(*) FROM copilot_code_chunks)::text "
        "WHERE key = 'lexical_rows';"
        "UPDATE pilotfish_meta SET value = (SELECT coalesce(sum(lexical_length), 0) FROM "
        "copilot_code_chunks)::text WHERE key = 'lexical_tokens'");
}

LexicalStats PgSearch::stats(const std::vector<std::string>& terms) {
  auto r = c_.exec(
      "SELECT (SELECT value FROM pilotfish_meta WHERE key = 'lexical_rows'), "
      "(SELECT value FROM pilotfish_meta WHERE key = 'lexical_tokens'), "
      "(SELECT string_agg(coalesce(t.chunks, 0)::text, ' ' ORDER BY q.n) FROM unnest($1::text[]) "
      "WITH ORDINALITY q(term, n) LEFT JOIN lexical_terms t ON t.term = q.term)",
      {Param::text(pg::text_array(terms))});
  LexicalStats s;
  s.rows = r.int64(0, 0);
  s.tokens = r.int64(0, 1);
  std::string_view list = r.view(0, 2);
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t v = 0;
    if (!read_number(list, v)) throw Error("the store's term counts are damaged");
    s.df.push_back(v);
    if (!list.empty() && list.front() == ' ') list.remove_prefix(1);
  }
  return s;
}

namespace {

// "(a) & (b)" of two tsqueries; appended, not concatenated: GCC 12 warns on "(" + string&&.
std::string tsquery_and(const std::string& a, const std::string& b) {
  std::string out = "(";
  out += a;
  out += ") & (";
  out += b;
  out += ")";
  return out;
}

// Reads candidate rows into a ranking: each row once, with every held term's counts.
class CandidateReader {
 public:
  CandidateReader(pg::Connection& c, const LexicalQuery& q, const std::vector<std::string>& held,
                  BoundedTopK& top)
      : c_(c), q_(q), held_(held), top_(top), at_(held.size()), tf_(q.terms.size()) {
    for (size_t i = 0; i < q.terms.size(); ++i)
      for (size_t k = 0; k < held.size(); ++k)
        if (held[k] == q.terms[i]) at_[k].push_back(i);
  }

  // Adds the rows tsquery matches that were not added before.
  void add(const std::string& tsquery) {
    // The vectors whole, in binary: reading the terms' counts out of them here costs a tenth
    // of what unnest() and a filter cost the server (10k rows of "fault" on the Linux tree).
    std::string sql =
        "SELECT c.chunk_id, coalesce(c.lexical_length, 0), c.\"searchVector\" FROM "
        "copilot_code_chunks c WHERE c.\"searchVector\" @@ $1::tsquery";
    std::vector<Param> params = {Param::text(tsquery)};
    if (q_.repo_id) {
      sql += " AND c.repo_id = $2";
      params.push_back(Param::number(*q_.repo_id));
    }
    if (!added_.empty()) {  // rows read already: filtered before their vectors are read
      std::vector<std::string> ids;
      ids.reserve(added_.size());
      for (int64_t id : added_) ids.push_back(std::to_string(id));
      params.push_back(Param::text(pg::text_array(ids)));
      sql += " AND NOT (c.chunk_id = ANY($";
      sql += std::to_string(params.size());
      sql += "::bigint[]))";
    }
    auto r = c_.exec(sql, params, true);
    for (int row = 0; row < r.rows(); ++row) {
      const int64_t rowid = big_endian(r.view(row, 0));
      if (!added_.insert(rowid).second) continue;
      pg_vector_counts(r.view(row, 2), held_, counts_);
      std::fill(tf_.begin(), tf_.end(), BoundedTopK::Counts{});
      for (size_t k = 0; k < held_.size(); ++k)
        for (size_t i : at_[k]) tf_[i] = counts_[k];
      top_.add(rowid, static_cast<uint32_t>(big_endian(r.view(row, 1))), tf_.data());
    }
  }

 private:
  pg::Connection& c_;
  const LexicalQuery& q_;
  const std::vector<std::string>& held_;
  BoundedTopK& top_;
  std::vector<std::vector<size_t>> at_;  // held_'s index -> the query's positions of that term
  std::unordered_set<int64_t> added_;
  std::vector<BoundedTopK::Counts> tf_, counts_;
};

// The most one of terms can add to a row's score, counted each time the query names it.
double largest_term_bound(const BoundedTopK& top, const std::vector<std::string>& query,
                          const std::vector<std::string>& terms) {
  double most = 0;
  for (const std::string& t : terms) {
    double b = 0;
    for (size_t i = 0; i < query.size(); ++i)
      if (query[i] == t) b += top.term_bound(i);
    most = std::max(most, b);
  }
  return most;
}

}  // namespace

std::vector<BoundedTopK::Row> PgSearch::rank(const LexicalQuery& q, bool* exact) {
  if (exact) *exact = true;
  last_candidates_ = 0;
  if (q.terms.empty() || q.limit <= 0) return {};
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = q.terms.size();
  check_stats(q.stats ? &*q.stats : nullptr, n);
  std::optional<pg::Transaction> snapshot;  // the counts and the rows of one snapshot
  if (!c_.in_transaction()) snapshot.emplace(c_, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  const LexicalStats s = q.stats ? *q.stats : stats(q.terms);
  const double w[4] = {q.w_symbols, q.w_path, q.w_headings, q.w_body};
  BoundedTopK top(s.df, static_cast<double>(s.rows), average_length(s), w, q.match_budget, q.limit);
  std::vector<std::string> first, others, held;  // enumerated; the rest some row holds; both
  int64_t first_rows = 0;                        // at most this many rows hold a rare term
  for (size_t i = 0; i < n; ++i) {
    if (top.enumerated()[i]) first.push_back(q.terms[i]), first_rows += s.df[i];
    else if (s.df[i] > 0) others.push_back(q.terms[i]);
    if (s.df[i] > 0 && std::find(held.begin(), held.end(), q.terms[i]) == held.end())
      held.push_back(q.terms[i]);
  }
  if (first.empty()) return {};
  CandidateReader rows(c_, q, held, top);
  const std::string any_first = pg_tsquery_any(first);
  // As Fts5Search::rank: the rows holding a rare term and a common one first, then the rows of
  // rare terms only unless the best of the first already score above anything those can. With
  // two or more common terms and many rare rows, the rows holding a rare term and two common
  // ones come before those holding a rare term and one, which are left out when the best of
  // the first score above anything they can (a common word's rows are most of a rare one's at
  // this size: "page" with "fault").
  bool first_only_rows = true;
  if (!others.empty()) {
    const std::string pairs =
        first_rows >= tiered_from_rows_ ? pg_tsquery_pairs(others) : std::string();
    bool one_common_rows = true;
    if (!pairs.empty()) {
      rows.add(tsquery_and(any_first, pairs));
      one_common_rows = !(top.kth_score() >
                          top.enumerated_bound() + largest_term_bound(top, q.terms, others));
    }
    if (one_common_rows) rows.add(tsquery_and(any_first, pg_tsquery_any(others)));
    first_only_rows = !(top.kth_score() > top.enumerated_bound());
  }
  if (first_only_rows) rows.add(any_first);
  last_candidates_ = top.candidates();
  if (snapshot) snapshot->commit();
  if (top.candidates() == 0) return {};
  bool proved = false;
  std::vector<BoundedTopK::Row> out = top.finish([](int64_t, BoundedTopK::Counts*) {},
                                                 [](int64_t a, int64_t b) { return a < b; },
                                                 &proved);
  if (exact) *exact = proved;
  if (log::enabled(log::Level::kDebug)) {
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
    log::debug("store", "ranked in PostgreSQL: " + std::to_string(top.candidates()) + " rows" +
                            (first_only_rows ? "" : " (none holding rare terms only)") + ", " +
                            (proved ? "exact, " : "bounded, ") +
                            std::to_string(static_cast<int>(ms.count())) + " ms");
  }
  return out;
}

}  // namespace pf
