// Bounded-work top-k over bm25 (see bounded_rank.h).
#include "store/bounded_rank.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.h"

namespace pf {

void check_stats(const LexicalStats* stats, size_t terms) {
  if (stats && stats->df.size() != terms)
    throw Error("lexical statistics give " + std::to_string(stats->df.size()) +
                " term counts for a query of " + std::to_string(terms) + " terms");
}

double average_length(const LexicalStats& stats) {
  return stats.rows > 0 ? static_cast<double>(stats.tokens) / static_cast<double>(stats.rows) : 0.0;
}

double bm25_idf(double rows, double rows_with_term) {
  double idf = std::log((rows - rows_with_term + 0.5) / (rows_with_term + 0.5));
  return idf <= 0.0 ? 1e-6 : idf;
}

double bm25_share(double idf, const std::array<uint32_t, 4>& tf, const double (&w)[4], double dl,
                  double avgdl) {
  // The weight once per instance, column by column, as bm25() adds them.
  double freq = 0.0;
  for (int c = 0; c < 4; ++c)
    for (uint32_t k = 0; k < tf[static_cast<size_t>(c)]; ++k) freq += w[c];
  return idf * ((freq * (kBm25K1 + 1.0)) / (freq + kBm25K1 * (1 - kBm25B + kBm25B * dl / avgdl)));
}

std::vector<bool> terms_to_enumerate(const std::vector<int64_t>& df, int64_t budget,
                                     int limit) {
  std::vector<bool> keep(df.size(), false);
  std::vector<size_t> order;
  int64_t total = 0;
  for (size_t i = 0; i < df.size(); ++i) {
    if (df[i] <= 0) continue;  // matches nothing
    order.push_back(i);
    total += df[i];
  }
  if (budget <= 0 || total <= budget) {
    for (size_t i : order) keep[i] = true;
    return keep;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return df[a] < df[b]; });
  int64_t used = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t d = df[order[k]];
    if (k > 0 && used + d > budget && (used >= limit || d > budget)) break;
    keep[order[k]] = true;
    used += df[order[k]];
  }
  return keep;
}

BoundedTopK::BoundedTopK(const std::vector<int64_t>& df, double rows, double avgdl,
                         const double (&weights)[4], int64_t budget, int limit)
    : enumerated_(terms_to_enumerate(df, budget, limit)), avgdl_(avgdl), limit_(limit) {
  std::copy(std::begin(weights), std::end(weights), weights_);
  idf_.reserve(df.size());
  for (size_t i = 0; i < df.size(); ++i) {
    idf_.push_back(bm25_idf(rows, static_cast<double>(df[i])));
    // A share is idf * freq * (k1 + 1) / (freq + k1 * D): below idf * (k1 + 1) for any freq.
    if (df[i] > 0) (enumerated_[i] ? enumerated_bound_ : rest_bound_) += idf_[i] * (kBm25K1 + 1.0);
  }
}

void BoundedTopK::add(int64_t rowid, uint32_t dl, const Counts* tf) {
  counts_.insert(counts_.end(), tf, tf + idf_.size());
  candidates_.push_back(Candidate{rowid, dl, 0.0});
  candidates_.back().partial = score(candidates_.size() - 1, false);
}

double BoundedTopK::score(size_t candidate, bool all_terms) const {
  const Candidate& c = candidates_[candidate];
  const Counts* tf = counts_.data() + candidate * idf_.size();
  // Query order, as bm25() adds the phrases' shares; a term the row lacks adds exactly 0.
  double sum = 0.0;
  for (size_t i = 0; i < idf_.size(); ++i) {
    if (!all_terms && !enumerated_[i]) continue;
    if (tf[i][0] + tf[i][1] + tf[i][2] + tf[i][3] == 0) continue;
    sum += bm25_share(idf_[i], tf[i], weights_, c.dl, avgdl_);
  }
  return sum;
}

double BoundedTopK::kth_score() const {
  const size_t k = static_cast<size_t>(std::max(limit_, 0));
  if (k == 0 || candidates_.size() < k) return -std::numeric_limits<double>::infinity();
  std::vector<double> scores(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i) scores[i] = score(i, true);
  std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(k - 1),
                   scores.end(), std::greater<double>());
  // Above the bound by more than rounding, or not above it.
  return scores[k - 1] / (1 + 1e-9);
}

std::vector<BoundedTopK::Row> BoundedTopK::finish(
    const std::function<void(int64_t, Counts*)>& fill,
    const std::function<bool(int64_t, int64_t)>& before, bool* exact) {
  const bool complete = rest_bound_ == 0.0;
  // Rounding in the sums is far below this margin; a share never reaches its bound.
  const double bound = rest_bound_ * (1 + 1e-9);
  auto worse = [&](const Row& a, const Row& b) {  // a ranks below b
    if (a.score != b.score) return a.score < b.score;
    return before(b.rowid, a.rowid);
  };
  // Candidates by partial score, best on top: most searches stop after a few dozen.
  std::vector<uint32_t> order(candidates_.size());
  std::iota(order.begin(), order.end(), 0u);
  auto lower_partial = [&](uint32_t a, uint32_t b) {
    const Candidate &x = candidates_[a], &y = candidates_[b];
    if (x.partial != y.partial) return x.partial < y.partial;
    return x.rowid > y.rowid;
  };
  std::make_heap(order.begin(), order.end(), lower_partial);
  // The best rows so far, the worst of them on top (a min-heap under `worse`).
  std::vector<Row> top;
  auto better_on_top = [&](const Row& a, const Row& b) { return worse(b, a); };
  const size_t limit = static_cast<size_t>(std::max(limit_, 0));
  for (auto end = order.end(); limit > 0 && end != order.begin(); --end) {
    std::pop_heap(order.begin(), end, lower_partial);
    const uint32_t i = *(end - 1);
    const Candidate& c = candidates_[i];
    if (top.size() == limit && c.partial + bound < top.front().score) break;
    if (!complete) {
      fill(c.rowid, counts_.data() + i * idf_.size());
      ++lookups_;
    }
    Row r{c.rowid, complete ? c.partial : score(i, true)};
    if (top.size() < limit) {
      top.push_back(r);
      std::push_heap(top.begin(), top.end(), better_on_top);
    } else if (worse(top.front(), r)) {
      std::pop_heap(top.begin(), top.end(), better_on_top);
      top.back() = r;
      std::push_heap(top.begin(), top.end(), better_on_top);
    }
  }
  if (exact) *exact = complete || (top.size() == limit && limit > 0 && bound < top.front().score);
  std::sort(top.begin(), top.end(), [&](const Row& a, const Row& b) { return worse(b, a); });
  return top;
}

std::vector<StoredChunk> read_ranked(const std::vector<BoundedTopK::Row>& top, bool with_content,
                                     const RowReader& read_rows) {
  std::vector<int64_t> rowids;
  rowids.reserve(top.size());
  for (const BoundedTopK::Row& r : top) rowids.push_back(r.rowid);
  std::vector<StoredChunk> out = read_rows(rowids, with_content);
  // Matched by rowid: a row may be missing from what was read.
  for (size_t i = 0, t = 0; i < out.size(); ++i) {
    while (t < top.size() && top[t].rowid != out[i].rowid) ++t;
    if (t < top.size()) out[i].score = top[t].score;
  }
  return out;
}

}  // namespace pf
