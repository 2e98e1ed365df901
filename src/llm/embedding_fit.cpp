// Fitting texts to an embedding model's input limit (see embedding_fit.h).
#include "llm/embedding_fit.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/log.h"

namespace pf {

struct EmbeddingFitter::Piece {
  size_t text = 0;
  std::string input;
  std::vector<float> vector;
  bool refused = false, too_long = false;
  int requested_tokens = 0;
  std::string error;
};

namespace {

// Back from a cut point to the start of a UTF-8 sequence.
size_t utf8_boundary(const std::string& s, size_t at) {
  while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

std::vector<float> unit(const std::vector<float>& v) {
  double norm = 0;
  for (float x : v) norm += double(x) * x;
  std::vector<float> out(v);
  if (norm > 0)
    for (float& x : out) x = static_cast<float>(x / std::sqrt(norm));
  return out;
}

}  // namespace

std::vector<std::string> split_for_embedding(const std::string& text, size_t max_chars) {
  max_chars = std::max<size_t>(max_chars, 8);
  std::vector<std::string> out;
  size_t at = 0;
  while (text.size() - at > max_chars) {
    size_t end = at + max_chars;
    size_t half = at + max_chars / 2;
    size_t nl = text.rfind('\n', end - 1);
    size_t sp = text.rfind(' ', end - 1);
    size_t cut;
    if (nl != std::string::npos && nl >= half) cut = nl + 1;
    else if (sp != std::string::npos && sp >= half) cut = sp + 1;
    else cut = utf8_boundary(text, end);
    if (cut <= at) cut = end;  // one UTF-8 sequence longer than the window: cut through it
    out.push_back(text.substr(at, cut - at));
    at = cut;
  }
  out.push_back(text.substr(at));
  return out;
}

EmbeddingFitter::EmbeddingFitter(Embedder& embedder, FitOptions options)
    : embedder_(embedder),
      options_(options),
      tokens_per_unit_(options.initial_tokens_per_unit) {}

int EmbeddingFitter::limit_tokens() {
  if (limit_ == 0) limit_ = std::max(embedder_.input_limit().tokens, 8);
  return limit_;
}

int64_t token_units(const std::string& text) {
  int64_t units = 0, run = 0;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      if (run++ % 4 == 0) ++units;
      continue;
    }
    run = 0;
    if (c >= 0x80) {
      if ((c & 0xC0) != 0x80) ++units;  // a sequence's lead byte
    } else if (!std::isspace(c)) {
      ++units;
    }
  }
  return units;
}

// Two more for the [CLS] and [SEP] a BERT-style server adds; the margin lives in the ratio.
double EmbeddingFitter::estimate_tokens(const std::string& text) const {
  return tokens_per_unit_ * static_cast<double>(token_units(text) + 2);
}

std::vector<FittedEmbedding> EmbeddingFitter::embed(const std::vector<std::string>& texts) {
  limit_tokens();
  std::vector<FittedEmbedding> results(texts.size());
  std::vector<size_t> max_chars(texts.size(), 0);
  std::vector<int> refits(texts.size(), 0);
  std::vector<size_t> todo(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) todo[i] = i;
  while (!todo.empty()) {
    std::vector<Piece> pieces;
    for (size_t t : todo) {
      // The window for this text's own density: its length times the share of it that fits.
      double budget = 0.9 * limit_, tokens = estimate_tokens(texts[t]);
      size_t window = tokens <= budget ? texts[t].size() + 1
                                       : static_cast<size_t>(static_cast<double>(texts[t].size()) *
                                                             budget / tokens);
      if (max_chars[t]) window = std::min(window, max_chars[t]);
      std::vector<std::string> parts = split_for_embedding(texts[t], window);
      results[t].cut = parts.size() > static_cast<size_t>(options_.max_pieces);
      if (results[t].cut) parts.resize(static_cast<size_t>(options_.max_pieces));
      for (auto& p : parts) pieces.push_back(Piece{t, std::move(p), {}, false, false, 0, {}});
    }
    send_all(pieces);

    std::vector<size_t> again;
    size_t first = 0;
    for (size_t t : todo) {
      size_t last = first;
      while (last < pieces.size() && pieces[last].text == t) ++last;
      FittedEmbedding& r = results[t];
      r.pieces = static_cast<int>(last - first);
      bool too_long = false;
      std::string refused;
      size_t finer = 0;
      for (size_t i = first; i < last; ++i) {
        const Piece& p = pieces[i];
        if (p.too_long) {
          too_long = true;
          size_t want = p.requested_tokens > limit_
                            ? static_cast<size_t>(static_cast<double>(p.input.size()) * limit_ /
                                                  p.requested_tokens * 0.85)
                            : p.input.size() / 2;
          finer = finer ? std::min(finer, want) : want;
          if (refused.empty()) refused = p.error;
        } else if (p.refused && refused.empty()) {
          refused = p.error;
        }
      }
      if (too_long && ++refits[t] <= options_.max_refits && finer >= 16) {
        max_chars[t] = finer;
        again.push_back(t);
      } else if (too_long || !refused.empty()) {
        r.error = refused.empty() ? "the model refused the text as too long" : refused;
      } else {
        combine(pieces, first, last, r);
      }
      first = last;
    }
    todo = std::move(again);
  }
  return results;
}

// Requests: up to max_inputs pieces and max_tokens estimated tokens each.
void EmbeddingFitter::send_all(std::vector<Piece>& pieces) {
  std::vector<Piece*> group;
  double group_tokens = 0;
  for (Piece& p : pieces) {
    double tokens = estimate_tokens(p.input);
    if (!group.empty() &&
        (group.size() >= static_cast<size_t>(options_.max_inputs_per_request) ||
         group_tokens + tokens > static_cast<double>(options_.max_tokens_per_request))) {
      send(std::move(group));
      group.clear();
      group_tokens = 0;
    }
    group.push_back(&p);
    group_tokens += tokens;
  }
  if (!group.empty()) send(std::move(group));
}

// One piece: the model's own vector. Several: their length-weighted mean direction.
void EmbeddingFitter::combine(std::vector<Piece>& pieces, size_t first, size_t last,
                              FittedEmbedding& r) {
  if (last - first == 1) {
    r.vector = std::move(pieces[first].vector);
    return;
  }
  std::vector<double> sum;
  for (size_t i = first; i < last; ++i) {
    std::vector<float> u = unit(pieces[i].vector);
    if (sum.empty()) sum.assign(u.size(), 0.0);
    if (u.size() != sum.size()) {
      r.error = "the model returned vectors of different sizes for one text";
      return;
    }
    double w = static_cast<double>(pieces[i].input.size());
    for (size_t d = 0; d < u.size(); ++d) sum[d] += w * u[d];
  }
  std::vector<float> v(sum.begin(), sum.end());
  r.vector = unit(v);
}

void EmbeddingFitter::send(std::vector<Piece*> group) {
  if (group.empty()) return;
  std::vector<std::string> inputs;
  for (Piece* p : group) inputs.push_back(p->input);
  ++requests_;
  try {
    EmbeddingBatch batch = embedder_.embed_batch(inputs);
    ++answered_;
    int64_t units = 0;
    for (Piece* p : group) units += token_units(p->input) + 2;
    for (size_t i = 0; i < group.size(); ++i) group[i]->vector = std::move(batch.vectors[i]);
    // The server's usage count says how many tokens a unit is on this text; keep a margin over
    // it, and move slowly, so one batch of long identifiers does not swing the estimate.
    if (batch.prompt_tokens > 0 && units > 0) {
      double seen = 1.15 * static_cast<double>(batch.prompt_tokens) / static_cast<double>(units);
      tokens_per_unit_ = std::clamp(
          learned_ ? 0.7 * tokens_per_unit_ + 0.3 * seen : seen, 0.25, 8.0);
      learned_ = true;
    }
  } catch (const EmbeddingRefused& r) {
    if (r.limit_tokens > 0 && r.limit_tokens < limit_) {
      log::info("llm", "embedding model " + embedder_.model_id() + ": the server takes inputs of " +
                           std::to_string(r.limit_tokens) + " tokens at most, not " +
                           std::to_string(limit_));
      limit_ = r.limit_tokens;
    }
    bool server_error = r.status >= 500 && !r.too_long;
    if (server_error && answered_ == 0) {
      // The server, or an input breaking it? A known-good input on its own tells, where halving
      // a failing server's batch would ask it twice as many times as there are inputs.
      ++requests_;
      try {
        embedder_.embed_batch({"ok"});
      } catch (const Error&) {
        throw Error(r.what());
      }
      ++answered_;
    }
    if (group.size() > 1) {
      if (r.too_long) {
        // Whatever is over the limit by the estimate is split finer without another request.
        std::vector<Piece*> rest;
        for (Piece* p : group) {
          if (estimate_tokens(p->input) > limit_) {
            p->too_long = p->refused = true;
            p->error = r.what();
          } else {
            rest.push_back(p);
          }
        }
        if (rest.size() < group.size()) return send(std::move(rest));
      }
      std::vector<Piece*> second(group.begin() + static_cast<std::ptrdiff_t>(group.size() / 2),
                                 group.end());
      group.resize(group.size() / 2);
      send(std::move(group));
      send(std::move(second));
      return;
    }
    Piece* p = group.front();
    p->refused = true;
    p->too_long = r.too_long;
    p->requested_tokens = r.requested_tokens;
    p->error = r.what();
  }
}

}  // namespace pf
