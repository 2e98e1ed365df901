// The bridge's slash commands as one table (spec §3): an entry per command with its names (the
// first is the command, the rest aliases), whether it runs while a turn is busy, its help line
// and its handler. Parsing, "may it run now" and /help all read the table, so a command, its
// aliases and its help cannot drift apart. Anything starting with '/' that is not in the table
// goes to the model as text.
//
// Threads: build it once, then read it from the bridge's network thread. Context is what a
// handler acts on (the bridge's channel); a handler's errors are its caller's.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/text.h"
#include "net/awaitable.h"

namespace pf {

// A command as written: its name (lower-cased, without '/') and the rest of the line.
struct CommandCall {
  std::string name, args;
};

// Splits "/name args" into a call; nullopt for text that does not start with "/x".
std::optional<CommandCall> split_command(const std::string& text);

enum class WhenBusy {
  kWaits,               // queued behind the running turn
  kAtOnce,              // runs at once, even while a turn runs
  kAtOnceWithoutArgs,   // at once when given no arguments (e.g. /model lists), else waits
};

struct CommandSpec {
  std::vector<std::string> names;  // "new"; "stop", "cancel"
  std::string usage;               // the arguments, as help shows them: "[name]"
  std::string help;                // one line: what it does
  WhenBusy when_busy = WhenBusy::kWaits;
  bool in_short_help = false;  // listed by /help (all are by /help all)
};

template <class Context>
class CommandTable {
 public:
  using Handler = std::function<boost::asio::awaitable<void>(Context&, const CommandCall&)>;
  struct Entry {
    CommandSpec spec;
    Handler handler;
  };

  // Adds a command; a name already taken is a programming error (throws std::logic_error).
  void add(CommandSpec spec, Handler handler) {
    for (const std::string& n : spec.names)
      if (find(n)) throw std::logic_error("command /" + n + " is in the table twice");
    entries_.push_back({std::move(spec), std::move(handler)});
  }
  // The entry a name or alias belongs to; nullptr when none.
  const Entry* find(const std::string& name) const {
    for (const Entry& e : entries_)
      for (const std::string& n : e.spec.names)
        if (n == name) return &e;
    return nullptr;
  }
  // The call when text is one of the table's commands; nullopt otherwise (text for the model).
  std::optional<CommandCall> parse(const std::string& text) const {
    std::optional<CommandCall> call = split_command(text);
    if (call && !find(call->name)) return std::nullopt;
    return call;
  }
  // Whether the call runs at once even while a turn runs (false for unknown names).
  bool runs_at_once(const CommandCall& call) const {
    const Entry* e = find(call.name);
    if (!e) return false;
    return e->spec.when_busy == WhenBusy::kAtOnce ||
           (e->spec.when_busy == WhenBusy::kAtOnceWithoutArgs && call.args.empty());
  }
  // Runs the call's handler; the call must be one parse() returned. The call is copied (the
  // coroutine may start after the caller's copy is gone); context must outlive the run.
  boost::asio::awaitable<void> run(Context& context, CommandCall call) const {
    co_await find(call.name)->handler(context, call);
  }
  // /help: the short list in one paragraph; /help all: a table of every command.
  std::string help(bool all) const {
    std::string out;
    if (!all) {
      out = "**Commands**\n";
      std::string sep;
      for (const Entry& e : entries_) {
        if (!e.spec.in_short_help) continue;
        out += sep + "`/" + e.spec.names[0] + (e.spec.usage.empty() ? "" : " " + e.spec.usage) +
               "` " + e.spec.help;
        sep = " · ";
      }
      return out + sep + "`/help all` for the rest";
    }
    out = "| Command | What it does |\n|---|---|\n";
    for (const Entry& e : entries_) {
      std::string names;
      for (const std::string& n : e.spec.names) {
        // Appended piece by piece: GCC 12 warns (-Werror=restrict) on "x" + std::string chains.
        names += names.empty() ? "`/" : ", `/";
        names += n;
        if (n == e.spec.names[0] && !e.spec.usage.empty()) {
          names += ' ';
          names += escape(e.spec.usage);
        }
        names += '`';
      }
      out += "| " + names + " | " + e.spec.help + " |\n";
    }
    return out + "Anything else starting with `/` goes to the model as text.";
  }
 private:
  // A '|' in a usage would end the table's cell.
  static std::string escape(const std::string& usage) {
    std::string out;
    for (char c : usage) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  }
  std::vector<Entry> entries_;
};

}  // namespace pf
