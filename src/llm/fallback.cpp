// Fallback over a chain of chat models (see fallback.h).
#include "llm/fallback.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "core/log.h"
#include "net/run_sync.h"

namespace pf {
namespace {

// Dots and dashes both separate versions in the wild (claude-sonnet-4-6, claude-sonnet-4.6).
std::string normalise(std::string id) {
  std::transform(id.begin(), id.end(), id.begin(), [](char c) {
    return c == '.' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return id;
}

// Known successors and siblings, in the order worth trying (normalised ids).
const std::map<std::string, std::vector<std::string>>& static_chains() {
  static const std::map<std::string, std::vector<std::string>> chains = {
      {"claude-opus-4-6", {"claude-opus-4-5", "claude-sonnet-4-6", "claude-sonnet-4-5"}},
      {"claude-opus-4-5", {"claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-4-5"}},
      {"claude-sonnet-4-6", {"claude-sonnet-4-5", "claude-haiku-4-5"}},
      {"claude-sonnet-4-5", {"claude-sonnet-4-6", "claude-haiku-4-5"}},
      {"claude-haiku-4-5", {"claude-sonnet-4-5", "claude-sonnet-4-6"}},
      {"gpt-5-4", {"gpt-5-2", "gpt-5-1"}},
      {"gpt-5-2", {"gpt-5-1", "gpt-5-4"}},
      {"gpt-5-1", {"gpt-5-2", "gpt-5-4"}},
      {"gpt-5-mini", {"gpt-5-1", "gpt-5-2"}},
      {"gpt-5-3-codex", {"gpt-5-2-codex", "gpt-5-1-codex-max"}},
      {"gpt-5-2-codex", {"gpt-5-3-codex", "gpt-5-1-codex-max"}},
      {"gpt-5-1-codex-max", {"gpt-5-3-codex", "gpt-5-2-codex"}},
      {"gpt-4-1", {"gpt-5-mini", "gpt-5-1"}},
      {"o3", {"o4-mini", "gpt-5-4"}},
      {"o4-mini", {"o3", "gpt-5-mini"}},
  };
  return chains;
}

// A model's family: claude-<family>-..., gemini-<version>-<family>, gpt, gpt-codex (a family of
// its own: a coding model does not stand in for a chat one, nor the reverse), o<n>; empty if
// unknown.
std::string family(const std::string& id) {
  std::string n = normalise(id);
  if (n.rfind("claude-", 0) == 0) {
    size_t dash = n.find('-', 7);
    return n.substr(0, dash);
  }
  if (n.rfind("gemini-", 0) == 0) {
    size_t last = n.rfind('-');
    return "gemini-" + n.substr(last + 1);
  }
  if (n.rfind("gpt-", 0) == 0) return n.find("-codex") != std::string::npos ? "gpt-codex" : "gpt";
  if (n.size() >= 2 && n[0] == 'o' && std::isdigit(static_cast<unsigned char>(n[1]))) return "o";
  return {};
}

// An id's version, for "newest first" (4-6 > 4-5 > 3-7): the leading digits of its first part
// that starts with one (o3: 3; gpt-4o: 4), then each following part that is all digits. What
// comes after is a variant (-1m, -mini, -codex-max), so a base model and its variants share a
// version and the shorter id, the base, goes first.
std::vector<int> version(const std::string& id) {
  std::vector<int> out;
  auto digits = [](std::string_view part) {
    size_t n = 0;
    while (n < part.size() && std::isdigit(static_cast<unsigned char>(part[n]))) ++n;
    return n;
  };
  std::string_view rest = id;
  while (!rest.empty()) {
    size_t dash = rest.find('-');
    std::string_view part = rest.substr(0, dash);
    rest = dash == std::string_view::npos ? std::string_view() : rest.substr(dash + 1);
    if (out.empty()) {
      if (part.size() > 1 && part[0] == 'o' && digits(part.substr(1)) == part.size() - 1)
        part.remove_prefix(1);  // o3, o4
      const size_t n = digits(part);
      if (n == 0) continue;
      out.push_back(std::stoi(std::string(part.substr(0, std::min<size_t>(n, 9)))));
      if (n != part.size()) break;  // 4o: digits, then a variant
      continue;
    }
    const size_t n = digits(part);
    if (n == 0 || n != part.size()) break;  // -mini, -1m, -codex: a variant
    out.push_back(std::stoi(std::string(part.substr(0, std::min<size_t>(n, 9)))));
  }
  return out;
}

// The wait before a busy chain is tried again, ended early by cancel. A coroutine of its own: its
// timer would otherwise sit in the frame of every open stream.
boost::asio::awaitable<void> wait_before_retry(int wait_ms, CancelSignal* cancel) {
  log::warn("llm", "every model of the chain is busy; trying again in " + std::to_string(wait_ms) +
                       " ms");
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  timer.expires_after(std::chrono::milliseconds(wait_ms));
  CancelRegistration on_cancel(cancel, [&timer] { timer.cancel(); });
  boost::system::error_code ec;
  co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
}

}  // namespace

std::vector<std::string> fallback_chain(const Config& config, const std::string& first) {
  std::vector<std::string> chain;
  std::set<std::string> seen;
  auto add = [&](const std::string& id) {
    if (!id.empty() && seen.insert(id).second) chain.push_back(id);
  };
  add(first);
  // A configured fallback the provider does not list (after narrow_to_offered_models, what it
  // offers) is dropped: it could only fail.
  for (const auto& f : config.defaults.fallback_models) {
    auto fp = split_model_id(f);
    const ProviderConfig* p = fp ? config.provider(fp->first) : nullptr;
    if (p && std::any_of(p->models.begin(), p->models.end(),
                         [&](const auto& m) { return m.id == fp->second; }))
      add(f);
    else
      log::warn("llm", "fallback model " + f + " is not among its provider's models; skipped");
  }
  auto parts = split_model_id(first);
  const ProviderConfig* provider = parts ? config.provider(parts->first) : nullptr;
  if (!provider) return chain;
  std::string name = provider->name + ":";
  std::map<std::string, std::string> configured;  // normalised -> as configured
  for (const auto& m : provider->models) configured.emplace(normalise(m.id), m.id);
  if (auto it = static_chains().find(normalise(parts->second)); it != static_chains().end())
    for (const auto& next : it->second)
      if (auto c = configured.find(next); c != configured.end()) add(name + c->second);
  std::string fam = family(parts->second);
  if (fam.empty()) return chain;
  std::vector<std::string> same;
  for (const auto& m : provider->models)
    if (family(m.id) == fam) same.push_back(m.id);
  // Newest first; a base model before its variants (claude-sonnet-4-5 before -4-5-1m).
  std::stable_sort(same.begin(), same.end(), [](const std::string& a, const std::string& b) {
    auto va = version(normalise(a)), vb = version(normalise(b));
    if (va != vb) return va > vb;
    return a.size() < b.size();
  });
  for (const auto& id : same) add(name + id);
  return chain;
}

boost::asio::awaitable<FallbackResult> async_stream_with_fallback(
    const Config& config, const std::vector<std::string>& chain, const ChatRequest& request,
    const std::function<bool(const ChatEvent&)>& on_event, const ChatOptions& options) {
  FallbackResult result;
  std::string last_error = "no chat model is configured";
  for (int round = 0; round <= std::max(0, options.chain_retries); ++round) {
    std::set<std::string> tried;
    bool any_unavailable = false;
    int retry_after_ms = -1;
    for (const std::string& id : chain) {
      if (id.empty() || !tried.insert(id).second) continue;
      std::unique_ptr<ChatModel> model;
      try {
        model = make_chat_model(config, id, options);
      } catch (const ConfigError& e) {
        if (round == 0) result.skipped.push_back(id + ": " + e.what());
        last_error = e.what();
        continue;
      }
      std::string unavailable;
      if (request.prepare) co_await request.prepare();
      try {
        co_await model->async_stream(request, on_event);
      } catch (const ModelUnavailableError& e) {
        unavailable = e.what();
        retry_after_ms = std::max(retry_after_ms, e.retry_after_ms());
      }
      if (unavailable.empty()) {
        result.model_id = id;
        co_return result;
      }
      log::warn("llm", unavailable + "; trying the next model");
      result.skipped.push_back(id + ": " + unavailable);
      last_error = unavailable;
      any_unavailable = true;
    }
    // Only capacity trouble is worth waiting out; a chain of unusable models is not.
    if (!any_unavailable || round == options.chain_retries ||
        (request.cancel && request.cancel->cancelled()))
      break;
    int wait_ms = retry_after_ms >= 0 ? retry_after_ms : options.retry_backoff_ms << round;
    co_await wait_before_retry(std::min(wait_ms, options.max_retry_wait_ms), request.cancel);
    if (request.cancel && request.cancel->cancelled()) break;
  }
  throw Error(last_error);
}

FallbackResult stream_with_fallback(const Config& config, const std::vector<std::string>& chain,
                                    const ChatRequest& request,
                                    const std::function<bool(const ChatEvent&)>& on_event,
                                    const ChatOptions& options) {
  return run_sync(async_stream_with_fallback(config, chain, request, on_event, options));
}

}  // namespace pf
