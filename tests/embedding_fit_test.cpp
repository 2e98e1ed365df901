// EmbeddingFitter and the embedder's input limits against servers that behave like llama.cpp's
// llama-server, Ollama, OpenAI, vLLM and TEI (tests/servers/embedding_server.py): limits learned
// from each server's own report or refusal, long inputs split so nothing is refused, a batch
// halved to find the one input at fault, a failing server told apart from a failing input.
#include "llm/embedding_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/error.h"
#include "llm/provider.h"
#include "test_util.h"

namespace pf {
namespace {

class FakeServer {
 public:
  int port() const { return server_->port(); }
  FakeServer(const std::string& flavor, std::vector<std::string> args = {},
             const std::string& script = "") {
    std::vector<std::string> head = {"--flavor", flavor, "--log", dir_ / "log"};
    args.insert(args.begin(), head.begin(), head.end());
    if (!script.empty()) {
      test::write_file(dir_ / "script.json", script);
      args.push_back("--script");
      args.push_back(dir_ / "script.json");
    }
    server_ = std::make_unique<test::PythonServer>("embedding_server.py", args);
  }
  Config config(std::optional<int> context_window = std::nullopt,
                const std::string& model = "embed-small") const {
    nlohmann::json m = {{"id", model}};
    if (context_window) m["contextWindow"] = *context_window;
    nlohmann::json c = {
        {"providers",
         {{"srv",
           {{"type", "openai"},
            {"baseUrl", "http://127.0.0.1:" + std::to_string(server_->port()) + "/v1"},
            {"models", {m}}}}}},
        {"defaults", {{"embeddingModel", "srv:" + model}}}};
    return parse_config(c.dump(), "test");
  }
  std::unique_ptr<Embedder> embedder(std::optional<int> context_window = std::nullopt,
                                     const std::string& model = "embed-small") const {
    EmbedderOptions o;
    o.max_backoff_ms = 20;
    return make_embedder(config(context_window, model), "srv:" + model, o);
  }
  // The embedding requests the server got: {"path", "inputs", "tokens", "status"} each.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_ / "log");
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }

 private:
  test::TempDir dir_;
  std::unique_ptr<test::PythonServer> server_;
};

// Prose of about n tokens for the fake tokenizer (4-letter words: one token each).
std::string prose(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i % 12 == 11) ? "word\n" : "word ";
  return s;
}

// Punctuation-dense text: one token per character.
std::string symbols(int n) { return std::string(static_cast<size_t>(n), ';'); }

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

// The stand-ins are what the real clients expect: the `openai` package reads every flavor's
// vectors, usage and refusals; the `ollama` package reads the Ollama flavor's own routes.
TEST(EmbeddingServers, RealClientsReadThemAsTheRealServers) {
  for (const char* flavor : {"llama", "ollama", "openai", "vllm", "tei"}) {
    SCOPED_TRACE(flavor);
    FakeServer server(flavor, {"--limit", "100", "--trained", "8192", "--num-ctx", "100"});
    auto r = test::run({"node", test::source_dir() + "/tests/node/embedding_clients.mjs", flavor,
                        std::to_string(server.port())});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["ok"]["count"], 2);
    EXPECT_EQ(j["ok"]["dim"], 64);  // the client asks for base64 and decodes it
    EXPECT_EQ(j["ok"]["index1"], 1);
    EXPECT_GT(j["ok"]["promptTokens"].get<int>(), 0);
    std::string flavor_s = flavor;
    int status = flavor_s == "tei" ? 413 : 400;
    EXPECT_EQ(j["long"]["status"], status) << r.out;
    EXPECT_TRUE(read_too_long_message(j["long"]["message"].get<std::string>()).too_long) << r.out;
    if (flavor_s == "ollama") {
      EXPECT_EQ(j["show"]["contextLength"], 8192);
      EXPECT_EQ(j["truncated"]["promptEvalCount"], 100);  // /api/embed cuts by default
      EXPECT_EQ(j["notTruncated"]["status"], 400);
      EXPECT_EQ(j["unknownModel"]["status"], 404);
    }
  }
}

TEST(SplitForEmbedding, CutsAtLineEndsThenSpacesNeverInsideUtf8) {
  auto parts = split_for_embedding("aaaa bbbb\ncccc dddd\neeee", 12);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "aaaa bbbb\n");
  EXPECT_EQ(parts[1], "cccc dddd\n");
  EXPECT_EQ(parts[2], "eeee");
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\xc3\xa9";  // é, two bytes each, no spaces
  std::string joined;
  for (const auto& p : split_for_embedding(accents, 9)) {
    EXPECT_LE(p.size(), 9u);
    EXPECT_NE(static_cast<unsigned char>(p[0]) & 0xC0, 0x80) << "a piece starts mid-sequence";
    joined += p;
  }
  EXPECT_EQ(joined, accents);
  EXPECT_EQ(split_for_embedding("short", 100), std::vector<std::string>{"short"});
}

TEST(TooLongMessage, ReadsEachServersWords) {
  auto llama = read_too_long_message(
      "input (600 tokens) is too large to process. increase the physical batch size (current "
      "batch size: 512)");
  EXPECT_TRUE(llama.too_long);
  EXPECT_EQ(llama.limit_tokens, 512);
  EXPECT_EQ(llama.requested_tokens, 600);
  auto openai = read_too_long_message(
      "This model's maximum context length is 8192 tokens, however you requested 9000 tokens "
      "(9000 in your prompt; 0 for the completion).");
  EXPECT_EQ(openai.limit_tokens, 8192);
  EXPECT_EQ(openai.requested_tokens, 9000);
  auto tei = read_too_long_message(
      "Input validation error: `inputs` must have less than 512 tokens. Given: 700");
  EXPECT_EQ(tei.limit_tokens, 512);
  EXPECT_EQ(tei.requested_tokens, 700);
  auto ollama = read_too_long_message("the input length exceeds the context length");
  EXPECT_TRUE(ollama.too_long);
  EXPECT_EQ(ollama.limit_tokens, 0);
  EXPECT_FALSE(read_too_long_message("Incorrect API key provided").too_long);
  // Every shape a server puts its message in, vLLM's older top-level one included.
  EXPECT_EQ(provider_error_message(R"({"error": {"message": "a"}})"), "a");
  EXPECT_EQ(provider_error_message(R"({"error": "b"})"), "b");
  EXPECT_EQ(provider_error_message(R"({"object": "error", "message": "c", "code": 400})"), "c");
  EXPECT_FALSE(read_too_long_message("batch size 50 > maximum allowed batch size 32").too_long);
}

TEST(InputLimit, EachServerIsAskedInItsOwnWay) {
  EXPECT_EQ(FakeServer("llama", {"--limit", "128", "--ctx", "2048"}).embedder()->input_limit().source,
            "llama.cpp /props");
  EXPECT_EQ(FakeServer("llama", {"--limit", "128", "--ctx", "2048"}).embedder()->input_limit().tokens,
            2048);  // the batch size is not reported: the first refusal names it
  auto ollama = FakeServer("ollama", {"--limit", "300", "--trained", "8192", "--num-ctx", "300"});
  EXPECT_EQ(ollama.embedder()->input_limit().tokens, 300);
  EXPECT_EQ(ollama.embedder()->input_limit().source, "Ollama /api/show");
  // No num_ctx in the Modelfile: Ollama runs with 2048, whatever the model was trained for.
  EXPECT_EQ(FakeServer("ollama", {"--trained", "8192"}).embedder()->input_limit().tokens, 2048);
  EXPECT_EQ(FakeServer("vllm", {"--limit", "777"}).embedder()->input_limit().tokens, 777);
  EXPECT_EQ(FakeServer("tei", {"--limit", "256"}).embedder()->input_limit().tokens, 256);
  FakeServer openai("openai", {"--limit", "8192"});
  EXPECT_EQ(openai.embedder(std::nullopt, "text-embedding-3-small")->input_limit().tokens, 8191);
  EXPECT_EQ(openai.embedder()->input_limit().tokens, kDefaultInputTokens);
  EXPECT_EQ(openai.embedder()->input_limit().source, "default");
  InputLimit configured = openai.embedder(1000)->input_limit();
  EXPECT_EQ(configured.tokens, 1000);
  EXPECT_EQ(configured.source, "config contextWindow");
}

// The issue's case: llama-server with a 512-token batch (here 64) refuses any request holding one
// longer input; every input still gets a vector, and what fits whole is the model's own vector.
TEST(EmbeddingFitter, LlamaServerBatchLimitIsLearnedAndLongInputsAreSplit) {
  FakeServer server("llama", {"--limit", "64", "--ctx", "1024"});
  auto embedder = server.embedder();
  EmbeddingFitter fitter(*embedder);
  std::vector<std::string> texts = {prose(20), symbols(300), prose(40), prose(500), "x"};
  auto out = fitter.embed(texts);
  ASSERT_EQ(out.size(), texts.size());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_TRUE(out[i].error.empty()) << i << ": " << out[i].error;
    EXPECT_FALSE(out[i].vector.empty()) << i;
    EXPECT_FALSE(out[i].cut) << i;
  }
  EXPECT_EQ(fitter.limit_tokens(), 64);  // from "current batch size: 64"
  EXPECT_EQ(out[0].pieces, 1);
  EXPECT_GT(out[1].pieces, 4);  // 302 tokens in pieces of at most 64
  EXPECT_GT(out[3].pieces, 7);
  EXPECT_NEAR(norm(out[3].vector), 1.0, 1e-4);
  EXPECT_EQ(out[0].vector, embedder->embed({texts[0]}).at(0));
  // After the first refusal nothing sent was over the limit but the requests that taught it.
  int over = 0, refused = 0;
  for (const auto& r : server.requests()) {
    for (int t : r["tokens"]) over += t > 64;
    refused += r["status"] != 200;
  }
  EXPECT_GE(refused, 1);
  EXPECT_LE(refused, 4);
  // Next batch: the learned limit and characters per token keep every request under it.
  size_t before = server.requests().size();
  auto again = fitter.embed({prose(300), symbols(200)});
  EXPECT_TRUE(again[0].error.empty() && again[1].error.empty());
  auto all = server.requests();
  for (size_t i = before; i < all.size(); ++i) EXPECT_EQ(all[i]["status"], 200) << all[i].dump();
}

TEST(EmbeddingFitter, OllamaOpenAiRouteRefusesWithoutNumbersAndIsSplitInHalves) {
  // /api/show claims 2048 (no num_ctx) but this Ollama runs with 100: the refusal names nothing,
  // so the fitter halves what was refused until it fits.
  FakeServer server("ollama", {"--limit", "100", "--trained", "8192"});
  auto embedder = server.embedder();
  EmbeddingFitter fitter(*embedder);
  auto out = fitter.embed({prose(1500), prose(10)});
  EXPECT_TRUE(out[0].error.empty()) << out[0].error;
  EXPECT_GE(out[0].pieces, 15);
  EXPECT_EQ(out[1].pieces, 1);
  EXPECT_EQ(out[1].vector, embedder->embed({prose(10)}).at(0));
}

TEST(EmbeddingFitter, OpenAiVllmAndTeiRefusalsAreCutToTheSizeTheyName) {
  for (const char* flavor : {"openai", "vllm", "tei"}) {
    SCOPED_TRACE(flavor);
    FakeServer server(flavor, {"--limit", "200", "--max-batch", "4"});
    auto embedder = server.embedder(400);  // the config overstates the limit
    EmbeddingFitter fitter(*embedder);
    std::vector<std::string> texts;
    for (int i = 0; i < 9; ++i) texts.push_back(i == 4 ? symbols(1200) : prose(30 + i));
    auto out = fitter.embed(texts);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(out[i].error.empty()) << out[i].error;
    EXPECT_GT(out[4].pieces, 5);
    EXPECT_EQ(fitter.limit_tokens(), 200);  // each of them names the limit
  }
}

TEST(EmbeddingFitter, OneBadInputIsFoundByHalvingAndTheOthersGoOn) {
  for (const char* flavor : {"openai", "llama"}) {  // a 400 for one; a 500 (retried) for the other
    SCOPED_TRACE(flavor);
    FakeServer server(flavor, {"--fail-on", "POISON", "--limit", "8192"});
    auto embedder = server.embedder();
    EmbeddingFitter fitter(*embedder);
    std::vector<std::string> texts;
    for (int i = 0; i < 16; ++i) texts.push_back(i == 11 ? "a POISON b" : prose(5 + i));
    auto out = fitter.embed(texts);
    for (size_t i = 0; i < out.size(); ++i) {
      if (i == 11) {
        EXPECT_TRUE(out[i].vector.empty());
        EXPECT_NE(out[i].error.find("failed to process input"), std::string::npos) << out[i].error;
      } else {
        EXPECT_FALSE(out[i].vector.empty()) << i;
      }
    }
    // 1, then (for a server error, before anything was answered) one known-good input alone,
    // then 2 per halving step: log2(16) = 4.
    EXPECT_LE(fitter.requests(), 10);
  }
}

TEST(EmbeddingFitter, AServerThatFailsEverythingIsAnErrorNotSixteenRefusals) {
  std::string script = "[";
  for (int i = 0; i < 200; ++i)
    script += std::string(i ? "," : "") +
              R"({"status": 500, "body": {"error": {"message": "CUDA error: out of memory"}}})";
  script += "]";
  FakeServer server("llama", {}, script);
  auto embedder = server.embedder(512);
  EmbeddingFitter fitter(*embedder);
  std::vector<std::string> texts(16, prose(10));
  size_t asked = 0;
  try {
    fitter.embed(texts);
    FAIL() << "expected an error";
  } catch (const EmbeddingRefused&) {
    FAIL() << "a failing server must not read as refused inputs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
    asked = server.requests().size();
  }
  EXPECT_EQ(fitter.requests(), 2);  // the batch, then a known-good input alone
  EXPECT_EQ(asked, 6u);             // each tried 3 times
}

TEST(EmbeddingFitter, RateLimitsAreWaitedOutAsTheServerAsks) {
  FakeServer server("openai", {},
                    R"([{"status": 429, "headers": {"x-ratelimit-reset-requests": "30ms",
                         "x-ratelimit-reset-tokens": "50ms"},
                         "body": {"error": {"message": "Rate limit reached", "type": "requests"}}},
                        {"status": 503, "headers": {"Retry-After": "0"},
                         "body": {"error": {"message": "server busy"}}}])");
  auto embedder = server.embedder(512);
  EmbeddingFitter fitter(*embedder);
  auto out = fitter.embed({"alpha beta", "gamma"});
  EXPECT_TRUE(out[0].error.empty() && out[1].error.empty());
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0]["status"], 429);
  EXPECT_EQ(reqs[1]["status"], 503);
  EXPECT_EQ(reqs[2]["status"], 200);
}

TEST(EmbeddingFitter, UnreachableServerIsAnError) {
  Config c = parse_config(
      R"({"providers": {"srv": {"type": "openai", "baseUrl": "http://127.0.0.1:1/v1"}},
          "defaults": {"embeddingModel": "srv:m"}})",
      "test");
  EmbedderOptions o;
  o.max_attempts = 1;
  o.probe_timeout_ms = 500;
  auto embedder = make_embedder(c, "srv:m", o);
  EmbeddingFitter fitter(*embedder);
  EXPECT_THROW(fitter.embed({"x"}), Error);
}

}  // namespace
}  // namespace pf
