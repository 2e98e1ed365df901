// The shell parser under the permission engine: what it finds in lists, pipelines, substitutions,
// functions and redirections, how it removes quotes, and which wrappers it sees through.
#include "policy/shell_command.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

std::vector<std::string> names(const ShellParse& p) {
  std::vector<std::string> out;
  for (const auto& c : p.commands) out.push_back(c.dynamic_name ? "$" : c.name);
  return out;
}

using V = std::vector<std::string>;

TEST(ShellCommand, SplitsListsPipelinesAndSubshells) {
  EXPECT_EQ(names(parse_shell("a && b || c | d ; e & f")), (V{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(names(parse_shell("(cd x; make) && { ls; }")), (V{"cd", "make", "ls"}));
  EXPECT_EQ(names(parse_shell("if test -f x; then cat x; else echo no; fi")), (V{"test", "cat", "echo"}));
  EXPECT_EQ(names(parse_shell("for f in *; do wc -l \"$f\"; done")), (V{"wc"}));
  EXPECT_EQ(names(parse_shell("while read l; do echo $l; done < in.txt")), (V{"read", "echo"}));
  EXPECT_FALSE(parse_shell("a && b").incomplete);
}

TEST(ShellCommand, FindsCommandsInsideSubstitutions) {
  EXPECT_EQ(names(parse_shell("echo \"$(whoami) `hostname`\"")), (V{"echo", "whoami", "hostname"}));
  EXPECT_EQ(names(parse_shell("diff <(ls a) <(ls b)")), (V{"diff", "ls", "ls"}));
  EXPECT_EQ(names(parse_shell("export X=$(id -u)")), (V{"export", "id"}));
}

TEST(ShellCommand, RemovesQuotesAndEscapes) {
  auto p = parse_shell(R"(r''m "-r"f \/ 'a b' "c\"d" $'e\tf' g\ h)");
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0].words, (V{"rm", "-rf", "/", "a b", "c\"d", "e\tf", "g h"}));
  EXPECT_EQ(p.commands[0].name, "rm");
  EXPECT_EQ(parse_shell("/usr/bin/git status").commands[0].name, "git");
  EXPECT_EQ(parse_shell("\\ls").commands[0].name, "ls");
}

TEST(ShellCommand, KeepsExpansionsAsWrittenAndMarksComputedPrograms) {
  auto p = parse_shell("rm -rf \"$HOME\"/ ${TMP}");
  EXPECT_EQ(p.commands[0].words, (V{"rm", "-rf", "$HOME/", "${TMP}"}));
  EXPECT_FALSE(p.commands[0].dynamic_name);
  auto d = parse_shell("$EDITOR file; $(echo rm) x");
  EXPECT_EQ(names(d), (V{"$", "$", "echo"}));
}

TEST(ShellCommand, SeesThroughWrappers) {
  struct Case {
    const char* line;
    V words;
    V wrappers;
  } cases[] = {
      {"sudo rm -rf x", {"rm", "-rf", "x"}, {"sudo"}},
      {"sudo -u root -E rm x", {"rm", "x"}, {"sudo"}},
      {"env -i A=1 B=2 rm x", {"rm", "x"}, {"env"}},
      {"env -S 'rm x'", {"rm", "x"}, {"env"}},
      {"bash -c 'rm x'", {"rm", "x"}, {"bash"}},
      {"sh -ec \"rm x\"", {"rm", "x"}, {"sh"}},
      {"sudo env bash -c \"sh -c 'rm x'\"", {"rm", "x"}, {"sudo", "env", "bash", "sh"}},
      {"eval rm x", {"rm", "x"}, {"eval"}},
      {"xargs -I{} rm {}", {"rm", "{}"}, {"xargs"}},
      {"nohup nice -n 5 timeout -s KILL 10 rm x", {"rm", "x"}, {"nohup", "nice", "timeout"}},
      {"exec -a name rm x", {"rm", "x"}, {"exec"}},
      {"command rm x", {"rm", "x"}, {"command"}},
      {"su -c 'rm x' root", {"rm", "x"}, {"su"}},
      {"flock /tmp/l -c 'rm x'", {"rm", "x"}, {"flock"}},
      {"watch -n 1 rm x", {"rm", "x"}, {"watch"}},
      {"busybox rm x", {"rm", "x"}, {"busybox"}},
      {"stdbuf -oL rm x", {"rm", "x"}, {"stdbuf"}},
      {"chroot /srv rm x", {"rm", "x"}, {"chroot"}},
      {"/usr/bin/sudo /bin/rm x", {"/bin/rm", "x"}, {"sudo"}},
  };
  for (const auto& c : cases) {
    auto p = parse_shell(c.line);
    ASSERT_FALSE(p.commands.empty()) << c.line;
    EXPECT_EQ(p.commands[0].words, c.words) << c.line;
    EXPECT_EQ(p.commands[0].name, "rm") << c.line;
    EXPECT_EQ(p.commands[0].wrappers, c.wrappers) << c.line;
  }
}

TEST(ShellCommand, AWrapperThatRunsNothingVisibleIsItselfTheCommand) {
  for (const char* line : {"bash script.sh", "sudo -s", "env", "sh < cmds.txt"}) {
    auto p = parse_shell(line);
    ASSERT_EQ(p.commands.size(), 1u) << line;
    EXPECT_EQ(p.commands[0].wrappers, (V{p.commands[0].name})) << line;
  }
}

TEST(ShellCommand, FindExecIsAWrapperButPlainFindIsNot) {
  auto p = parse_shell("find . -name '*.o' -exec rm -f {} \\; -o -execdir echo {} +");
  EXPECT_EQ(names(p), (V{"rm", "echo", "find"}));
  EXPECT_EQ(p.commands[0].wrappers, (V{"find"}));
  EXPECT_EQ(p.commands[2].wrappers, (V{"find"}));
  EXPECT_TRUE(parse_shell("find . -name x").commands[0].wrappers.empty());
}

TEST(ShellCommand, RecordsFunctionsAndTheirSelfCalls) {
  auto p = parse_shell(":(){ :|:& };:");
  ASSERT_EQ(p.functions.size(), 1u);
  EXPECT_EQ(p.functions[0].name, ":");
  EXPECT_EQ(p.functions[0].self_calls, 2);
  EXPECT_TRUE(p.functions[0].backgrounds);
  auto q = parse_shell("greet() { echo hi; }; greet");
  EXPECT_EQ(q.functions[0].self_calls, 0);
  EXPECT_FALSE(q.functions[0].backgrounds);
}

TEST(ShellCommand, RecordsFilesWrittenByRedirections) {
  auto p = parse_shell("make > build.log 2>&1 && cat x >> \"out file\" &> all; cat < in; ls >&2");
  EXPECT_EQ(p.redirect_targets, (V{"build.log", "out file", "all"}));
}

TEST(ShellCommand, MarksWhatItCouldNotReadAsIncomplete) {
  EXPECT_TRUE(parse_shell("ls |").incomplete);
  EXPECT_TRUE(parse_shell("echo 'unterminated").incomplete);
  EXPECT_TRUE(parse_shell("if then fi (").incomplete);
  EXPECT_TRUE(parse_shell(std::string(70000, 'a')).incomplete);  // too long to look into
  // bash -c "bash -c \"…\"" twelve deep, escaped at each level: beyond the cap is incomplete.
  std::string deep = "rm x";
  for (int i = 0; i < 12; ++i) {
    std::string q;
    for (char ch : deep) {
      if (ch == '\\' || ch == '"' || ch == '$' || ch == '`') q += '\\';
      q += ch;
    }
    deep = "bash -c \"" + q + "\"";
  }
  EXPECT_TRUE(parse_shell(deep).incomplete);
  EXPECT_FALSE(parse_shell("bash -c \"bash -c 'rm x'\"").incomplete);
}

TEST(ShellCommand, SurvivesHostileInput) {
  std::string deep(5000, '(');
  EXPECT_TRUE(parse_shell(deep).incomplete);
  std::string binary;
  for (int i = 0; i < 512; ++i) binary += static_cast<char>(i * 37);
  (void)parse_shell(binary);
  (void)parse_shell(std::string("a\0b", 3));
  EXPECT_TRUE(parse_shell("").commands.empty());
}

}  // namespace
}  // namespace pf
