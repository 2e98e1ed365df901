// Local GGUF embedding models in process (llm/local_model.h), on tiny random-weight BERT-shaped
// GGUF files written here with ggml's gguf API and the real WordPiece vocabulary of llama.cpp's
// models/ggml-vocab-bert-bge.gguf: dimensions, pooling, determinism, refusal of inputs over the
// context (and EmbeddingFitter splitting them), clear errors for missing and damaged files, and
// the same vectors as llama-server (built from the same bundle) serving the same file.
#include "llm/local_model.h"

#include <gtest/gtest.h>

#include <set>

#ifdef PILOTFISH_LLAMA_SERVER
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>

#include "core/config.h"
#include "llm/chat.h"
#include "llm/embedding_fit.h"
#include "llm/model_registry.h"
#include "net/http_client.h"
#include "test_util.h"
#include "tiny_gguf.h"

namespace pf {
namespace {

using test::kTinyCtx;
using test::write_tiny_bert;
using test::write_tiny_llama;
constexpr int kEmbd = test::kTinyEmbd;

Config local_config(const std::string& path, int context_window = 0) {
  nlohmann::json m = {{"id", "tiny"}, {"path", path}};
  if (context_window) m["contextWindow"] = context_window;
  nlohmann::json c = {{"providers", {{"here", {{"type", "local"}, {"models", {m}}}}}},
                      {"defaults", {{"embeddingModel", "here:tiny"}}}};
  return parse_config(c.dump(), "test");
}

void expect_unit_vectors_of_the_models_width(const std::vector<std::vector<float>>& vectors) {
  for (const auto& x : vectors) {
    ASSERT_EQ(x.size(), static_cast<size_t>(kEmbd));
    double n = 0;
    for (float f : x) n += double(f) * f;
    EXPECT_NEAR(n, 1.0, 1e-4);
  }
}

class LocalModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!local_models_available()) GTEST_SKIP() << "built without llama.cpp";
    write_tiny_bert(mean_, 1, 7);
    write_tiny_bert(cls_, 2, 7);
  }
  test::TempDir dir_;
  std::string mean_ = dir_ / "tiny-mean.gguf", cls_ = dir_ / "tiny-cls.gguf";
};

TEST_F(LocalModelTest, VectorsHaveTheModelsWidthUnitLengthAndAreDeterministic) {
  auto e = make_embedder(local_config(mean_), "here:tiny");
  auto v = e->embed({"function handleRequest(req, res) { return res.send(200); }", "hello world",
                     "hello world"});
  ASSERT_EQ(v.size(), 3u);
  expect_unit_vectors_of_the_models_width(v);
  EXPECT_EQ(v[1], v[2]);
  EXPECT_LT(test::cosine(v[0], v[1]), 0.9999);
  EXPECT_EQ(e->input_limit().tokens, kTinyCtx);
  EXPECT_EQ(e->embed({"hello world"}).at(0), v[1]);  // and again, after other inputs
  // The model's pooling: the CLS file (same weights) gives other vectors than the mean one.
  auto c = make_embedder(local_config(cls_), "here:tiny")->embed({"hello world"}).at(0);
  EXPECT_LT(test::cosine(c, v[1]), 0.9999);
}

TEST_F(LocalModelTest, InputsOverTheContextAreRefusedAndSplitByTheFitter) {
  auto e = make_embedder(local_config(mean_, 64), "here:tiny");
  std::string long_text;
  for (int i = 0; i < 120; ++i) long_text += "request ";
  try {
    e->embed({long_text});
    FAIL() << "expected a refusal";
  } catch (const EmbeddingRefused& r) {
    EXPECT_TRUE(r.too_long);
    EXPECT_EQ(r.limit_tokens, 64);
    EXPECT_GT(r.requested_tokens, 64);
  }
  EmbeddingFitter fitter(*e);
  auto out = fitter.embed({long_text, "short"});
  EXPECT_TRUE(out[0].error.empty()) << out[0].error;
  EXPECT_GT(out[0].pieces, 1);
  EXPECT_EQ(out[0].vector.size(), static_cast<size_t>(kEmbd));
}

TEST_F(LocalModelTest, MissingAndDamagedFilesAreConfigErrors) {
  auto expect_config_error = [](const std::string& path, const std::string& words) {
    try {
      make_embedder(local_config(path), "here:tiny");
      ADD_FAILURE() << "no error for " << path;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_config_error(dir_ / "none.gguf", "cannot open");
  test::write_file(dir_ / "text.gguf", "this is not a model");
  expect_config_error(dir_ / "text.gguf", "is not a GGUF file");
  std::ifstream in(mean_, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  test::write_file(dir_ / "cut.gguf", bytes.substr(0, bytes.size() / 3));
  expect_config_error(dir_ / "cut.gguf", "cannot load");
  // A local model must name its file; a server model may not.
  EXPECT_THROW(parse_config(R"({"providers": {"l": {"type": "local", "models": [{"id": "x"}]}}})", "t"),
               ConfigError);
  EXPECT_THROW(parse_config(R"({"providers": {"l": {"type": "local", "baseUrl": "http://x"}}})", "t"),
               ConfigError);
}

TEST_F(LocalModelTest, ALocalProviderOffersTheModelsWhoseFilesAreGguf) {
  test::write_file(dir_ / "text.gguf", "this is not a model");
  nlohmann::json c = {{"providers",
                       {{"here",
                         {{"type", "local"},
                          {"models", {{{"id", "good"}, {"path", mean_}},
                                      {{"id", "text"}, {"path", dir_ / "text.gguf"}},
                                      {{"id", "gone"}, {"path", dir_ / "none.gguf"}}}}}}}}};
  Config config = parse_config(c.dump(), "test");
  EXPECT_EQ(list_provider_models(config.providers.at(0)), std::vector<std::string>{"good"});
}

int free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(s);
  return port;
}

// llama-server (from the same llama.cpp build) serving path with --embeddings: its
// /v1/embeddings vectors for texts.
std::vector<std::vector<float>> llama_server_vectors(const std::string& path,
                                                     const std::vector<std::string>& texts) {
  int port = free_port();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::string p = std::to_string(port), ctx = std::to_string(kTinyCtx);
    execl(PILOTFISH_LLAMA_SERVER, "llama-server", "-m", path.c_str(), "--embeddings", "--host",
          "127.0.0.1", "--port", p.c_str(), "-c", ctx.c_str(), "-b", ctx.c_str(), "-ub",
          ctx.c_str(), "-t", "1", "-np", "1", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string base = "http://127.0.0.1:" + std::to_string(port);
  bool up = false;
  for (int i = 0; i < 300 && !up; ++i) {
    try {
      HttpRequest h;
      h.method = "GET";
      h.url = base + "/health";
      h.timeout = std::chrono::milliseconds(500);
      up = http_request(h).status == 200;
    } catch (const Error&) {
    }
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<std::vector<float>> out;
  if (up) {
    HttpRequest req;
    req.url = base + "/v1/embeddings";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = nlohmann::json{{"input", texts}, {"model", "tiny"}}.dump();
    HttpResponse res = http_request(req);
    EXPECT_EQ(res.status, 200) << res.body;
    nlohmann::json j = res.status == 200 ? nlohmann::json::parse(res.body) : nlohmann::json();
    if (j.contains("data"))
      for (const auto& d : j["data"]) out.push_back(d["embedding"].get<std::vector<float>>());
  }
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  EXPECT_TRUE(up) << "llama-server did not come up";
  return out;
}

// Every component within 1e-4 and the cosine over 0.99999.
void expect_same_vectors(const std::vector<std::vector<float>>& theirs,
                         const std::vector<std::vector<float>>& mine,
                         const std::vector<std::string>& texts) {
  ASSERT_EQ(theirs.size(), mine.size());
  for (size_t i = 0; i < theirs.size(); ++i) {
    ASSERT_EQ(theirs[i].size(), mine[i].size());
    double worst = 0;
    for (size_t d = 0; d < theirs[i].size(); ++d)
      worst = std::max(worst, double(std::fabs(theirs[i][d] - mine[i][d])));
    EXPECT_LT(worst, 1e-4) << texts[i];
    EXPECT_GT(test::cosine(theirs[i], mine[i]), 0.99999) << texts[i];
  }
}

const std::vector<std::string> kServerTexts = {"hello world", "How are route handlers registered?",
                                               "snake_case and camelCase identifiers"};

TEST_F(LocalModelTest, TheSameVectorsAsLlamaServer) {
  auto theirs = llama_server_vectors(mean_, kServerTexts);
  auto mine = make_embedder(local_config(mean_), "here:tiny")->embed(kServerTexts);
  expect_same_vectors(theirs, mine, kServerTexts);
}

TEST_F(LocalModelTest, ADecoderModelEmbedsWithItsPoolingAsLlamaServerDoes) {
  std::string last = dir_ / "llama-last.gguf", mean = dir_ / "llama-mean.gguf";
  write_tiny_llama(last, 5, 3);
  write_tiny_llama(mean, 5, 1);
  auto e = make_embedder(local_config(last), "here:tiny");
  auto v = e->embed({"hello world", "route handlers", "hello world"});
  ASSERT_EQ(v.size(), 3u);
  expect_unit_vectors_of_the_models_width(v);
  EXPECT_EQ(v[0], v[2]);
  EXPECT_LT(test::cosine(v[0], v[1]), 0.9999);
  EXPECT_EQ(e->input_limit().tokens, 256);  // the file's trained context
  // The same weights pooled by mean give other vectors.
  auto m = make_embedder(local_config(mean), "here:tiny")->embed({"hello world"}).at(0);
  EXPECT_LT(test::cosine(m, v[0]), 0.9999);
  expect_same_vectors(llama_server_vectors(last, kServerTexts), e->embed(kServerTexts), kServerTexts);
}

TEST_F(LocalModelTest, InputsDecodedTogetherGiveTheVectorsOfOneAtATime) {
  // 11 inputs: more than one decode holds (8 sequences), and with a 64-token context the
  // longer ones cannot share a decode.
  std::vector<std::string> texts;
  for (int i = 0; i < 11; ++i) {
    std::string t = "input " + std::to_string(i);
    for (int k = 0; k < (i % 3) * 9; ++k) t += " handler";
    texts.push_back(t);
  }
  std::string llama = dir_ / "llama-last.gguf";
  write_tiny_llama(llama, 5, 3);
  for (const std::string& path : {mean_, cls_, llama}) {
    auto e = make_embedder(local_config(path, 64), "here:tiny");
    auto together = e->embed(texts);
    ASSERT_EQ(together.size(), texts.size());
    std::vector<std::vector<float>> alone;
    for (const auto& t : texts) alone.push_back(e->embed({t}).at(0));
    expect_same_vectors(alone, together, texts);
  }
}

class LocalChatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!local_models_available()) GTEST_SKIP() << "built without llama.cpp";
    write_tiny_llama(path_, 11);
    nlohmann::json c = {
        {"providers", {{"here", {{"type", "local"}, {"models", {{{"id", "chat"}, {"path", path_}}}}}}}},
        {"defaults", {{"chatModel", "here:chat"}}}};
    config_ = parse_config(c.dump(), "test");
  }
  // The streamed text and finish reason of one answer; stop_after > 0 cancels after that many
  // deltas.
  std::pair<std::vector<std::string>, std::string> ask(const std::string& question, int max_tokens,
                                                       int stop_after = 0) {
    auto model = make_chat_model(config_, "here:chat");
    ChatRequest req;
    req.messages = {{"system", "You answer briefly.", {}, {}}, {"user", question, {}, {}}};
    req.max_tokens = max_tokens;
    std::vector<std::string> deltas;
    std::string finish;
    model->stream(req, [&](const ChatEvent& e) {
      if (e.kind == ChatEvent::Kind::kTextDelta) deltas.push_back(e.text);
      if (e.kind == ChatEvent::Kind::kFinish) finish = e.finish_reason;
      return stop_after == 0 || static_cast<int>(deltas.size()) < stop_after;
    });
    return {deltas, finish};
  }
  test::TempDir dir_;
  std::string path_ = dir_ / "tiny-llama.gguf";
  Config config_;
};

TEST_F(LocalChatTest, StreamsUpToItsTokenCapTheSameEachTime) {
  auto [deltas, finish] = ask("Where are routes registered?", 12);
  ASSERT_FALSE(deltas.empty());
  EXPECT_LE(deltas.size(), 12u);
  EXPECT_TRUE(finish == "length" || finish == "stop") << finish;
  auto again = ask("Where are routes registered?", 12);
  EXPECT_EQ(again.first, deltas);  // greedy decoding
  std::string text;
  for (const auto& d : deltas) text += d;
  EXPECT_FALSE(text.empty());
}

// A configured temperature draws: the same seed gives the same answer, other seeds others.
TEST_F(LocalChatTest, ATemperatureDrawsTheSameWithTheSameSeedAndOtherwiseWithOthers) {
  auto text_of = [&](const std::vector<std::string>& deltas) {
    std::string t;
    for (const auto& d : deltas) t += d;
    return t;
  };
  auto with = [&](std::optional<uint32_t> seed) {
    nlohmann::json m = {{"id", "chat"}, {"path", path_}, {"temperature", 1.5}, {"topK", 1000}, {"topP", 1}};
    if (seed) m["seed"] = *seed;
    nlohmann::json c = {{"providers", {{"here", {{"type", "local"}, {"models", {m}}}}}},
                        {"defaults", {{"chatModel", "here:chat"}}}};
    config_ = parse_config(c.dump(), "test");
    return text_of(ask("Where are routes registered?", 16).first);
  };
  std::string a = with(7);
  EXPECT_EQ(with(7), a);
  std::set<std::string> seen = {a};
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) seen.insert(with(seed));
  EXPECT_GE(seen.size(), 3u) << "six seeds gave " << seen.size() << " answers";
}

TEST_F(LocalChatTest, StopsWhenTheListenerGoesAway) {
  auto [deltas, finish] = ask("Tell me everything.", 200, 3);
  EXPECT_EQ(deltas.size(), 3u);
  EXPECT_EQ(finish, "");  // no finish after a stop
}

TEST_F(LocalChatTest, AConversationOverTheContextIsRefused) {
  std::string huge;
  for (int i = 0; i < 400; ++i) huge += "word ";
  EXPECT_THROW(ask(huge, 4), Error);
  nlohmann::json c = {{"providers", {{"here", {{"type", "local"}, {"models", {{{"id", "chat"}, {"path", dir_ / "none.gguf"}}}}}}}}};
  EXPECT_THROW(make_chat_model(parse_config(c.dump(), "t"), "here:chat"), ConfigError);
}

// The whole pipeline on a local model: retrieval, the prompt, the streamed answer on a terminal.
TEST_F(LocalChatTest, PilotfishAskAnswersWithALocalModel) {
  test::TempDir repo;
  test::write_file(repo / "src/routes.js", "function registerRoute (path, handler) { return 1; }\n");
  std::string db = dir_ / "a.db";
  ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::write_file(dir_ / "c.json", nlohmann::json{
      {"providers", {{"here", {{"type", "local"}, {"models", {{{"id", "chat"}, {"path", path_}, {"contextWindow", 256}}}}}}}},
      {"defaults", {{"chatModel", "here:chat"}}}}.dump());
  auto r = test::run({test::pilotfish_bin(), "ask", "where is registerRoute?", "--db", db, "--config",
                      dir_ / "c.json", "--max-steps", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

TEST_F(LocalChatTest, AnswersWithoutToolsWhenOffered) {
  auto model = make_chat_model(config_, "here:chat");
  ChatRequest req;
  req.messages = {{"user", "read a file", {}, {}}};
  req.max_tokens = 4;
  req.tools = std::make_shared<const std::vector<ToolSpec>>(
      std::vector<ToolSpec>{{"read_file", "Reads a file", nlohmann::json{{"type", "object"}}}});
  int texts = 0, calls = 0;
  model->stream(req, [&](const ChatEvent& e) {
    texts += e.kind == ChatEvent::Kind::kTextDelta;
    calls += e.kind == ChatEvent::Kind::kToolCall;
    return true;
  });
  EXPECT_GT(texts, 0);
  EXPECT_EQ(calls, 0);
}

// A template that describes tools (Qwen 2.5's, from llama.cpp's models/templates) on the random
// model: a required call is sampled under the template's grammar, so even random weights write
// one well-formed call, with an argument of the schema's enum, and it comes back as a tool call,
// never as text.
TEST_F(LocalChatTest, ARequiredToolCallComesBackAsAToolCall) {
  std::ifstream in(std::string(PILOTFISH_LLAMA_DIR) + "/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  std::string qwen((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(qwen.empty());
  std::string path = dir_ / "tiny-qwen.gguf";
  // Qwen's call markers are single tokens, as in the real vocabulary.
  test::write_tiny_tool_calling_llama(path, qwen, "<tool_call>", "</tool_call>");
  nlohmann::json c = {
      {"providers", {{"here", {{"type", "local"}, {"models", {{{"id", "chat"}, {"path", path}, {"contextWindow", 1024}}}}}}}}};
  auto model = make_chat_model(parse_config(c.dump(), "test"), "here:chat");
  ChatRequest req;
  req.messages = {{"user", "Which colour is the pool?", {}, {}}};
  req.max_tokens = 200;
  req.tools = std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{
      {"pick_colour", "Picks a colour",
       {{"type", "object"},
        {"properties", {{"colour", {{"type", "string"}, {"enum", {"red", "green"}}}}}},
        {"required", {"colour"}},
        {"additionalProperties", false}}}});
  // Required: a strict grammar from the first token. Auto: free text, the grammar from the
  // call's marker on (a lazy grammar's trigger token).
  for (ToolChoice choice : {ToolChoice::kRequired, ToolChoice::kAuto}) {
    req.tool_choice = choice;
    std::string text, finish;
    std::vector<ToolCall> calls;
    model->stream(req, [&](const ChatEvent& e) {
      if (e.kind == ChatEvent::Kind::kTextDelta) text += e.text;
      if (e.kind == ChatEvent::Kind::kToolCall) calls.push_back(e.call);
      if (e.kind == ChatEvent::Kind::kFinish) finish = e.finish_reason;
      return true;
    });
    ASSERT_EQ(calls.size(), 1u) << "text: " << text << " finish: " << finish;
    EXPECT_EQ(finish, "tool_calls");
    EXPECT_EQ(calls[0].name, "pick_colour");
    EXPECT_FALSE(calls[0].id.empty());
    std::string colour = nlohmann::json::parse(calls[0].arguments).at("colour");
    EXPECT_TRUE(colour == "red" || colour == "green") << calls[0].arguments;
    EXPECT_EQ(text.find("<tool_call>"), std::string::npos) << text;
    EXPECT_EQ(text.find("pick_colour"), std::string::npos) << text;
  }
  // Told not to call, the same model writes text and no call.
  req.tool_choice = ToolChoice::kNone;
  req.max_tokens = 8;
  std::vector<ToolCall> calls;
  model->stream(req, [&](const ChatEvent& e) {
    if (e.kind == ChatEvent::Kind::kToolCall) calls.push_back(e.call);
    return true;
  });
  EXPECT_TRUE(calls.empty());
}

}  // namespace
}  // namespace pf

#else  // built without llama.cpp

#include "core/config.h"

namespace pf {
TEST(LocalModel, WithoutLlamaCppALocalModelIsAConfigError) {
  EXPECT_FALSE(local_models_available());
  EXPECT_THROW(make_local_embedder("here:tiny", "/no.gguf", 0), ConfigError);
}
}  // namespace pf
#endif
