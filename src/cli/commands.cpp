// index, search and stats: open the store, call into the index and search components, print.
// A live progress bar is drawn on stderr only when it is a terminal; pipes get a plain report.
#include "cli/commands.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "core/config.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/text.h"
#include "index/git_source.h"
#include "index/indexer.h"
#include "llm/chat.h"
#include "llm/model_registry.h"
#include "search/embed_chunks.h"
#include "search/hybrid.h"
#include "search/retrieval_config.h"
#include "search/result_json.h"
#include "search/sharded.h"
#include "store/migrate.h"
#include "store/store.h"

namespace pf::cli {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void draw_progress(const IndexProgress& p) {
  double rate = p.seconds > 0 ? static_cast<double>(p.files_done) / p.seconds : 0;
  double frac = p.files_total > 0
                    ? static_cast<double>(p.files_done) / static_cast<double>(p.files_total)
                    : 1;
  int width = 24, filled = static_cast<int>(frac * width);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(static_cast<size_t>(width), '.');
  double eta = rate > 0 ? static_cast<double>(p.files_total - p.files_done) / rate : 0;
  std::fprintf(stderr, "\r\033[K[%s] %lld/%lld files  %s files/s  %lld chunks  %s MB  ETA %s s",
               bar.c_str(), static_cast<long long>(p.files_done),
               static_cast<long long>(p.files_total), fmt("%.0f", rate).c_str(),
               static_cast<long long>(p.chunks),
               fmt("%.1f", static_cast<double>(p.bytes) / 1e6).c_str(), fmt("%.0f", eta).c_str());
  std::fflush(stderr);
}

}  // namespace

std::unique_ptr<Embedder> retrieval_mode(const Config& config, std::string mode,
                                         HybridOptions* options) {
  if (mode.empty()) mode = config.defaults.embedding_model.empty() ? "lexical" : "hybrid";
  options->mode = mode == "vector"   ? SearchMode::kVector
                  : mode == "hybrid" ? SearchMode::kHybrid
                                     : SearchMode::kLexical;
  if (options->mode == SearchMode::kLexical) return nullptr;
  if (config.defaults.embedding_model.empty())
    throw UsageError("--mode " + mode +
                     " needs an embedding model: set defaults.embeddingModel in the config");
  return make_embedder(config, config.defaults.embedding_model);
}

namespace {
bool g_level_from_flag = false;
}  // namespace

void keep_log_level() {
  g_level_from_flag = true;
}

void apply_logging(const Config& config) {
  const LoggingConfig& l = config.logging;
  log::Level level;
  if (!g_level_from_flag && log::parse_level(l.level, &level)) log::set_level(level);
  if (l.file.empty() && !l.json) return;
  log::Sink sink;
  sink.file = l.file;
  sink.max_bytes = l.max_size_mb << 20;
  sink.max_files = static_cast<int>(l.max_files);
  sink.json = l.json;
  log::set_sink(sink);
}

std::string resolve_db(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("PILOTFISH_DB"); env && *env) return env;
  return default_data_dir() + "/index.db";
}

int run_migrate(const MigrateArgs& args) {
  if (args.from == args.to) throw UsageError("migrate: the two stores are the same");
  auto from = open_store(args.from, OpenMode::kReadOnly);
  auto to = open_store(args.to, OpenMode::kReadWrite);
  auto t0 = std::chrono::steady_clock::now();
  bool tty = !args.json && ::isatty(STDERR_FILENO);
  MigrateReport r = migrate_store(*from, *to, [&](int64_t done, int64_t total) {
    if (tty && (done % 50 == 0 || done == total))
      std::fprintf(stderr, "\r%lld / %lld files", static_cast<long long>(done), static_cast<long long>(total));
  });
  if (tty) std::fprintf(stderr, "\n");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (args.json) {
    nlohmann::json j = {{"from", from->path()}, {"to", to->path()}, {"repositories", r.repositories},
                        {"files", r.files}, {"chunks", r.chunks}, {"embeddings", r.embeddings},
                        {"seconds", seconds}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("copied %s into %s in %.2f s: %lld repositories, %lld files, %lld chunks, %lld "
                "embeddings\n",
                from->path().c_str(), to->path().c_str(), seconds,
                static_cast<long long>(r.repositories), static_cast<long long>(r.files),
                static_cast<long long>(r.chunks), static_cast<long long>(r.embeddings));
  }
  return 0;
}

int run_index(const IndexArgs& args) {
  std::string db = resolve_db(args.db);
  auto store = open_store(db, OpenMode::kReadWrite);
  Config config = load_config(args.config);  // read first: a broken config fails before work
  apply_logging(config);
  IndexOptions opt;
  opt.root = args.dir;
  std::optional<GitSync> git;
  if (is_git_url(args.dir)) {
    GitSource source = parse_git_source(args.dir, args.branch);
    git = sync_checkout(source, clone_folder(source, git_config(config).clone_dir), git_config(config));
    opt.root = git->dir;
    if (!git->warning.empty()) log::warn("git", git->dir + ": " + git->warning);
  } else if (!args.branch.empty()) {
    throw UsageError("--branch is for a git URL; " + args.dir + " is a folder");
  }
  opt.walk.include_tests = args.include_tests;
  opt.walk.max_file_bytes = args.max_file_bytes;
  opt.threads = args.threads;
  if (args.max_lines > 0) opt.limits.max_lines = args.max_lines;
  if (args.max_chars > 0) opt.limits.max_chars = args.max_chars;
  opt.compress = args.compress == "always"  ? ContentCompression::kAlways
                 : args.compress == "never" ? ContentCompression::kNever
                                            : ContentCompression::kAuto;
  bool tty = !args.quiet && !args.json && ::isatty(STDERR_FILENO);
  ProgressCallback progress;
  if (tty) progress = draw_progress;
  IndexReport r = index_repository(*store, opt, progress);
  if (tty) std::fprintf(stderr, "\n");
  EmbedOutcome embedding;
  if (!args.no_embed) embedding = embed_new_chunks(*store, config);
  int64_t embedded = embedding.embedded;
  const std::string& embed_error = embedding.error;
  if (args.quiet) return 0;
  double mb = static_cast<double>(r.bytes_indexed) / 1e6;
  if (args.json) {
    nlohmann::json skipped = nlohmann::json::object();
    for (size_t i = 1; i < r.skipped.size(); ++i)
      if (r.skipped[i]) skipped[skip_reason_name(static_cast<SkipReason>(i))] = r.skipped[i];
    nlohmann::json j = {{"root", r.root},
                        {"db", db},
                        {"filesSeen", r.files_seen},
                        {"indexed", r.indexed},
                        {"unchanged", r.unchanged},
                        {"removed", r.removed},
                        {"chunks", r.chunks_written},
                        {"fallbacks", r.fallbacks},
                        {"bytes", r.bytes_indexed},
                        {"seconds", r.seconds},
                        {"embedded", embedded},
                        {"embeddedSplit", embedding.split},
                        {"embeddingFailed", embedding.failed},
                        {"embeddingModel", string_or_null(config.defaults.embedding_model)},
                        {"embeddingError", string_or_null(embed_error)},
                        {"skipped", skipped},
                        {"commit", string_or_null(r.commit)}};
    if (git)
      j["git"] = {{"dir", git->dir}, {"cloned", git->cloned}, {"before", string_or_null(git->before)},
                  {"warning", string_or_null(git->warning)}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::ostringstream out;
  if (git && git->cloned) out << "cloned " << args.dir << " into " << git->dir << "\n";
  if (git && !git->cloned && git->warning.empty())
    out << (git->before == git->commit ? "fetched " + args.dir + ": no new commits\n"
                                       : "fetched " + args.dir + ": " + git->before.substr(0, 12) +
                                             " -> " + git->commit.substr(0, 12) + "\n");
  if (git && !git->warning.empty()) out << "  not updated: " << git->warning << "\n";
  out << "indexed " << r.root << " into " << db << " in " << fmt("%.2f", r.seconds) << " s\n";
  out << "  files:   " << r.files_seen << " seen, " << r.indexed << " indexed, " << r.unchanged
      << " unchanged, " << r.removed << " removed";
  if (r.fallbacks)
    out << ", " << r.fallbacks << " in line windows (their parse gave up; see `pilotfish stats`)";
  out << "\n";
  if (!r.commit.empty()) out << "  commit:  " << r.commit << "\n";
  out << "  chunks:  " << r.chunks_written << " written (" << fmt("%.1f", mb) << " MB, "
      << fmt("%.1f", r.seconds > 0 ? mb / r.seconds : 0) << " MB/s)\n";
  out << "  skipped: " << r.total_skipped();
  std::string sep = " (";
  for (size_t i = 1; i < r.skipped.size(); ++i) {
    if (!r.skipped[i]) continue;
    out << sep << skip_reason_name(static_cast<SkipReason>(i)) << " " << r.skipped[i];
    sep = ", ";
  }
  out << (sep == ", " ? ")" : "") << "\n";
  if (!config.defaults.embedding_model.empty() && !args.no_embed)
    out << "  embedded: " << embedded << " chunks with " << config.defaults.embedding_model
        << (embedding.split ? " (" + std::to_string(embedding.split) + " in several pieces)" : "")
        << (embedding.failed
                ? ", " + std::to_string(embedding.failed) + " refused (see `pilotfish stats`)"
                : "")
        << (embed_error.empty() ? "" : " (stopped early: " + embed_error + "; the next run continues)")
        << "\n";
  std::fputs(out.str().c_str(), stdout);
  return 0;
}

namespace {

void print_results(const std::vector<SearchResult>& results, const SearchArgs& args) {
  if (args.json) {
    std::printf("%s\n", search_results_json(results).dump().c_str());
    return;
  }
  if (results.empty()) {
    std::printf("no results for \"%s\"\n", args.query.c_str());
    return;
  }
  int rank = 0;
  for (const auto& r : results) {
    const Chunk& c = r.hit.chunk;
    std::string label = c.chunk_type;
    std::string name = !c.class_name.empty() && !c.function_name.empty()
                           ? c.class_name + "." + c.function_name
                       : !c.symbol.empty() ? c.symbol
                                           : c.heading_path;
    std::printf("%2d. %s:%d-%d  %s%s%s  (%.2f)\n", ++rank, c.path.c_str(), c.start_line, c.end_line,
                label.c_str(), name.empty() ? "" : " ", name.c_str(), r.hit.score);
    // Three lines of context.
    std::istringstream lines(c.content);
    std::string line;
    for (int i = 0; i < 3 && std::getline(lines, line); ++i) {
      if (line.size() > 120) line = line.substr(0, 117) + "...";
      std::printf("      %s\n", line.c_str());
    }
  }
}

// --db and each --shard, ranked as one corpus (search/sharded.h).
int run_sharded_search(const SearchArgs& args, const SearchOptions& opt) {
  if (!args.repo.empty()) throw UsageError("--repo cannot be used with --shard");
  if (!args.mode.empty() && args.mode != "lexical")
    throw UsageError("--shard searches lexically only; drop --mode " + args.mode);
  std::vector<std::unique_ptr<Store>> stores;
  stores.push_back(open_store(resolve_db(args.db), OpenMode::kReadOnly));
  for (const std::string& shard : args.shards) stores.push_back(open_store(shard, OpenMode::kReadOnly));
  std::vector<Store*> shards;
  for (auto& s : stores) shards.push_back(s.get());
  std::vector<SearchResult> results;
  for (ShardedResult& r : sharded_lexical_search(shards, args.query, opt))
    results.push_back(std::move(r.result));
  print_results(results, args);
  return 0;
}

}  // namespace

int run_search(const SearchArgs& args) {
  SearchOptions opt;
  opt.limit = args.limit;
  opt.per_file_cap = args.per_file;
  if (args.match_budget >= 0) opt.match_budget = args.match_budget;
  if (args.weights.size() == 4) {
    opt.weights.w_symbols = args.weights[0];
    opt.weights.w_path = args.weights[1];
    opt.weights.w_headings = args.weights[2];
    opt.weights.w_body = args.weights[3];
  }
  if (!args.shards.empty()) return run_sharded_search(args, opt);
  auto store = open_store(resolve_db(args.db), OpenMode::kReadOnly);
  if (!args.repo.empty()) {
    std::error_code ec;
    std::string root = std::filesystem::weakly_canonical(args.repo, ec).string();
    auto repo = store->find_repository(ec ? args.repo : root);
    if (!repo)
      throw UsageError("no repository indexed at " + args.repo +
                       " in this store; see `pilotfish stats`");
    opt.repo_id = repo->id;
  }
  Config config = load_config(args.config);
  HybridOptions hopt;
  hopt.base = opt;
  apply_retrieval(retrieval_config(config), hopt);
  if (!args.fusion.empty())
    hopt.fusion = args.fusion == "weighted" ? FusionMode::kWeighted : FusionMode::kRrf;
  std::unique_ptr<Embedder> embedder = retrieval_mode(config, args.mode, &hopt);
  print_results(hybrid_search(*store, args.query, hopt, embedder.get()), args);
  return 0;
}

int run_stats(const StatsArgs& args) {
  std::string db = resolve_db(args.db);
  auto store = open_store(db, OpenMode::kReadOnly);
  StoreStats s = store->stats();
  // Per embedding model: the store's models, and the configured one even before its first run.
  std::set<std::string> models;
  for (const auto& [m, n] : s.embeddings_by_model) models.insert(m);
  for (const auto& [m, n] : s.embedding_failures_by_model) models.insert(m);
  if (std::string m = load_config(args.config).defaults.embedding_model; !m.empty())
    models.insert(m);
  nlohmann::json embeddings = nlohmann::json::array();
  for (const std::string& m : models) {
    auto count = [&](const std::map<std::string, int64_t>& by) {
      auto it = by.find(m);
      return it == by.end() ? int64_t{0} : it->second;
    };
    int64_t embedded = count(s.embeddings_by_model), failed = count(s.embedding_failures_by_model);
    embeddings.push_back({{"model", m},
                          {"embedded", embedded},
                          {"pending", std::max<int64_t>(0, s.chunks - embedded - failed)},
                          {"failed", failed}});
  }
  if (args.json) {
    nlohmann::json repos = nlohmann::json::array();
    for (const auto& r : s.repositories)
      repos.push_back({{"root", r.root},
                       {"files", r.files},
                       {"chunks", r.chunks},
                       {"bytes", r.bytes},
                       {"lastIndexedAt", string_or_null(r.last_indexed_at)},
                       {"commit", string_or_null(r.commit)}});
    nlohmann::json j = {{"db", db},
                        {"schemaVersion", s.schema_version},
                        {"dbBytes", s.db_bytes},
                        {"files", s.files},
                        {"chunks", s.chunks},
                        {"chunksByType", s.chunks_by_type},
                        {"chunksByLanguage", s.chunks_by_language},
                        {"embeddingsByModel", s.embeddings_by_model},
                        {"embeddings", embeddings},
                        {"fallbacks", s.fallbacks_by_reason},
                        {"compressedChunks", s.compressed_chunks},
                        {"compressedBytes", s.compressed_bytes},
                        {"repositories", repos}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("store %s (schema %d, %.1f MB)\n", db.c_str(), s.schema_version,
              static_cast<double>(s.db_bytes) / 1e6);
  std::printf("  %lld files, %lld chunks\n", static_cast<long long>(s.files),
              static_cast<long long>(s.chunks));
  for (const auto& [type, n] : s.chunks_by_type)
    std::printf("    %-9s %lld\n", type.c_str(), static_cast<long long>(n));
  if (s.compressed_chunks > 0)
    std::printf("  %lld chunks kept compressed, in %.1f MB\n",
                static_cast<long long>(s.compressed_chunks),
                static_cast<double>(s.compressed_bytes) / 1e6);
  int64_t fallbacks = 0;
  for (const auto& [why, n] : s.fallbacks_by_reason) fallbacks += n;
  std::printf("  %lld files in line windows instead of by syntax (tried again by the next run)\n",
              static_cast<long long>(fallbacks));
  for (const auto& [why, n] : s.fallbacks_by_reason)
    std::printf("    %s: %lld\n", why.c_str(), static_cast<long long>(n));
  for (const auto& e : embeddings)
    std::printf("  %s: %lld embedded, %lld pending, %lld failed\n",
                e["model"].get<std::string>().c_str(), e["embedded"].get<long long>(),
                e["pending"].get<long long>(), e["failed"].get<long long>());
  for (const auto& r : s.repositories)
    std::printf("  repository %s: %lld files, %lld chunks, last indexed %s%s\n", r.root.c_str(),
                static_cast<long long>(r.files), static_cast<long long>(r.chunks),
                r.last_indexed_at.empty() ? "never" : r.last_indexed_at.c_str(),
                r.commit.empty() ? "" : (" at commit " + r.commit.substr(0, 12)).c_str());
  return 0;
}

// Asks every provider for its model list; prints what is configured but not offered. Returns
// the number of problems.
int check_providers(const Config& c) {
  int problems = 0;
  for (const auto& p : c.providers) {
    std::vector<std::string> offered;
    try {
      offered = list_provider_models(p);
    } catch (const Error& e) {
      std::printf("provider %s: cannot list models: %s\n", p.name.c_str(), e.what());
      ++problems;
      continue;
    }
    std::string missing;
    for (const auto& m : p.models)
      if (std::find(offered.begin(), offered.end(), m.id) == offered.end()) missing += " " + m.id;
    if (missing.empty()) {
      std::printf("provider %s: ok, offers %zu models, all configured ones among them\n",
                  p.name.c_str(), offered.size());
    } else {
      std::printf("provider %s: configured but not offered:%s\n", p.name.c_str(), missing.c_str());
      ++problems;
    }
  }
  return problems;
}

int run_config(const ConfigArgs& args) {
  Config c = load_config(args.config);
  if (args.check) return check_providers(c) == 0 ? 0 : 1;
  if (args.json) {
    nlohmann::json providers = nlohmann::json::array();
    for (const auto& p : c.providers) {
      nlohmann::json models = nlohmann::json::array();
      for (const auto& m : p.models) models.push_back(p.name + ":" + m.id);
      providers.push_back({{"name", p.name},
                           {"type", p.type},
                           {"baseUrl", p.base_url},
                           {"apiKeyEnv", string_or_null(p.api_key_env)},
                           {"bearerTokenEnv", string_or_null(p.bearer_token_env)},
                           {"models", models}});
    }
    nlohmann::json j = {{"source", string_or_null(c.source)},
                        {"providers", providers},
                        {"chatModel", string_or_null(c.defaults.chat_model)},
                        {"fallbackModels", c.defaults.fallback_models},
                        {"embeddingModel", string_or_null(c.defaults.embedding_model)}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("config: %s\n",
              c.source.empty() ? "none found (built-in default: no models)" : c.source.c_str());
  for (const auto& p : c.providers) {
    std::string auth = !p.api_key_env.empty()        ? "key in $" + p.api_key_env
                       : !p.bearer_token_env.empty() ? "token in $" + p.bearer_token_env
                                                     : "no credentials";
    std::printf("provider %s (%s) %s, %s\n", p.name.c_str(), p.type.c_str(), p.base_url.c_str(),
                auth.c_str());
    for (const auto& m : p.models) std::printf("  %s:%s\n", p.name.c_str(), m.id.c_str());
  }
  std::printf("chat model: %s\n", c.defaults.chat_model.empty() ? "none (retrieval-only answers)"
                                                                : c.defaults.chat_model.c_str());
  std::printf("embedding model: %s\n", c.defaults.embedding_model.empty()
                                           ? "none (lexical search)"
                                           : c.defaults.embedding_model.c_str());
  return 0;
}

}  // namespace pf::cli
