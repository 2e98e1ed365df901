// Entry point: argument parsing (CLI11) and the error boundary. Every pf::Error becomes one line
// on stderr and an exit code: 2 for usage errors, 3 when the store is busy, 1 otherwise.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/policy.h"
#include "core/error.h"
#include "core/log.h"

#ifdef PF_JEMALLOC
#include <jemalloc/jemalloc.h>

// Freed pages go back to the system from jemalloc's own thread once its decay (10 s) passes.
// Without it they are purged only when the process allocates again, so an idle server or bridge
// kept the memory of its busiest moment (docs/BENCHMARKS.md, the bridge under load). The
// MALLOC_CONF environment variable still overrides this.
const char* malloc_conf = "background_thread:true";
#endif

namespace {

// The version line also names the allocator and how the parser was compiled (see
// CMakeLists.txt), so a benchmark run records which build it measured.
std::string version_line() {
  std::string line = "pilotfish 0.1.0 (allocator: ";
#ifdef PF_JEMALLOC
  const char* version = nullptr;
  size_t size = sizeof(version);
  if (mallctl("version", &version, &size, nullptr, 0) == 0)
    line += "jemalloc " + std::string(version).substr(0, 5);
  else
    line += "jemalloc";
  bool purging = false;
  size = sizeof(purging);
  if (mallctl("background_thread", &purging, &size, nullptr, 0) == 0 && purging)
    line += " with background purge";
#else
  line += "system";
#endif
#ifdef PF_PARSER_PGO
  line += ", parser: profile-guided)";
#else
  line += ", parser: plain)";
#endif
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pf;
  CLI::App app{"pilotfish: index a code repository and search it", "pilotfish"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  std::string log_level;
  app.add_option("--log-level", log_level, "debug, info, warn (default), error or off")
      ->envname("PILOTFISH_LOG");

  cli::IndexArgs ia;
  auto* index = app.add_subcommand("index", "Index a repository (incremental: only changes)");
  index->add_option("dir", ia.dir,
                    "Repository root (default: the current directory), or a git URL: cloned into "
                    "git.cloneDir once, fetched on later runs");
  index->add_option("--branch", ia.branch, "The branch or tag of a git URL (default: its default)");
  index->add_option("--db", ia.db,
                    "Store file (default: $PILOTFISH_DB or ~/.local/share/pilotfish/index.db)");
  index->add_flag(
      "--include-tests", ia.include_tests,
      "Also index tests (test/, tests/, *.test.*, *.spec.*, *_test.*, test_*.py, *Test.java)");
  index->add_option("--max-file-size", ia.max_file_bytes, "Skip files larger than this many bytes")
      ->check(CLI::PositiveNumber);
  index->add_option("--threads", ia.threads, "Chunking threads (default: one per core)")
      ->check(CLI::Range(1, 256));
  index->add_option("--max-lines", ia.max_lines, "Largest chunk, in lines (default 80)")
      ->check(CLI::Range(5, 10000));
  index
      ->add_option("--max-chars", ia.max_chars,
                   "Largest Markdown section chunk, in bytes (default 2000)")
      ->check(CLI::Range(200, 1000000));
  index
      ->add_option("--compress-content", ia.compress,
                   "Store chunk text compressed: auto (a repository with 64 MiB or more to "
                   "index), always, or never (text that other SQLite tools can read)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  index->add_option("--config", ia.config, "Config file (see `pilotfish config --help`)");
  index->add_flag("--no-embed", ia.no_embed,
                  "Do not embed chunks even if an embedding model is configured");
  index->add_flag("--json", ia.json, "Print the report as JSON");
  index->add_flag("-q,--quiet", ia.quiet, "No progress bar and no report");

  cli::SearchArgs sa;
  std::vector<std::string> words;
  auto* search = app.add_subcommand("search", "Search the index (ranked BM25 over code and docs)");
  search->add_option("query", words, "What to look for: words, a question or identifiers")
      ->required();
  search->add_option("--db", sa.db, "Store file");
  search->add_option("-n,--limit", sa.limit, "Number of results (default 10)")
      ->check(CLI::Range(1, 1000));
  search
      ->add_option("--per-file", sa.per_file,
                   "At most this many results per file (default 2; 0: no cap)")
      ->check(CLI::Range(0, 1000));
  search
      ->add_option("--match-budget", sa.match_budget,
                   "Enumerate only the rarest terms' chunks when the query matches more than "
                   "this, scoring the common terms on those (default 3000; 0: every match)")
      ->check(CLI::Range(0LL, 1LL << 40));
  search
      ->add_option("--weights", sa.weights,
                   "bm25 column weights: symbols,path,headings,body (default 8,4,3,1)")
      ->delimiter(',')
      ->expected(4)
      ->check(CLI::Range(0.0, 1000.0));
  search->add_option("--repo", sa.repo,
                     "Only results from this indexed repository (its directory); default: all");
  search->add_option("--config", sa.config, "Config file (see `pilotfish config --help`)");
  search
      ->add_option("--mode", sa.mode,
                   "lexical, vector or hybrid (default: hybrid when an embedding model is "
                   "configured, else lexical)")
      ->check(CLI::IsMember({"lexical", "vector", "hybrid"}));
  search
      ->add_option("--fusion", sa.fusion,
                   "How hybrid search merges its legs: rrf or weighted (default: the config's "
                   "retrieval.fusion, else rrf)")
      ->check(CLI::IsMember({"rrf", "weighted"}));
  search->add_option("--shard", sa.shards,
                     "Another store to search with --db's, ranked as one corpus (its statistics "
                     "summed with theirs): repeatable; lexical only, not with --repo");
  search->add_flag("--json", sa.json, "Print {\"results\": [...]} as JSON");

  cli::StatsArgs st;
  auto* stats = app.add_subcommand("stats", "Show what the store holds");
  stats->add_option("--db", st.db, "Store file");
  stats->add_option("--config", st.config, "Configuration file (for its embedding model)");
  stats->add_flag("--json", st.json, "Print as JSON");

  cli::MigrateArgs mg;
  auto* migrate = app.add_subcommand(
      "migrate", "Copy a store into an empty one: a SQLite file into PostgreSQL, or back");
  migrate->add_option("from", mg.from, "The store to copy (a file, or postgres://...)")->required();
  migrate->add_option("to", mg.to, "The empty store to copy into (a file, or postgres://...)")->required();
  migrate->add_flag("--json", mg.json, "Print the report as JSON");

  cli::AskArgs aa;
  std::vector<std::string> ask_words;
  auto* ask = app.add_subcommand("ask", "Ask a question; the answer streams to the terminal");
  ask->add_option("question", ask_words, "The question (with --implement: a note beside the plan)");
  ask->add_option("--db", aa.db, "Store file");
  ask->add_option("--config", aa.config, "Config file (see `pilotfish config --help`)");
  ask->add_option("-m,--model", aa.model,
                  "Chat model, fuzzy: \"sonnet\", \"openai:mini\" (default: the config's)");
  ask->add_option("--repo", aa.repo,
                  "The indexed repository to answer about (default: the store's only one)");
  ask->add_option("--max-steps", aa.max_steps,
                  "Model calls at most, tool steps included (default 5; with --implement the "
                  "config's bridge.autopilot.maxSteps, 50)")
      ->check(CLI::Range(1, 200));
  ask->add_flag(
      "--rewrite", aa.rewrite,
      "Let the chat model rewrite the question into a search query first (one more model call)");
  ask->add_option("--mode", aa.mode, "Retrieval: lexical, vector or hybrid")
      ->check(CLI::IsMember({"lexical", "vector", "hybrid"}));
  ask->add_option("--reasoning", aa.reasoning, "How hard a reasoning model thinks")
      ->check(CLI::IsMember({"low", "medium", "high", "xhigh"}));
  ask->add_option("--image", aa.images,
                  "An image (PNG, JPEG, GIF, WebP; up to 4 of 5 MiB) shown with the question, to "
                  "a model that takes images (repeatable)");
  ask->add_option("--agent", aa.agent,
                  "A custom agent (NAME.agent.md in the repository's .github/agents/ or agents/, "
                  "or ~/.config/pilotfish/agents/): its instructions, tools and model");
  auto* plan_flag = ask->add_flag(
      "--plan", aa.plan,
      "Plan mode: the agent only reads (no writes, commands or MCP calls, whatever the rules say) "
      "and answers with an implementation plan");
  ask->add_option("--implement", aa.implement,
                  "Carry out the plan in this Markdown file (from --plan) on autopilot: the agent "
                  "works until it says it is done or runs out of steps; prompts are still asked")
      ->excludes(plan_flag);

  cli::AuditArgs au;
  auto* audit = app.add_subcommand(
      "audit", "The audit trail: every side-effecting tool call, its decision and its outcome");
  audit->add_option("--config", au.config, "Config file");
  audit->add_option("--db", au.db, "Store file (the bridge state beside it holds the trail)");
  audit->add_option("--since", au.since, "From: a span back from now (90m, 12h, 7d) or a UTC date");
  audit->add_option("--channel", au.place,
                    "Only one place: a channel (platform:id), an HTTP key's name or terminal");
  audit->add_option("-n,--limit", au.limit, "The newest this many (default 200)")
      ->check(CLI::Range(1, 100000));
  audit->add_flag("--json", au.json, "Print {\"records\": [...]} as JSON");

  cli::ServiceArgs svc;
  auto* install_service = app.add_subcommand(
      "install-service", "Write a hardened systemd unit that runs pilotfish, enable and start it");
  auto* uninstall_service =
      app.add_subcommand("uninstall-service", "Stop, disable and remove the systemd unit");
  for (CLI::App* c : {install_service, uninstall_service}) {
    c->add_flag("--user", svc.user, "A user unit (~/.config/systemd/user) instead of a system one");
    c->add_option("--unit-dir", svc.unit_dir, "Where the unit goes (default: systemd's)");
    c->add_flag("--no-enable", svc.no_enable, "Only write or remove the unit; do not call systemctl");
  }
  install_service->add_option("--config", svc.config, "Config file the service runs with");
  install_service->add_option("--db", svc.db, "Store file the service runs with");
  install_service->add_option("--command", svc.command, "serve (default: the API and any bridges) or bridge")
      ->check(CLI::IsMember({"serve", "bridge"}));
  install_service->add_option("--run-as", svc.run_as, "A system unit's user (default: $SUDO_USER)");

  cli::ServeArgs sv;
  auto* serve = app.add_subcommand(
      "serve", "Serve chat (AI SDK UI message stream), search and re-indexing over HTTP");
  serve->add_option("--db", sv.db, "Store file");
  serve->add_option("--config", sv.config, "Config file (see `pilotfish config --help`)");
  serve->add_option("--listen", sv.listen,
                    "host:port to listen on (default: server.listen, else 127.0.0.1:8080; port 0 "
                    "picks a free one)");
  serve->add_option("--repo", sv.repo,
                    "The repository to index and answer about, a folder or a git URL (default: "
                    "server.repository, else the store's only one)");
  serve->add_flag("--no-auth", sv.no_auth,
                  "Accept requests without an API key (loopback addresses only)");
  serve->add_option("--workers", sv.workers, "Threads for retrieval and tools (default 2)")
      ->check(CLI::Range(1, 64));

  cli::BridgeArgs br;
  auto* bridge = app.add_subcommand(
      "bridge", "Run the chat bridges of the config (Mattermost) without the HTTP API");
  bridge->add_option("--db", br.db, "Store file");
  bridge->add_option("--config", br.config, "Config file (see `pilotfish config --help`)");
  bridge->add_option("--workers", br.workers, "Threads for retrieval and tools (default 2)")
      ->check(CLI::Range(1, 64));
  auto* bridge_check = bridge->add_subcommand(
      "check", "Check the bridge config: tokens, servers, channels and working directories");
  bridge_check->add_option("--config", br.config, "Config file");
  bridge_check->add_option("--db", br.db, "Index store (the bridge's state is beside it)");

  cli::ModelsArgs ma;
  auto* models = app.add_subcommand("models", "List the configured models, or resolve a name");
  models->add_option("--config", ma.config, "Config file");
  models->add_option("--resolve", ma.resolve, "Show how a (fuzzy) model name resolves");
  models->add_flag("--json", ma.json, "Print as JSON");

  cli::McpArgs mc;
  auto* mcp = app.add_subcommand(
      "mcp", "Serve the index to coding agents over MCP (stdio): search_code, read_file, "
             "list_directory, grep, index_status");
  mcp->add_option("--db", mc.db, "Store file");
  mcp->add_option("--config", mc.config, "Config file");
  mcp->add_option("--repo", mc.repos, "Offer only this indexed repository (repeatable)");
  mcp->add_option("--workers", mc.workers, "Threads for searches and reads (default 2)")
      ->check(CLI::Range(1, 64));

  cli::PolicyArgs pa;
  auto* policy = app.add_subcommand("policy", "The permission engine, for operators");
  policy->require_subcommand(1);
  auto* explain = policy->add_subcommand(
      "explain", "Print the decision for one tool call and the rule or check that made it");
  explain->add_option("--config", pa.config, "Config file");
  explain->add_option("--db", pa.db, "Store file (the bridge state beside it holds stored rules)");
  explain->add_option("--bot", pa.bot, "The bot (bridge.platforms.*.bots)");
  explain->add_option("--channel", pa.channel, "The channel id, or platform:id");
  explain->add_option("--tool", pa.tool, "The tool: run_command, write_file, edit_file, "
                                         "fetch_url, or server__tool for MCP")->required();
  explain->add_option("--args", pa.args, "The call's arguments as JSON, e.g. "
                                         "'{\"command\": \"git push\"}'");
  explain->add_option("--workspace", pa.workspace, "The workspace (default: the channel's)");
  explain->add_flag("--json", pa.json, "Print as JSON");

  cli::HashKeyArgs hk;
  auto* hash_key = app.add_subcommand(
      "hash-key", "Print the hash of an API key read from stdin, for server.apiKeys");
  hash_key->add_flag("--generate", hk.generate, "Make a new random key; print it and its hash");

  cli::InitArgs in;
  auto* init = app.add_subcommand(
      "init", "Set pilotfish up: repository, store, model provider, HTTP key, chat platform");
  init->add_option("--config", in.config, "Config file to write (merged into when it exists)");
  init->add_flag("--yes", in.yes, "Ask nothing: take the flags and the defaults");
  init->add_option("--repo", in.repo, "Repository: a folder or a git URL");
  init->add_option("--db", in.db, "Index store");
  init->add_option("--provider", in.provider, "openai, anthropic, ollama or none");
  init->add_option("--base-url", in.base_url, "The provider's base URL");
  init->add_option("--api-key-env", in.key_env, "The variable holding the provider's key");
  init->add_option("--model", in.model, "The chat model");
  init->add_option("--http-key", in.http_key, "yes or no: protect the HTTP API with a key");
  init->add_option("--platform", in.platform, "mattermost, slack or none");
  init->add_option("--chat-url", in.chat_url, "The chat server's URL");
  init->add_option("--bot-token-env", in.token_env, "The variable holding the bot's token");
  init->add_option("--app-token-env", in.app_token_env, "Slack: the variable holding the app token");
  init->add_option("--channels", in.channels, "Channel names, comma-separated");
  init->add_option("--users", in.users, "Who may talk to the bot, comma-separated, or *");
  init->add_option("--trigger", in.trigger, "mention or all: what the bot answers in channels");

  cli::ConfigArgs ca;
  auto* config =
      app.add_subcommand("config", "Check and show the configuration (providers, models)");
  config->add_option("--config", ca.config,
                     "Config file (default: $PILOTFISH_CONFIG, ./pilotfish.json, "
                     "~/.config/pilotfish/config.json, /etc/pilotfish/config.json)");
  config->add_flag("--check", ca.check,
                   "Ask each provider for its models and report configured ones it does not offer "
                   "(exit 1 if any, or if a provider cannot be reached)");
  config->add_flag("--json", ca.json, "Print as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pilotfish: %s (see `pilotfish --help`)\n", e.what());
    return 2;
  }

  try {
    if (!log_level.empty()) {
      log::Level level;
      if (!log::parse_level(log_level, &level))
        throw UsageError("--log-level must be debug, info, warn, error or off, not '" + log_level +
                         "'");
      log::set_level(level);
      cli::keep_log_level();
    }
    if (index->parsed()) return cli::run_index(ia);
    if (search->parsed()) {
      for (const auto& w : words) sa.query += (sa.query.empty() ? "" : " ") + w;
      return cli::run_search(sa);
    }
    if (stats->parsed()) return cli::run_stats(st);
    if (migrate->parsed()) return cli::run_migrate(mg);
    if (config->parsed()) return cli::run_config(ca);
    if (init->parsed()) return cli::run_init(in);
    if (serve->parsed()) return cli::run_serve(sv);
    if (hash_key->parsed()) return cli::run_hash_key(hk);
    if (bridge->parsed()) {
      br.check = bridge_check->parsed();
      return cli::run_bridge(br);
    }
    if (models->parsed()) return cli::run_models(ma);
    if (explain->parsed()) return cli::run_policy_explain(pa);
    if (audit->parsed()) return cli::run_audit(au);
    if (install_service->parsed()) return cli::run_install_service(svc);
    if (uninstall_service->parsed()) return cli::run_uninstall_service(svc);
    if (mcp->parsed()) return cli::run_mcp(mc);
    if (ask->parsed()) {
      for (const auto& w : ask_words) aa.question += (aa.question.empty() ? "" : " ") + w;
      if (aa.question.empty() && aa.implement.empty())
        throw UsageError("ask: a question is required");
      return cli::run_ask(aa);
    }
  } catch (const BusyError& e) {
    std::fprintf(stderr, "pilotfish: %s\n", e.what());
    return 3;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "pilotfish: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pilotfish: %s\n", e.what());
    return 1;
  }
  return 2;
}
