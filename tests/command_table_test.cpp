// The command table: parsing by name and alias, which calls run while a turn is busy, /help
// made from the entries, and the handler run with its context.
#include "bridge/command_table.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

namespace pf {
namespace {

struct Log {
  std::vector<std::string> calls;
};

CommandTable<Log> table() {
  CommandTable<Log> t;
  auto record = [](Log& log, const CommandCall& c) -> boost::asio::awaitable<void> {
    log.calls.push_back(c.name + "(" + c.args + ")");
    co_return;
  };
  t.add({{"stop", "cancel"}, "", "stop the answer", WhenBusy::kAtOnce, true}, record);
  t.add({{"model"}, "[name]", "list or switch models", WhenBusy::kAtOnceWithoutArgs, true}, record);
  t.add({{"resume"}, "[id]", "switch conversations"}, record);
  t.add({{"schedule"}, "[list|cancel ID]", "scheduled prompts", WhenBusy::kAtOnce}, record);
  return t;
}

TEST(CommandTable, ParsesNamesAndAliasesAndLeavesOtherTextForTheModel) {
  CommandTable<Log> t = table();
  auto c = t.parse("/Cancel  now please");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->name, "cancel");
  EXPECT_EQ(c->args, "now please");
  EXPECT_EQ(t.find("cancel"), t.find("stop"));
  EXPECT_EQ(t.parse("/model\tgpt")->args, "gpt");
  for (const char* text : {"/unknown x", "/", "stop", "", " /stop", "/stopx"})
    EXPECT_FALSE(t.parse(text)) << text;
  EXPECT_EQ(split_command("/x\ny")->args, "y");
  EXPECT_FALSE(split_command("/"));
}

TEST(CommandTable, WhichCallsRunWhileATurnIsBusy) {
  CommandTable<Log> t = table();
  EXPECT_TRUE(t.runs_at_once(*t.parse("/stop")));
  EXPECT_TRUE(t.runs_at_once(*t.parse("/cancel")));
  EXPECT_TRUE(t.runs_at_once(*t.parse("/model")));
  EXPECT_FALSE(t.runs_at_once(*t.parse("/model sonnet")));
  EXPECT_FALSE(t.runs_at_once(*t.parse("/resume")));
  EXPECT_FALSE(t.runs_at_once(CommandCall{"nope", ""}));
}

TEST(CommandTable, HelpIsMadeFromTheEntries) {
  CommandTable<Log> t = table();
  std::string short_help = t.help(false);
  EXPECT_NE(short_help.find("`/stop` stop the answer"), std::string::npos) << short_help;
  EXPECT_NE(short_help.find("`/model [name]` list or switch models"), std::string::npos);
  EXPECT_EQ(short_help.find("/schedule"), std::string::npos) << "not in the short list";
  std::string all = t.help(true);
  EXPECT_NE(all.find("| `/stop`, `/cancel` | stop the answer |"), std::string::npos) << all;
  // A '|' in the usage is escaped, or it would end the table's cell.
  EXPECT_NE(all.find("| `/schedule [list\\|cancel ID]` | scheduled prompts |"), std::string::npos)
      << all;
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 2 + 4);  // header, rule, one per entry
}

TEST(CommandTable, RunsTheHandlerWithItsContextAndRefusesADuplicateName) {
  CommandTable<Log> t = table();
  Log log;
  boost::asio::io_context io;
  boost::asio::co_spawn(io, t.run(log, *t.parse("/cancel all")), boost::asio::detached);
  boost::asio::co_spawn(io, t.run(log, *t.parse("/model x")), boost::asio::detached);
  io.run();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"cancel(all)", "model(x)"}));
  EXPECT_THROW(t.add({{"halt", "stop"}, "", "again"}, nullptr), std::logic_error);
}

}  // namespace
}  // namespace pf
