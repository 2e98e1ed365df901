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
      {"gpt-4-1", {"gpt-5-mini", "gpt-5-1"}},
      {"o3", {"o4-mini", "gpt-5-4"}},
      {"o4-mini", {"o3", "gpt-5-mini"}},
  };
  return chains;
}

// A model's family: claude-<family>-..., gemini-<version>-<family>, gpt, o<n>; empty if unknown.
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
  if (n.rfind("gpt-", 0) == 0) return "gpt";
  if (n.size() >= 2 && n[0] == 'o' && std::isdigit(static_cast<unsigned char>(n[1]))) return "o";
  return {};
}

// The numbers in an id, for "newest first" (4-6 > 4-5 > 3-7).
std::vector<int> version(const std::string& id) {
  std::vector<int> out;
  for (size_t i = 0; i < id.size();) {
    if (std::isdigit(static_cast<unsigned char>(id[i]))) {
      size_t j = i;
      while (j < id.size() && std::isdigit(static_cast<unsigned char>(id[j]))) ++j;
      out.push_back(std::stoi(id.substr(i, std::min<size_t>(j - i, 9))));
      i = j;
    } else {
      ++i;
    }
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
  for (const auto& f : config.defaults.fallback_models) add(f);
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
  // Newest first; a base model before its variants (gpt-5.1 before gpt-5.1-codex).
  std::stable_sort(same.begin(), same.end(), [](const std::string& a, const std::string& b) {
    auto va = version(a), vb = version(b);
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
