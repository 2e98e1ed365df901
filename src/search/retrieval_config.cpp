// The "retrieval" section (see retrieval_config.h).
#include "search/retrieval_config.h"

#include "core/config_reader.h"

namespace pf {

using namespace config_detail;

namespace {

std::shared_ptr<const ConfigSection> parse_retrieval(const json& v, const Config&,
                                                     const std::string& source) {
  auto out = std::make_shared<RetrievalConfig>();
  if (v.is_null()) return out;
  if (!v.is_object()) fail(source, "retrieval", std::string("expected an object, got ") + kind(v));
  Reader r(source);
  r.only_keys(v, "retrieval", {"rewrite", "fusion", "weights"});
  if (v.contains("rewrite")) {
    if (!v["rewrite"].is_boolean()) fail(source, "retrieval.rewrite", "expected true or false");
    out->rewrite = v["rewrite"].get<bool>();
  }
  std::string fusion = r.string(v, "retrieval", "fusion", false);
  if (!fusion.empty() && fusion != "rrf" && fusion != "weighted")
    fail(source, "retrieval.fusion", "expected \"rrf\" or \"weighted\", got \"" + fusion + "\"");
  out->fusion = fusion == "weighted" ? FusionMode::kWeighted : FusionMode::kRrf;
  if (v.contains("weights")) {
    if (fusion != "weighted")
      fail(source, "retrieval.weights", "weights apply only to \"fusion\": \"weighted\"");
    const json& w = r.object(v, "retrieval", "weights");
    r.only_keys(w, "retrieval.weights", {"vector", "text"});
    for (const char* k : {"vector", "text"}) {
      if (!w.contains(k)) continue;
      if (!w[k].is_number() || w[k].get<double>() < 0 || w[k].get<double>() > 1)
        fail(source, std::string("retrieval.weights.") + k, "expected a number from 0 to 1");
      (std::string(k) == "vector" ? out->vector_weight : out->text_weight) = w[k].get<double>();
    }
    if (out->vector_weight + out->text_weight <= 0)
      fail(source, "retrieval.weights", "at least one weight must be above 0");
  }
  return out;
}

}  // namespace

const RetrievalConfig& retrieval_config(const Config& config) {
  static const RetrievalConfig kNone;
  const RetrievalConfig* c = config.section<RetrievalConfig>("retrieval");
  return c ? *c : kNone;
}

void apply_retrieval(const RetrievalConfig& retrieval, HybridOptions& options) {
  options.fusion = retrieval.fusion;
  options.vector_weight = retrieval.vector_weight;
  options.text_weight = retrieval.text_weight;
}

bool register_retrieval_config() {
  static const bool once = register_config_section("retrieval", parse_retrieval);
  return once;
}

}  // namespace pf
