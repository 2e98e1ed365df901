// The pilotfish subcommands. main.cpp parses arguments into these option structs; each command
// returns the process exit code and throws pf::Error for failures main turns into one line.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pf {
struct Config;
class Embedder;
struct HybridOptions;
}  // namespace pf

namespace pf::cli {

struct IndexArgs {
  std::string dir = ".";  // or a git URL (index/git_source.h)
  std::string branch;     // --branch, for a git URL
  std::string db;
  bool include_tests = false;
  long long max_file_bytes = 1 << 20;
  int threads = 0;
  int max_lines = 0;   // 0: the chunker default
  int max_chars = 0;   // 0: the chunker default
  std::string compress = "auto";  // --compress-content: auto, always or never
  std::string config;  // --config
  bool no_embed = false;
  bool json = false;
  bool quiet = false;
};

struct SearchArgs {
  std::string query;
  std::string db;
  int limit = 10;
  int per_file = 2;
  long long match_budget = -1;  // -1: the search default
  std::vector<double> weights;  // symbols, path, headings, body; empty: the defaults
  std::string repo;             // only this indexed repository (a directory); empty: all
  std::string config;           // --config
  std::string mode;             // lexical, vector, hybrid; empty: hybrid if embeddings are set up
  std::string fusion;           // rrf or weighted; empty: the config's retrieval.fusion
  std::vector<std::string> shards;  // more stores, ranked with db's as one corpus (lexical)
  bool json = false;
};

struct AskArgs {
  std::string question;
  std::string db;
  std::string config;
  std::string model;  // fuzzy: "sonnet", "openai:mini"
  std::string mode;   // as for search
  std::string repo;   // the repository the tools work in; empty: the store's only one
  int max_steps = 0;     // 0: 5, or autopilot.maxSteps with implement
  bool rewrite = false;  // let the chat model rewrite the question into a search query
  std::string agent;     // a custom agent's name (agent/custom_agents.h); empty: none
  std::string reasoning;            // low, medium, high, xhigh; empty: the provider's default
  std::vector<std::string> images;  // PNG, JPEG, GIF or WebP files shown with the question
  bool plan = false;      // plan mode: read-only tools, the answer is a plan (agent/plan_mode.h)
  std::string implement;  // a plan file carried out on autopilot; question is then a note
};

struct ConfigArgs {
  std::string config;  // --config, or empty to search the default places
  bool check = false;  // ask each provider which models it offers
  bool json = false;
};

struct ServeArgs {
  std::string db;
  std::string config;
  std::string listen;  // host:port; empty: the config's (default 127.0.0.1:8080)
  std::string repo;
  bool no_auth = false;
  int workers = 2;
};

struct BridgeArgs {
  std::string db;
  std::string config;
  int workers = 2;
  bool check = false;  // `pilotfish bridge check`
};

struct McpArgs {
  std::string db, config;
  std::vector<std::string> repos;  // offered repositories; empty: all of the store's
  int workers = 2;
};

struct ModelsArgs {
  std::string config;
  std::optional<std::string> resolve;  // show how this name resolves (an empty one: an error)
  bool json = false;
};

struct HashKeyArgs {
  bool generate = false;  // make a new random key and print it with its hash
};

struct StatsArgs {
  std::string db;
  std::string config;  // its embedding model is listed even before it has embedded anything
  bool json = false;
};

struct MigrateArgs {
  std::string from, to;  // paths of SQLite files or postgres:// URLs
  bool json = false;
};

std::string resolve_db(const std::string& flag);
// Applies the config's "logging" section (core/log.h): its file and format, and its level unless
// --log-level gave one (keep_log_level). Throws pf::Error when the file cannot be opened.
void apply_logging(const Config& config);
void keep_log_level();
// Sets options->mode from --mode (default: hybrid when an embedding model is configured) and
// returns the embedder the mode needs (null for lexical). UsageError when the mode needs an
// embedding model and none is configured.
std::unique_ptr<Embedder> retrieval_mode(const Config& config, std::string mode,
                                         HybridOptions* options);

int run_index(const IndexArgs& args);
// Copies the store `from` into the empty store `to` (store/migrate.h).
int run_migrate(const MigrateArgs& args);
int run_search(const SearchArgs& args);
int run_stats(const StatsArgs& args);
int run_config(const ConfigArgs& args);

// `pilotfish init` (init.cpp): each field is the answer to one question; empty: asked (or, with
// yes, its default).
struct InitArgs {
  std::string config;  // the file written; default ~/.config/pilotfish/config.json
  bool yes = false;    // ask nothing: flags and defaults only, a wrong one is an error
  std::string repo, db;
  std::string provider, base_url, key_env, model;
  std::string http_key;  // "yes" or "no"
  std::string platform, chat_url, token_env, app_token_env, channels, users;
  std::string trigger;  // bridge.defaults.triggerMode: "mention" or "all"
};
int run_init(const InitArgs& args);
struct ServiceArgs {
  bool user = false;         // a user unit (~/.config/systemd/user) instead of a system one
  std::string config, db;
  std::string command = "serve";  // what the unit runs: serve (the API and any bridges) or bridge
  std::string unit_dir;      // empty: the systemd default for user or system
  std::string run_as;        // a system unit's User=; empty: $SUDO_USER, else root
  bool no_enable = false;    // write or remove the unit only; systemctl is not called
};

// The unit text (install_service.cpp): binary runs args.command with config's file and the store.
std::string service_unit(const ServiceArgs& args, const Config& config, const std::string& binary);
int run_install_service(const ServiceArgs& args);
int run_uninstall_service(const ServiceArgs& args);

int run_ask(const AskArgs& args);
int run_serve(const ServeArgs& args);
int run_bridge(const BridgeArgs& args);
int run_models(const ModelsArgs& args);
int run_mcp(const McpArgs& args);
int run_hash_key(const HashKeyArgs& args);

}  // namespace pf::cli
