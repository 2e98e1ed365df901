// Shell command lines into simple commands: a walk of tree-sitter-bash's syntax tree, quote
// removal on each word, then the wrappers peeled off each command (a wrapper's command string,
// as in `bash -c "…"`, is parsed again, to a bounded depth).
#include "policy/shell_command.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

extern "C" const TSLanguage* tree_sitter_bash(void);

namespace pf {
namespace {

constexpr size_t kMaxCommandBytes = 64 * 1024;  // longer lines are not looked into
constexpr int kMaxNesting = 8;                  // bash -c "bash -c '…'" levels
constexpr int kMaxTreeDepth = 200;              // syntax-tree depth walked

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};

TSParser* bash_parser() {
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser = [] {
    std::unique_ptr<TSParser, ParserDeleter> p(ts_parser_new());
    ts_parser_set_language(p.get(), tree_sitter_bash());
    return p;
  }();
  return parser.get();
}

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_option(const std::string& w) { return w.size() > 1 && w[0] == '-'; }

class Walker {
 public:
  Walker(std::string_view src, ShellParse& out, std::vector<std::string> wrappers, int nesting)
      : src_(src), out_(out), wrappers_(std::move(wrappers)), nesting_(nesting) {}

  void walk(TSNode node, int depth);

 private:
  std::string text(TSNode n) const {
    return std::string(src_.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n)));
  }
  std::string literal(TSNode n, bool& dynamic) const;
  std::string double_quoted(TSNode n, bool& dynamic) const;
  void command(TSNode n);
  void declaration(TSNode n);
  void redirect(TSNode n);
  void function(TSNode n, int depth);

  std::string_view src_;
  ShellParse& out_;
  std::vector<std::string> wrappers_;
  int nesting_;
  std::vector<size_t> open_functions_;  // indexes into out_.functions, innermost last
};

// Removes backslash escapes from an unquoted word (a backslash-newline disappears).
std::string unescape_word(std::string_view s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      if (s[++i] != '\n') r += s[i];
    } else {
      r += s[i];
    }
  }
  return r;
}

// Inside double quotes a backslash escapes only $ ` " \ and newline.
void append_double_quoted(std::string_view s, std::string& r) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && std::strchr("$`\"\\\n", s[i + 1]) != nullptr) {
      if (s[++i] != '\n') r += s[i];
    } else {
      r += s[i];
    }
  }
}

std::string ansi_c(std::string_view s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      r += s[i];
      continue;
    }
    char c = s[++i];
    switch (c) {
      case 'n': r += '\n'; break;
      case 't': r += '\t'; break;
      case 'r': r += '\r'; break;
      case 'x': {
        int v = 0, k = 0;
        while (k < 2 && i + 1 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1]))) {
          char h = s[++i];
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
          ++k;
        }
        r += static_cast<char>(v);
        break;
      }
      default: r += c;
    }
  }
  return r;
}

std::string Walker::double_quoted(TSNode n, bool& dynamic) const {
  uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
  std::string_view whole = src_.substr(start, end - start);
  size_t open = whole.find('"');
  if (open == std::string_view::npos || whole.size() < open + 2) return std::string(whole);
  uint32_t pos = start + static_cast<uint32_t>(open) + 1, stop = end - 1;
  std::string r;
  for (uint32_t i = 0, count = ts_node_named_child_count(n); i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    uint32_t cs = ts_node_start_byte(c), ce = ts_node_end_byte(c);
    if (cs > pos && cs <= stop) append_double_quoted(src_.substr(pos, cs - pos), r);
    if (std::strcmp(ts_node_type(c), "string_content") == 0) {
      append_double_quoted(src_.substr(cs, ce - cs), r);
    } else {
      r += text(c);
      dynamic = true;
    }
    pos = std::max(pos, ce);
  }
  if (pos < stop) append_double_quoted(src_.substr(pos, stop - pos), r);
  return r;
}

// The word bash would pass, after quote removal; expansions stay as written and set dynamic.
std::string Walker::literal(TSNode n, bool& dynamic) const {
  std::string_view type = ts_node_type(n);
  if (type == "word" || type == "number" || type == "command_name") {
    if (type == "command_name" && ts_node_named_child_count(n) == 1)
      return literal(ts_node_named_child(n, 0), dynamic);
    return unescape_word(text(n));
  }
  if (type == "raw_string") {
    std::string t = text(n);
    return t.size() >= 2 ? t.substr(1, t.size() - 2) : t;
  }
  if (type == "ansi_c_string") {
    std::string t = text(n);
    return t.size() >= 3 ? ansi_c(std::string_view(t).substr(2, t.size() - 3)) : t;
  }
  if (type == "string" || type == "translated_string") return double_quoted(n, dynamic);
  if (type == "concatenation") {
    std::string r;
    for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      r += ts_node_is_named(c) ? literal(c, dynamic) : unescape_word(text(c));
    }
    return r;
  }
  dynamic = true;  // expansions, substitutions, arithmetic, brace expressions
  return text(n);
}

void Walker::redirect(TSNode n) {
  std::string op;
  for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) {
    TSNode c = ts_node_child(n, i);
    if (!ts_node_is_named(c)) op += ts_node_type(c);
  }
  if (op.find('>') == std::string::npos) return;
  TSNode dest = ts_node_child_by_field_name(n, "destination", 11);
  if (ts_node_is_null(dest)) return;
  bool dynamic = false;
  std::string target = literal(dest, dynamic);
  // 2>&1 and >&- duplicate or close a descriptor; they write no file.
  if (op.find('&') != std::string::npos && op != "&>" && op != "&>>" &&
      (target == "-" || std::all_of(target.begin(), target.end(), ::isdigit)))
    return;
  out_.redirect_targets.push_back(target);
}

void record(ShellParse& out, std::vector<std::string> words, std::vector<std::string> wrappers,
            bool dynamic_name, int nesting);

void Walker::command(TSNode n) {
  std::vector<std::string> words;
  bool name_dynamic = false;
  for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) {
    const char* field = ts_node_field_name_for_child(n, i);
    if (field == nullptr) continue;
    std::string_view f = field;
    if (f != "name" && f != "argument") continue;
    bool dynamic = false;
    words.push_back(literal(ts_node_child(n, i), dynamic));
    if (f == "name") name_dynamic = dynamic;
  }
  if (words.empty()) return;  // only assignments
  if (!name_dynamic && !open_functions_.empty()) {
    for (size_t index : open_functions_)
      if (out_.functions[index].name == words[0]) ++out_.functions[index].self_calls;
  }
  record(out_, std::move(words), wrappers_, name_dynamic, nesting_);
}

// export, local, declare, readonly, typeset: a builtin named by its first token.
void Walker::declaration(TSNode n) {
  if (ts_node_child_count(n) == 0) return;
  std::vector<std::string> words{text(ts_node_child(n, 0))};
  for (uint32_t i = 0, count = ts_node_named_child_count(n); i < count; ++i) {
    bool dynamic = false;
    words.push_back(literal(ts_node_named_child(n, i), dynamic));
  }
  record(out_, std::move(words), wrappers_, false, nesting_);
}

void Walker::function(TSNode n, int depth) {
  TSNode name = ts_node_child_by_field_name(n, "name", 4);
  out_.functions.push_back({ts_node_is_null(name) ? std::string() : text(name), 0, false});
  open_functions_.push_back(out_.functions.size() - 1);
  for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i)
    walk(ts_node_child(n, i), depth + 1);
  open_functions_.pop_back();
}

void Walker::walk(TSNode node, int depth) {
  if (depth > kMaxTreeDepth) {
    out_.incomplete = true;
    return;
  }
  std::string_view type = ts_node_type(node);
  if (!ts_node_is_named(node)) {
    if (type == "&") {
      for (size_t index : open_functions_) out_.functions[index].backgrounds = true;
    }
    return;
  }
  if (type == "function_definition") return function(node, depth);
  if (type == "command") command(node);
  if (type == "declaration_command" || type == "unset_command") declaration(node);
  if (type == "file_redirect") redirect(node);
  if (type == "ERROR" || ts_node_is_missing(node)) out_.incomplete = true;
  for (uint32_t i = 0, count = ts_node_child_count(node); i < count; ++i)
    walk(ts_node_child(node, i), depth + 1);
}

void parse_into(std::string_view command, ShellParse& out, std::vector<std::string> wrappers,
                int nesting) {
  if (command.size() > kMaxCommandBytes || nesting > kMaxNesting) {
    out.incomplete = true;
    return;
  }
  TSParser* parser = bash_parser();
  ts_parser_reset(parser);
  std::unique_ptr<TSTree, TreeDeleter> tree(
      ts_parser_parse_string(parser, nullptr, command.data(), static_cast<uint32_t>(command.size())));
  if (!tree) {
    out.incomplete = true;
    return;
  }
  TSNode root = ts_tree_root_node(tree.get());
  if (ts_node_has_error(root)) out.incomplete = true;
  Walker(command, out, std::move(wrappers), nesting).walk(root, 0);
}

std::string join_words(const std::vector<std::string>& words, size_t from) {
  std::string r;
  for (size_t i = from; i < words.size(); ++i) r += (i > from ? " " : "") + words[i];
  return r;
}

// Options of wrapper programs that take a value (so the value is not the wrapped program).
bool takes_value(std::string_view wrapper, const std::string& opt) {
  static const std::array<std::pair<std::string_view, std::string_view>, 10> table{{
      {"sudo", " -u -g -C -D -h -p -r -t -U -T "},
      {"doas", " -u -C "},
      {"env", " -u -C -S "},
      {"nice", " -n "},
      {"ionice", " -c -n -p -P -u "},
      {"timeout", " -s -k "},
      {"xargs", " -I -d -n -P -L -s -E -a -i -l "},
      {"exec", " -a "},
      {"stdbuf", " -i -o -e "},
      {"watch", " -n -d -q "},
  }};
  if (opt.size() != 2) return false;  // "-uroot", "--user=root": the value is attached
  for (auto& [name, opts] : table)
    if (name == wrapper) return opts.find(" " + opt + " ") != std::string_view::npos;
  return false;
}

bool is_shell(std::string_view name) {
  static const std::array<std::string_view, 9> shells{"bash", "sh",   "zsh",  "dash", "ksh",
                                                      "mksh", "ash",  "fish", "tcsh"};
  return std::find(shells.begin(), shells.end(), name) != shells.end();
}

// The index of the first word after a wrapper's options (and its leading operands), or
// words.size() when none is left.
size_t skip_wrapper_options(std::string_view wrapper, const std::vector<std::string>& w) {
  size_t i = 1;
  while (i < w.size()) {
    const std::string& a = w[i];
    if (a == "--") return i + 1;
    if (wrapper == "env" && a.find('=') != std::string::npos && a[0] != '-') {
      ++i;
      continue;
    }
    if (!is_option(a)) break;
    i += takes_value(wrapper, a) ? 2 : 1;
  }
  if (wrapper == "timeout" && i < w.size()) ++i;                      // DURATION
  if ((wrapper == "chroot" || wrapper == "flock") && i < w.size()) ++i;  // NEWROOT, LOCKFILE
  if ((wrapper == "taskset" || wrapper == "chrt") && i < w.size()) ++i;  // mask, priority
  return i;
}

// Records one command, peeling wrappers: a command string given to a shell, eval, su, env -S,
// flock -c or watch is parsed again with the wrapper added.
void record(ShellParse& out, std::vector<std::string> words, std::vector<std::string> wrappers,
            bool dynamic_name, int nesting) {
  for (;;) {
    std::string name = dynamic_name ? std::string() : std::string(base_name(words[0]));
    if (name == "busybox" && words.size() > 1) {
      words.erase(words.begin());
      wrappers.push_back(name);
      continue;
    }
    if (dynamic_name || !is_shell_wrapper(name)) {
      out.commands.push_back({std::move(words), name, std::move(wrappers), dynamic_name});
      return;
    }
    auto inner = [&](const std::string& script) {
      auto with = wrappers;
      with.push_back(name);
      parse_into(script, out, std::move(with), nesting + 1);
    };
    // A command string: bash -c / -lc / -ec, su -c, flock -c, env -S, eval's arguments, watch's.
    if (is_shell(name) || name == "su" || name == "flock" || name == "env") {
      for (size_t i = 1; i < words.size(); ++i) {
        const std::string& a = words[i];
        bool c_flag = (is_shell(name) || name == "su" || name == "flock")
                          ? (a == "-c" || a == "--command" ||
                             (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('c') != std::string::npos))
                          : (a == "-S" || a == "--split-string");
        if (c_flag && i + 1 < words.size()) return inner(words[i + 1]);
        if (a.rfind("--command=", 0) == 0 || a.rfind("--split-string=", 0) == 0)
          return inner(a.substr(a.find('=') + 1));
      }
    }
    if (name == "eval") return inner(join_words(words, 1));
    if (name == "find") {
      bool any = false;
      for (size_t i = 1; i < words.size(); ++i) {
        if (words[i] != "-exec" && words[i] != "-execdir" && words[i] != "-ok" && words[i] != "-okdir")
          continue;
        size_t j = i + 1;
        std::vector<std::string> sub;
        while (j < words.size() && words[j] != ";" && words[j] != "+") sub.push_back(words[j++]);
        if (!sub.empty()) {
          auto with = wrappers;
          with.push_back(name);
          record(out, std::move(sub), std::move(with), false, nesting);
          any = true;
        }
        i = j;
      }
      // find itself runs too (and may -delete): it stays a command of its own.
      if (any) wrappers.push_back(name);
      out.commands.push_back({std::move(words), name, std::move(wrappers), false});
      return;
    }
    if (is_shell(name) || name == "su") {
      // A shell with a script or reading stdin: the shell itself is what runs.
      wrappers.push_back(name);
      out.commands.push_back({std::move(words), name, std::move(wrappers), false});
      return;
    }
    if (name == "watch") return inner(join_words(words, skip_wrapper_options(name, words)));
    size_t rest = skip_wrapper_options(name, words);
    if (rest >= words.size()) {
      // Nothing wrapped (`sudo -v`, `env`, `xargs` running echo): the wrapper is the command.
      wrappers.push_back(name);
      out.commands.push_back({std::move(words), name, std::move(wrappers), false});
      return;
    }
    wrappers.push_back(name);
    words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(rest));
    dynamic_name = words[0].find('$') != std::string::npos || words[0].find('`') != std::string::npos;
  }
}

}  // namespace

bool is_shell_wrapper(std::string_view name) {
  static const std::array<std::string_view, 30> wrappers{
      "bash",   "sh",     "zsh",   "dash",    "ksh",    "mksh",  "ash",     "fish",
      "tcsh",   "sudo",   "doas",  "su",      "env",    "xargs", "eval",    "exec",
      "command", "builtin", "nohup", "nice",  "ionice", "timeout", "time",  "stdbuf",
      "setsid", "chroot", "flock", "watch",   "find",   "busybox"};
  if (std::find(wrappers.begin(), wrappers.end(), name) != wrappers.end()) return true;
  return name == "taskset" || name == "chrt" || name == "nsenter" || name == "unshare" ||
         name == "unbuffer" || name == "script" || name == "parallel";
}

ShellParse parse_shell(std::string_view command) {
  ShellParse out;
  parse_into(command, out, {}, 0);
  return out;
}

}  // namespace pf
