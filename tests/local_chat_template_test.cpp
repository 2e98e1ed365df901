// A local model's chat template with tools (llm/local_chat_template.h): the stop-string cutter,
// the tools in the prompt of a template that describes them (Qwen 2.5's, from llama.cpp's
// models/templates), the grammar per tool_choice, the parser that takes calls out of a reply fed
// in pieces, and a template without tools.
#include <gtest/gtest.h>

#ifdef PILOTFISH_LLAMA_SERVER
#include <llama.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "llm/local_chat_template.h"
#include "test_util.h"
#include "tiny_gguf.h"

namespace pf {
namespace {

TEST(StopText, CutsAtTheFirstStopAndHoldsBackWhatMayStartOne) {
  StopText s({"<|im_end|>", "STOP"});
  EXPECT_EQ(s.feed("Hello <|im"), "Hello ");  // "<|im" may be a stop's start
  EXPECT_EQ(s.feed("age|> ok S"), "<|image|> ok ");
  EXPECT_FALSE(s.stopped());
  EXPECT_EQ(s.feed("TOP and more"), "");
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.feed("later"), "");
  EXPECT_EQ(s.rest(), "");
  StopText t({"</s>"});
  EXPECT_EQ(t.feed("end </"), "end ");
  EXPECT_EQ(t.rest(), "</");  // the reply ended: the tail was text after all
  StopText none({});
  EXPECT_EQ(none.feed("anything"), "anything");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ModelFree {
  void operator()(llama_model* m) const { llama_model_free(m); }
};

class LocalChatTemplateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);  // it lists every tensor
    llama_backend_init();
    qwen_ = read_text(std::string(PILOTFISH_LLAMA_DIR) +
                      "/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
    ASSERT_FALSE(qwen_.empty());
  }
  llama_model* load(const std::string& chat_template) {
    std::string path = dir_ / ("m" + std::to_string(models_.size()) + ".gguf");
    test::write_tiny_llama(path, 3, -1, chat_template);
    llama_model_params mp = llama_model_default_params();
    models_.emplace_back(llama_model_load_from_file(path.c_str(), mp));
    return models_.back().get();
  }
  static ChatRequest request(ToolChoice choice) {
    ChatRequest r;
    r.messages = {{"system", "You answer about code.", {}, {}}, {"user", "Where is the pool?", {}, {}}};
    r.tools = std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{
        {"read_file", "Reads a file of the repository",
         {{"type", "object"},
          {"properties", {{"path", {{"type", "string"}}}}},
          {"required", {"path"}}}}});
    r.tool_choice = choice;
    return r;
  }
  test::TempDir dir_;
  std::string qwen_;
  std::vector<std::unique_ptr<llama_model, ModelFree>> models_;
};

TEST_F(LocalChatTemplateTest, ATemplateWithToolsDescribesThemAndConstrainsTheCall) {
  LocalChatTemplate t(load(qwen_), "");
  ASSERT_TRUE(t.supports_tools());
  TemplatedPrompt p = t.render(request(ToolChoice::kAuto), true);
  EXPECT_NE(p.text.find("<tools>"), std::string::npos) << p.text;
  EXPECT_NE(p.text.find("\"read_file\""), std::string::npos);
  EXPECT_NE(p.text.find("Where is the pool?"), std::string::npos);
  EXPECT_FALSE(p.grammar.empty());
  EXPECT_TRUE(p.grammar_lazy);  // auto: free text until the model starts a call
  EXPECT_FALSE(p.trigger_patterns.empty() && p.trigger_tokens.empty());
  TemplatedPrompt required = t.render(request(ToolChoice::kRequired), true);
  EXPECT_FALSE(required.grammar.empty());
  EXPECT_FALSE(required.grammar_lazy);  // the first thing written is a call
  TemplatedPrompt plain = t.render(request(ToolChoice::kAuto), false);
  EXPECT_EQ(plain.text.find("<tools>"), std::string::npos);
  EXPECT_TRUE(plain.grammar.empty());
}

TEST_F(LocalChatTemplateTest, TheParserTakesTheCallOutOfAReplyFedInPieces) {
  LocalChatTemplate t(load(qwen_), "");
  TemplatedPrompt p = t.render(request(ToolChoice::kAuto), true);
  std::string reply =
      "Let me look at it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": "
      "{\"path\": \"lib/pool.js\"}}\n</tool_call>";
  std::string text;
  for (size_t i = 0; i < reply.size(); i += 3) text += p.parser.feed(reply.substr(i, 3));
  std::vector<ToolCall> calls;
  text += p.parser.finish(calls);
  EXPECT_EQ(text.find("<tool_call>"), std::string::npos) << text;
  EXPECT_EQ(text.find("read_file"), std::string::npos) << text;
  EXPECT_NE(text.find("Let me look at it."), std::string::npos) << text;
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].name, "read_file");
  EXPECT_FALSE(calls[0].id.empty());
  EXPECT_EQ(nlohmann::json::parse(calls[0].arguments)["path"], "lib/pool.js");
}

TEST_F(LocalChatTemplateTest, AReplyWithoutACallIsAllText) {
  LocalChatTemplate t(load(qwen_), "");
  TemplatedPrompt p = t.render(request(ToolChoice::kAuto), true);
  std::string text = p.parser.feed("The pool is in lib/");
  text += p.parser.feed("pool.js.");
  std::vector<ToolCall> calls;
  text += p.parser.finish(calls);
  EXPECT_EQ(text, "The pool is in lib/pool.js.");
  EXPECT_TRUE(calls.empty());
}

TEST_F(LocalChatTemplateTest, ToolCallsAndResultsOfEarlierStepsAreInThePrompt) {
  LocalChatTemplate t(load(qwen_), "");
  ChatRequest r = request(ToolChoice::kAuto);
  r.messages.push_back({"assistant", "", {{"call_1", "read_file", "{\"path\": \"lib/pool.js\"}"}}, {}});
  r.messages.push_back({"tool", "class Pool { dispatch() {} }", {}, "call_1"});
  TemplatedPrompt p = t.render(r, true);
  EXPECT_NE(p.text.find("lib/pool.js"), std::string::npos) << p.text;
  EXPECT_NE(p.text.find("<tool_response>"), std::string::npos) << p.text;
  EXPECT_NE(p.text.find("class Pool { dispatch() {} }"), std::string::npos);
}

TEST_F(LocalChatTemplateTest, ATemplateWithoutToolsSaysSo) {
  LocalChatTemplate t(load(""), "");  // no template in the file: ChatML
  EXPECT_FALSE(t.supports_tools());
  TemplatedPrompt p = t.render(request(ToolChoice::kAuto), false);
  EXPECT_NE(p.text.find("<|im_start|>user\nWhere is the pool?"), std::string::npos) << p.text;
  std::vector<ToolCall> calls;
  EXPECT_EQ(p.parser.feed("<tool_call>x"), "<tool_call>x");  // no tools: no parsing
  EXPECT_EQ(p.parser.finish(calls), "");
  EXPECT_TRUE(calls.empty());
}

TEST_F(LocalChatTemplateTest, ATemplateLlamaCppCannotReadIsAnError) {
  EXPECT_THROW(LocalChatTemplate(load("{% if %}"), ""), Error);
}

}  // namespace
}  // namespace pf

#endif  // without llama.cpp there is no template to test
