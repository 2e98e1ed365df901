// The tool registry: entries in order, replacement by name, output caps and unknown tools.
#include "agent/tool_registry.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

ToolEntry echo(const std::string& name, size_t cap = 1024) {
  ToolEntry e;
  e.spec = ToolSpec{name, "echo " + name, {{"type", "object"}}};
  e.max_output_bytes = cap;
  e.run = [name](const std::string& args, Store*) {
    return nlohmann::json{{"tool", name}, {"args", args}};
  };
  return e;
}

TEST(ToolRegistry, ListsEntriesInOrderAndReplacesByName) {
  ToolRegistry r;
  EXPECT_TRUE(r.empty());
  r.add(echo("a"));
  r.add(echo("b"));
  auto before = r.specs();
  ToolEntry replaced = echo("a");
  replaced.spec.description = "the new a";
  r.add(replaced);
  ASSERT_EQ(r.specs()->size(), 2u);
  EXPECT_EQ((*r.specs())[0].name, "a");
  EXPECT_EQ((*r.specs())[0].description, "the new a");
  EXPECT_EQ((*r.specs())[1].name, "b");
  // A copy handed out earlier is not changed under its holder.
  EXPECT_EQ((*before)[0].description, "echo a");
}

TEST(ToolRegistry, CallsRunTheEntryAndCapTheirOutput) {
  ToolRegistry r;
  r.add(echo("small", 1000));
  EXPECT_EQ(r.call("small", "{\"x\":1}", nullptr)["args"], "{\"x\":1}");
  EXPECT_EQ(r.call("nope", "{}", nullptr)["error"], "unknown tool: nope");
  std::string big(2000, 'x');
  nlohmann::json out = r.call("small", big, nullptr);
  ASSERT_TRUE(out.contains("error"));
  EXPECT_NE(out["error"].get<std::string>().find("too large"), std::string::npos);
}

TEST(ToolRegistry, ACopyCanBeExtendedWithoutTouchingTheOriginal) {
  ToolRegistry shared;
  shared.add(echo("read_file"));
  ToolRegistry channel = shared;
  channel.add(echo("no_reply"));
  EXPECT_EQ(shared.specs()->size(), 1u);
  EXPECT_EQ(channel.specs()->size(), 2u);
  EXPECT_NE(channel.find("no_reply"), nullptr);
  EXPECT_EQ(shared.find("no_reply"), nullptr);
}

}  // namespace
}  // namespace pf
