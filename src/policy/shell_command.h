// What a shell command line would run, read from a real bash syntax tree (tree-sitter-bash), so
// the permission engine decides on the commands themselves and not on the text: every simple
// command of a list, pipeline, subshell, substitution, function or loop, with its words unquoted
// and unescaped, and with the wrappers that run another command seen through (`sudo`, `env`,
// `bash -c "…"`, `eval`, `xargs`, `find -exec`, `nohup`, `timeout`, absolute program paths …).
// A command line that does not parse, or whose program is computed (`$cmd`, `$(…)`), is marked
// so: it can still be denied, but never approved by a rule.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pf {

struct SimpleCommand {
  // The words as bash would pass them after quote removal; words[0] is the program as written
  // (perhaps an absolute path). Expansions stay as their source text ("$HOME").
  std::vector<std::string> words;
  std::string name;  // the program's base name ("/usr/bin/rm" -> "rm"); empty when computed
  // The wrappers it ran inside, outermost first ("sudo", "env", "bash"); a wrapper that runs
  // nothing visible (`bash script.sh`, `sudo -s`) lists itself. A wrapped command is never
  // approved by a rule, though deny rules and hard denies see through the wrappers.
  std::vector<std::string> wrappers;
  bool dynamic_name = false;  // the program is an expansion or substitution
};

// A function the command line defines, for the fork-bomb check.
struct ShellFunction {
  std::string name;
  int self_calls = 0;       // how often its body calls it
  bool backgrounds = false;  // its body puts something in the background (&)
};

struct ShellParse {
  std::vector<SimpleCommand> commands;  // in source order, inner (substituted) ones included
  std::vector<ShellFunction> functions;
  std::vector<std::string> redirect_targets;  // files written by > >> &> >| (unquoted)
  // The line did not parse cleanly, nested too deep, or was too long: what was understood is
  // above, but nothing may be approved on it.
  bool incomplete = false;
};

// Parses one command line. Never throws on any input; thread-safe (one parser per thread).
ShellParse parse_shell(std::string_view command);

// The wrapper words: programs that run another command given as arguments (find only with
// -exec and its kin).
bool is_shell_wrapper(std::string_view name);

}  // namespace pf
