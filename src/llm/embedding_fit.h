// Fitting texts to an embedding model: every text is cut into pieces the model takes before it
// is sent, so embedding never depends on every chunk fitting. Without the model's tokenizer, a
// text's tokens are estimated from its "units" (each punctuation mark, each non-ASCII character,
// each run of up to 4 letters or digits: what subword vocabularies split on), times a ratio
// learned from the token counts the server reports, so prose and punctuation-dense code are both
// estimated by their own density. A text longer than the model's
// input limit is split at line ends into pieces, each embedded, and its vector is the mean of
// theirs weighted by length (unit length). Requests group pieces by count and estimated tokens.
// A refused group is halved until the one input at fault is found; an input refused as too long
// is split finer (by the sizes the refusal names, else in half) and sent again; an input refused
// for any other reason is reported with the server's reason, and the others go on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llm/embeddings.h"

namespace pf {

struct FittedEmbedding {
  std::vector<float> vector;  // empty when the model refused the text
  std::string error;          // why, when it did
  int pieces = 0;             // how many inputs the text was sent as (1: it fit whole)
  bool cut = false;           // the text was longer than max_pieces pieces: its tail is left out
};

struct FitOptions {
  int max_inputs_per_request = 50;
  int64_t max_tokens_per_request = 32768;  // estimated; OpenAI takes 300k, others less
  int max_pieces = 16;
  double initial_tokens_per_unit = 1.5;  // until the server's usage counts say otherwise
  int max_refits = 6;                    // times one text is split finer before it is refused
};

// Not thread-safe: one caller at a time (the indexer's embedding pass). Borrows the embedder,
// which must outlive it. What it learns (the limit a refusal names, the characters per token the
// server's usage counts show) lasts as long as it does.
class EmbeddingFitter {
 public:
  explicit EmbeddingFitter(Embedder& embedder, FitOptions options = {});

  // One result per text, in order. Throws pf::Error when the model itself fails (unreachable,
  // credentials, retries used up, or server errors before the server has answered anything):
  // then none of these texts may be recorded as refused.
  std::vector<FittedEmbedding> embed(const std::vector<std::string>& texts);

  int limit_tokens();  // the input limit in use (the embedder's, lowered by what refusals said)
  double tokens_per_unit() const { return tokens_per_unit_; }
  int64_t requests() const { return requests_; }

 private:
  struct Piece;
  void send_all(std::vector<Piece>& pieces);
  void send(std::vector<Piece*> group);
  static void combine(std::vector<Piece>& pieces, size_t first, size_t last, FittedEmbedding& r);
  double estimate_tokens(const std::string& text) const;

  Embedder& embedder_;
  FitOptions options_;
  int limit_ = 0;
  double tokens_per_unit_;
  bool learned_ = false;
  int64_t requests_ = 0, answered_ = 0;
};

// The units of text (see above).
int64_t token_units(const std::string& text);

// Pieces of text of at most max_chars bytes, cut after a line end where one is in the second half
// of the window, else after a space, else anywhere but inside a UTF-8 sequence. Exposed for tests.
std::vector<std::string> split_for_embedding(const std::string& text, size_t max_chars);

}  // namespace pf
