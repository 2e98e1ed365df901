// The "retrieval" section of the configuration: how every front end (serve's chat routes, the
// chat bridge, the MCP server's search, `pilotfish ask` and `pilotfish search`) retrieves, so
// the reference copilot's query enhancement and its weighted fusion are settings, not flags of
// one command:
//
//   "retrieval": {"rewrite": true, "fusion": "weighted", "weights": {"vector": 0.7, "text": 0.3}}
//
// rewrite: the chat model turns the question into a search query first (an extra model call
// per answer). fusion: how the vector and lexical legs of a hybrid search combine ("rrf", the
// default, or "weighted" with the weights). Unset, retrieval is what it always was. Including
// this header registers the section.
#pragma once

#include "core/config.h"
#include "search/hybrid.h"

namespace pf {

struct RetrievalConfig : ConfigSection {
  bool rewrite = false;
  FusionMode fusion = FusionMode::kRrf;
  double vector_weight = 0.7, text_weight = 0.3;  // "weighted" only
};

// The config's section (its defaults when the file has none).
const RetrievalConfig& retrieval_config(const Config& config);

// The section applied to search options (fusion and weights).
void apply_retrieval(const RetrievalConfig& retrieval, HybridOptions& options);

bool register_retrieval_config();
inline const bool kRetrievalConfigRegistered = register_retrieval_config();

}  // namespace pf
