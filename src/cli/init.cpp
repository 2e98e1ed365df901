// `pilotfish init`: a guided set-up on the terminal, or the same from flags for scripts (--yes):
// the repository, the store, a model provider (its /models asked; only the name of the key's
// environment variable is kept), an HTTP key (generated, shown once, stored hashed), a chat
// platform (the server pinged, the bot's token checked and its name learnt, channels found by
// name, who may talk to it). The answers are merged into the config file (an existing one is
// copied to <file>.bak-<UTC time> first, and the result is checked by the loader before it is
// written); then `config --check` and, with a platform, `bridge check` run on it. A wrong answer
// is said and asked again; with --yes it is an error (exit 2).
#include <openssl/rand.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "api/auth.h"
#include "bridge/bridge_config.h"
#include "bridge/platforms.h"
#include "bridge/service.h"
#include "cli/commands.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/text.h"
#include "index/git_source.h"
#include "llm/model_registry.h"
#include "net/http_client.h"

namespace pf::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Check = std::function<std::string(std::string&)>;  // "" when the answer will do

// Asks on the terminal, or takes flags with --yes. A check may rewrite the answer (trimmed,
// resolved) and returns what is wrong with it.
class Prompter {
 public:
  Prompter(bool interactive, std::istream& in, std::ostream& out)
      : interactive_(interactive), in_(in), out_(out) {}
  std::string ask(const std::string& question, const std::string& preset,
                  const std::string& fallback, const Check& check) {
    std::string answer = preset;
    if (!interactive_ || !preset.empty()) {
      if (answer.empty()) answer = fallback;
      std::string why = check(answer);
      if (why.empty()) return answer;
      if (!interactive_) throw UsageError("init: " + question + ": " + why);
      out_ << "  " << why << "\n";
    }
    for (;;) {
      out_ << question << (fallback.empty() ? "" : " [" + fallback + "]") << ": " << std::flush;
      std::string line;
      if (!std::getline(in_, line)) throw UsageError("init: no answer to \"" + question + "\"");
      answer = trim_space(line);
      if (answer.empty()) answer = fallback;
      std::string why = check(answer);
      if (why.empty()) return answer;
      out_ << "  " << why << "\n";
    }
  }
  std::ostream& out() { return out_; }

 private:
  bool interactive_;
  std::istream& in_;
  std::ostream& out_;
};

std::string one_of(const std::string& answer, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (answer == o) return "";
  std::string list;
  for (const char* o : options) list += (list.empty() ? "" : ", ") + std::string(o);
  return "expected one of: " + list;
}

std::string env_name_problem(const std::string& name) {
  static const std::regex kName("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(name, kName)) return "\"" + name + "\" is not an environment variable name";
  return "";
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    item = trim_space(item);
    if (!item.empty()) out.push_back(item);
    item.clear();
  }
  return out;
}

std::string utc_stamp() { return format_utc(unix_time_ms(), "%Y%m%d-%H%M%S"); }

std::string new_api_key() {
  unsigned char bytes[24];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw Error("cannot make a random key");
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string key = "pf_";
  for (unsigned char b : bytes) key += kAlphabet[b & 63];
  return key;
}

// The model provider's part: its entry and the chat model, or nothing.
void ask_provider(Prompter& p, const InitArgs& a, Json& cfg) {
  std::string kind = p.ask("Model provider (openai, anthropic, ollama, none)", a.provider, "none",
                           [](std::string& s) { return one_of(s, {"openai", "anthropic", "ollama", "none"}); });
  if (kind == "none") return;
  std::string url_default = kind == "openai"      ? "https://api.openai.com/v1"
                            : kind == "anthropic" ? "https://api.anthropic.com"
                                                  : "http://127.0.0.1:11434/v1";
  std::string url = p.ask("Its base URL", a.base_url, url_default, [](std::string& s) {
    return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0 ? "" : "expected an http(s) URL";
  });
  std::string key_default = kind == "openai" ? "OPENAI_API_KEY" : kind == "anthropic" ? "ANTHROPIC_API_KEY" : "";
  std::string key_env = kind == "ollama" && a.key_env.empty()
                            ? std::string()
                            : p.ask("The environment variable that holds its API key", a.key_env,
                                    key_default, [](std::string& s) {
                                      if (std::string why = env_name_problem(s); !why.empty()) return why;
                                      return std::getenv(s.c_str()) ? std::string()
                                                                    : "$" + s + " is not set: export it first";
                                    });
  ProviderConfig pc;
  pc.name = kind;
  pc.type = kind == "anthropic" ? "anthropic" : "openai";
  pc.base_url = url;
  pc.api_key_env = key_env;
  std::vector<std::string> offered;
  try {
    offered = list_provider_models(pc, 10000);
    p.out() << "  " << kind << " offers " << offered.size() << " models\n";
  } catch (const std::exception& e) {
    p.out() << "  could not list its models (" << e.what() << "); any model name is taken\n";
  }
  std::string model = p.ask("Chat model", a.model, offered.empty() ? "" : offered.front(),
                            [&](std::string& s) -> std::string {
                              if (s.empty()) return "name a model";
                              if (offered.empty() ||
                                  std::find(offered.begin(), offered.end(), s) != offered.end())
                                return "";
                              return kind + " does not offer " + s;
                            });
  Json entry = {{"type", pc.type}, {"baseUrl", url}, {"models", Json::array({{{"id", model}}})}};
  if (!key_env.empty()) entry["apiKeyEnv"] = key_env;
  cfg["providers"][kind] = entry;
  cfg["defaults"]["chatModel"] = kind + ":" + model;
}

// The chat platform's part: a platform, its bot and channels; the platform's name, or "".
std::string ask_platform(Prompter& p, const InitArgs& a, const std::string& repo, Json& cfg) {
  std::string kind = p.ask("Chat platform (mattermost, slack, none)", a.platform, "none",
                           [](std::string& s) { return one_of(s, {"mattermost", "slack", "none"}); });
  if (kind == "none") return "";
  bool slack = kind == "slack";
  std::string url = p.ask(slack ? "Slack's Web API URL" : "Your Mattermost server's URL", a.chat_url,
                          slack ? "https://slack.com/api" : "", [&](std::string& s) -> std::string {
    while (!s.empty() && s.back() == '/') s.pop_back();
    if (s.rfind("http://", 0) != 0 && s.rfind("https://", 0) != 0) return "expected an http(s) URL";
    try {
      HttpRequest r;
      r.method = "GET";
      r.url = slack ? s + "/api.test" : s + "/api/v4/system/ping";
      r.timeout = std::chrono::milliseconds(10000);
      HttpResponse res = http_request(r);
      if (res.status != 200) return s + " answered HTTP " + std::to_string(res.status);
    } catch (const std::exception& e) {
      return std::string("cannot reach it: ") + e.what();
    }
    return "";
  });
  PlatformConfig pc;
  pc.name = kind;
  pc.type = kind;
  pc.url = url;
  BotConfig bot;
  bot.name = "bot";
  PlatformProbe probe;
  auto token_check = [&](std::string& s) -> std::string {
    if (std::string why = env_name_problem(s); !why.empty()) return why;
    if (!std::getenv(s.c_str())) return "$" + s + " is not set: export it first";
    return "";
  };
  if (slack)
    bot.app_token_env = p.ask("The variable that holds the app-level token (xapp-…)",
                              a.app_token_env, "SLACK_APP_TOKEN", token_check);
  bot.token_env = p.ask("The variable that holds the bot's token", a.token_env,
                        slack ? "SLACK_BOT_TOKEN" : "MM_BOT_TOKEN", [&](std::string& s) -> std::string {
    if (std::string why = token_check(s); !why.empty()) return why;
    bot.token_env = s;
    try {
      probe = probe_platform(pc, bot, {});
    } catch (const std::exception& e) {
      return std::string("the token is refused: ") + e.what();
    }
    return "";
  });
  p.out() << "  the bot is @" << probe.bot.username << "\n";
  std::vector<std::string> names;
  p.ask("Channels to answer in (names, comma-separated)", a.channels, "", [&](std::string& s) -> std::string {
    names = comma_list(s);
    if (names.empty()) return "name at least one channel";
    try {
      probe = probe_platform(pc, bot, names);
    } catch (const std::exception& e) {
      return e.what();
    }
    std::string missing;
    for (std::string n : names) {
      if (!n.empty() && n[0] == '#') n.erase(0, 1);
      if (!probe.channels.count(n)) missing += (missing.empty() ? "" : ", ") + n;
    }
    return missing.empty() ? "" : "no channel the bot can see is named: " + missing;
  });
  std::string users = p.ask("Who may talk to it (usernames, comma-separated, or * for everyone)",
                            a.users, "", [](std::string& s) {
                              return comma_list(s).empty() ? std::string("name someone, or *") : "";
                            });
  std::string trigger = p.ask("Answer in channels when mentioned, or every message (mention, all)",
                              a.trigger, "mention",
                              [](std::string& s) { return one_of(s, {"mention", "all"}); });
  cfg["bridge"]["defaults"]["triggerMode"] = trigger;
  std::string bot_name = probe.bot.username.empty() ? "bot" : probe.bot.username;
  Json b = {{"tokenEnv", bot.token_env}};
  if (slack) b["appTokenEnv"] = bot.app_token_env;
  b["access"] = users == "*" ? Json{{"mode", "open"}}
                             : Json{{"mode", "allowlist"}, {"users", comma_list(users)}};
  Json platform = {{"url", url}, {"bots", {{bot_name, b}}}};
  if (slack) platform["type"] = "slack";
  cfg["bridge"]["platforms"][kind] = platform;
  Json channels = cfg["bridge"].contains("channels") ? cfg["bridge"]["channels"] : Json::array();
  for (const auto& [name, id] : probe.channels) {
    Json kept = Json::array();
    for (const Json& c : channels)
      if (!(c.is_object() && c.value("id", "") == id)) kept.push_back(c);
    kept.push_back({{"id", id}, {"name", name}, {"platform", kind}, {"bot", bot_name},
                    {"workingDirectory", repo}});
    channels = kept;
  }
  cfg["bridge"]["channels"] = channels;
  return kind;
}

}  // namespace

int run_init(const InitArgs& a) {
  bool interactive = !a.yes;
  Prompter p(interactive, std::cin, std::cout);
  std::string path = !a.config.empty() ? a.config : user_config_dir() + "/config.json";
  if (path == "/config.json") throw UsageError("init: name the config file with --config");
  Json cfg = Json::object();
  std::error_code ec;
  if (fs::exists(path, ec)) {
    try {
      cfg = Json::parse(read_file(path));
    } catch (const std::exception& e) {
      throw UsageError("init: " + path + " is not valid JSON (" + e.what() + "); fix or move it first");
    }
    if (!cfg.is_object()) throw UsageError("init: " + path + " does not hold a JSON object");
    p.out() << "Merging into " << path << " (a copy is kept first).\n";
  }

  std::string repo = p.ask("Repository to answer about (a folder or a git URL)", a.repo,
                           fs::current_path().string(), [](std::string& s) -> std::string {
    if (is_git_url(s)) return "";
    std::error_code e;
    if (!fs::is_directory(s, e)) return s + " is not a folder or a git URL";
    s = fs::canonical(s).string();
    return "";
  });
  std::string db = p.ask("Where the index store goes", a.db, resolve_db(""), [](std::string& s) -> std::string {
    if (s.rfind("postgres", 0) == 0) return "";
    std::error_code e;
    if (fs::is_directory(s, e)) return s + " is a folder; name a file in it";
    fs::path parent = fs::absolute(s).parent_path();
    fs::create_directories(parent, e);
    if (e) return "cannot make " + parent.string() + ": " + e.message();
    return "";
  });
  cfg["server"]["repository"] = repo;
  ask_provider(p, a, cfg);
  std::string http = p.ask("Protect the HTTP API with a key? (yes, no)", a.http_key, "yes",
                           [](std::string& s) { return one_of(s, {"yes", "no"}); });
  std::string key;
  if (http == "yes") {
    key = new_api_key();
    Json keys = cfg["server"].contains("apiKeys") ? cfg["server"]["apiKeys"] : Json::array();
    keys.push_back({{"name", "init-" + utc_stamp()}, {"hash", "sha256:" + sha256_hex(key)}, {"role", "admin"}});
    cfg["server"]["apiKeys"] = keys;
  }
  std::string platform = ask_platform(p, a, repo, cfg);

  // Checked as the loader reads it before anything is written.
  std::string text = cfg.dump(2) + "\n";
  Config parsed = parse_config(text, path);
  if (fs::exists(path, ec)) {
    std::string backup = path + ".bak-" + utc_stamp();
    fs::copy_file(path, backup, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error("init: cannot keep a copy of " + path + ": " + ec.message());
    p.out() << "Kept the old config as " << backup << "\n";
  }
  fs::create_directories(fs::absolute(path).parent_path(), ec);
  write_file_atomic(path, text);
  p.out() << "Wrote " << path << "\n";
  if (!key.empty())
    p.out() << "HTTP API key (shown once, only its hash is kept): " << key << "\n";
  if (db != resolve_db("")) p.out() << "Run pilotfish with --db " << db << " (or set PILOTFISH_DB).\n";
  p.out() << "\npilotfish config --check:\n" << std::flush;
  int status = run_config(ConfigArgs{path, true, false});
  if (!platform.empty()) {
    p.out() << "\npilotfish bridge check:\n" << std::flush;
    status = std::max(status, check_bridges(parsed, db));
  }
  std::cout << std::flush;
  return status;
}

}  // namespace pf::cli
