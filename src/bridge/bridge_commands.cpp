// Slash commands (spec §3) and the bridge's life cycle: shutdown and configuration reload.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <chrono>

#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/text.h"
#include "llm/model_registry.h"
#include "runtime/worker_pool.h"

namespace pf {

namespace asio = boost::asio;

namespace {

std::string age(int64_t ms) {
  int64_t s = (unix_time_ms() - ms) / 1000;
  if (s < 120) return std::to_string(s) + " s ago";
  if (s < 7200) return std::to_string(s / 60) + " min ago";
  if (s < 172800) return std::to_string(s / 3600) + " h ago";
  return std::to_string(s / 86400) + " days ago";
}

std::optional<bool> loose_bool(const std::string& given) {
  std::string s = ascii_lower(given);
  if (s == "on" || s == "true" || s == "yes" || s == "1" || s == "enable" || s == "enabled")
    return true;
  if (s == "off" || s == "false" || s == "no" || s == "0" || s == "disable" || s == "disabled")
    return false;
  return std::nullopt;
}

// /reasoning [low|medium|high|xhigh|off] for a channel whose model is model: the reply.
std::string reasoning_reply(StateStore& state, const Config& config, const std::string& key,
                            const std::string& model, const std::string& args) {
  std::string a = ascii_lower(trim_space(args));
  ChannelPrefs prefs = state.prefs(key);
  std::string levels;
  for (const std::string& l : reasoning_levels()) levels += (levels.empty() ? "" : ", ") + l;
  bool reasons = model_reasons(config, model);
  if (a.empty())
    return "Reasoning effort: " +
           (prefs.reasoning_effort.empty() ? std::string("the provider's default")
                                           : "`" + prefs.reasoning_effort + "`") +
           " (`" + model + "` " + (reasons ? "reasons" : "does not reason") + "). Levels: " +
           levels + "; `/reasoning off` for the default.";
  if (a == "off" || a == "default") {
    prefs.reasoning_effort.clear();
    state.set_prefs(key, prefs);
    return "Reasoning effort: the provider's default, from the next request.";
  }
  const auto& known = reasoning_levels();
  if (std::find(known.begin(), known.end(), a) == known.end())
    return "\u274C Unknown level `" + a + "`. The levels: " + levels + ", or off.";
  if (!reasons)
    return "\u274C `" + model + "` does not reason, so it takes no effort level (if it does, set "
           "\"reasoning\": true on it under providers). The levels, for a model that reasons: " +
           levels + ".";
  prefs.reasoning_effort = a;
  state.set_prefs(key, prefs);
  return "\U0001F9E0 Reasoning effort `" + a + "` from the next request.";
}

}  // namespace

void Bridge::add_commands() {
  using W = WhenBusy;
  auto add = [this](CommandSpec spec,
                    asio::awaitable<void> (Bridge::*f)(Channel&, const CommandCall&)) {
    commands_.add(std::move(spec), [this, f](CommandContext& x, const CommandCall& c) {
      return (this->*f)(x.channel, c);
    });
  };
  // The permission and schedule commands run without waiting on anything.
  auto add_now = [this](CommandSpec spec,
                        void (Bridge::*f)(Channel&, const InboundMessage&, const CommandCall&)) {
    commands_.add(std::move(spec),
                  [this, f](CommandContext& x, const CommandCall& c) -> asio::awaitable<void> {
                    (this->*f)(x.channel, x.message, c);
                    co_return;
                  });
  };
  // One entry per command, in the order /help lists them.
  // clang-format off
  // Where each thread is a conversation (conversationScope "thread"), the conversation commands
  // act on the thread they are posted in; the settings (/model, /verbose, ...) stay per channel.
  add({{"new"}, "",
       "cancel the answer and start a new conversation (this thread's, where each thread is one)",
       W::kAtOnce, true},
      &Bridge::new_command);
  add({{"stop", "cancel"}, "",
       "stop the answer being written (this thread's, where each thread is a conversation)",
       W::kAtOnce, true},
      &Bridge::stop_command);
  add({{"resume"}, "[id-prefix]",
       "list this channel's (or thread's) conversations, or switch to one", W::kWaits, true},
      &Bridge::resume_command);
  add({{"model"}, "[name]", "list the models, or switch (fuzzy: `sonnet`, `openai:mini`)",
       W::kAtOnceWithoutArgs, true},
      &Bridge::model_command);
  add({{"models"}, "", "list the models by provider", W::kAtOnce}, &Bridge::model_command);
  add({{"provider", "providers"}, "[test NAME|add|remove]",
       "list providers, check that one answers, or how to add or remove one"},
      &Bridge::provider_command);
  add({{"status"}, "", "conversation, model, repository, settings", W::kAtOnce, true},
      &Bridge::status_command);
  add({{"context"}, "", "how much of the model's context window the conversation uses",
       W::kAtOnce, true},
      &Bridge::status_command);
  add({{"config"}, "", "the effective settings and where each comes from", W::kAtOnce},
      &Bridge::config_command);
  add({{"project", "projects"}, "[list|remove [channel]]",
       "the channels added from chat (an admin bot removes one)", W::kAtOnce},
      &Bridge::project_command);
  add({{"verbose"}, "[on|off]", "show each tool call the model makes", W::kAtOnce},
      &Bridge::verbose_command);
  add({{"reload"}, "[config|mcp|skills]",
       "re-read the agents and skills, the config file, the MCP servers or the skills"},
      &Bridge::reload_command);
  commands_.add({{"reasoning"}, "[low|medium|high|xhigh|off]",
                 "how hard a reasoning model thinks, for this channel", W::kAtOnce},
                [this](CommandContext& x, const CommandCall& c) -> asio::awaitable<void> {
                  reply(x.channel, reasoning_reply(state_, config_, x.channel.key,
                                                   shape_of(x.channel).model, c.args));
                  co_return;
                });
  commands_.add({{"streamer-mode", "on-air"}, "[on|off]",
                 "hide preview and internal models' names in what the bridge posts (all channels)",
                 W::kAtOnce},
                [this](CommandContext& x, const CommandCall& c) -> asio::awaitable<void> {
                  reply(x.channel, streamer_.command(config_, c.args));
                  co_return;
                });
  add({{"plan"}, "[on|off|show|summary|clear]",
       "plan mode: only read and keep a plan; show, summarise or clear it", W::kAtOnce},
      &Bridge::plan_command);
  commands_.add({{"implement"}, "[yolo|interactive]",
                 "leave plan mode and carry the plan out (on autopilot unless interactive)"},
                [this](CommandContext& x, const CommandCall& c) {
                  return implement_command(x.channel, x.message, c);
                });
  add({{"autopilot", "auto"}, "[on|off]", "keep working until the task is done", W::kAtOnce},
      &Bridge::autopilot_command);
  add({{"agents"}, "", "the custom agents of this workspace", W::kAtOnce},
      &Bridge::agents_command);
  add({{"agent"}, "[name]", "select a custom agent for this channel; alone: none"},
      &Bridge::agents_command);
  add_now({{"approve"}, "", "approve the permission prompt (or reply yes)", W::kAtOnce},
      &Bridge::permission_command);
  add_now({{"deny"}, "", "deny the permission prompt (or reply no)", W::kAtOnce},
      &Bridge::permission_command);
  add_now({{"always"}, "approve|deny", "answer the prompt and remember it for this channel",
       W::kAtOnce},
      &Bridge::permission_command);
  add_now({{"rules", "rule"}, "[clear [spec]]",
           "list this channel's remembered permissions, or forget them; a waiting prompt keeps "
           "waiting",
           W::kAtOnce},
          &Bridge::permission_command);
  add_now({{"remember"}, "approve|deny|list|clear [spec]",
           "as `/always`; `list` and `clear` as `/rules`", W::kAtOnce},
          &Bridge::permission_command);
  add_now({{"yolo"}, "[on|off]", "autopilot: run tool calls without asking (hard denies stay)",
       W::kAtOnce},
      &Bridge::permission_command);
  add({{"mcp"}, "", "the MCP servers and their state", W::kAtOnce}, &Bridge::mcp_command);
  add({{"skills", "tools"}, "[enable|disable NAME…|all]",
       "the skills and tools offered here; turn skills on or off for this channel", W::kAtOnce},
      &Bridge::tools_command);
  add_now({{"schedule", "schedules", "tasks"},
           "[list|history [n]|cancel ID|pause ID|resume ID]", "scheduled prompts",
       W::kAtOnce},
      &Bridge::schedule_command);
  // clang-format on
  add({{"help"}, "[all]", "this list", W::kAtOnce}, &Bridge::help_command);
}

asio::awaitable<void> Bridge::run_command(Channel& channel, const InboundMessage& m,
                                          const CommandCall& call) {
  CommandContext context{channel, m};
  co_await commands_.run(context, call);
}

asio::awaitable<void> Bridge::stop_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  if (channel.cancel && thread_scoped(channel) && channel.thread_root != channel.turn_root) {
    reply(channel,
          "Nothing is running in this thread; the answer being written is in another "
          "one (post `/stop` there).");
  } else if (channel.cancel) {
    channel.cancel->cancel();
  } else {
    reply(channel, "Nothing is running.");
  }
  co_return;
}

asio::awaitable<void> Bridge::new_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  // Where each thread is a conversation, only this thread's answer is cancelled.
  if (channel.cancel && (!thread_scoped(channel) || channel.thread_root == channel.turn_root))
    channel.cancel->cancel();
  channel.loops.reset();
  hooks_.fire(channel.config.working_directory, HookEvent::kSessionEnd, {{"reason", "new"}});
  std::string id = state_.create_conversation(conversation_key_at(channel, channel.thread_root));
  reply(channel, "\U0001F195 New conversation `" + id + "` started.");
  co_return;
}

asio::awaitable<void> Bridge::resume_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  std::string key = conversation_key_at(channel, channel.thread_root);
  std::string where = key == channel.key ? "channel" : "thread";
  std::vector<ConversationInfo> list = state_.conversations(key, 50);
  if (a.empty()) {
    std::string out = "**Conversations in this " + where + "** (newest first):\n";
    std::optional<std::string> active = state_.active_conversation(key);
    size_t n = 0;
    for (const auto& ci : list) {
      if (++n > 10) break;
      out += "- `" + ci.id + "` " + age(ci.updated_at_ms) + ", " + std::to_string(ci.messages) +
             " messages: " + (ci.first_line.empty() ? "(empty)" : ci.first_line.substr(0, 80)) +
             (active && *active == ci.id ? " **(current)**" : "") + "\n";
    }
    if (list.empty()) out = "No conversations in this " + where + " yet.";
    reply(channel, out + (list.empty() ? "" : "\nSwitch with `/resume <id prefix>`."));
    co_return;
  }
  std::string prefix = ascii_lower(a);
  std::vector<ConversationInfo> hits;
  for (const auto& ci : list)
    if (ascii_lower(ci.id).rfind(prefix, 0) == 0) hits.push_back(ci);
  if (hits.empty()) {
    reply(channel, "No conversation of this " + where + " starts with `" + a + "`.");
  } else if (hits.size() > 1) {
    std::string out = "`" + a + "` matches " + std::to_string(hits.size()) + " conversations:";
    for (const auto& h : hits) out += " `" + h.id + "`";
    reply(channel, out + ". Give more of the id.");
  } else {
    state_.set_active_conversation(key, hits[0].id);
    channel.loops.reset();
    reply(channel, "\u21A9\uFE0F Resumed conversation `" + hits[0].id + "` (" +
                       std::to_string(hits[0].messages) + " messages, last " +
                       age(hits[0].updated_at_ms) + ").");
  }
  co_return;
}

namespace {

// " · $3 / $15 per M tokens" (input / output) where the config gives prices.
std::string price_text(const ModelConfig& m) {
  if (!m.price_input && !m.price_output) return "";
  auto usd = [](std::optional<double> v) {
    if (!v) return std::string("?");
    char buf[32];
    std::snprintf(buf, sizeof buf, "$%g", *v);
    return std::string(buf);
  };
  return " · " + usd(m.price_input) + " / " + usd(m.price_output) + " per M tokens";
}

}  // namespace

asio::awaitable<void> Bridge::model_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  std::vector<ModelRef> models = configured_models(config_);
  std::string current = model_of(channel);
  const ProviderConfig* only = a.empty() ? nullptr : config_.provider(a);  // any case
  if (a.empty() || c.name == "models" || only) {
    std::string out;
    for (const auto& p : config_.providers) {
      if (only && c.name == "model" && &p != only) continue;
      out += "**" + p.name + "** (" + p.type + ")\n";
      for (const auto& mc : p.models)
        out += "- `" + p.name + ":" + mc.id + "`" +
               (mc.context_window ? " · " + std::to_string(*mc.context_window) + " tokens" : "") +
               (model_reasons(config_, p.name + ":" + mc.id) ? " · \U0001F9E0 reasons" : "") +
               (model_sees_images(config_, p.name + ":" + mc.id) ? " · \U0001F441\uFE0F images" : "") +
               price_text(mc) +
               (p.name + ":" + mc.id == current ? " **(current)**" : "") + "\n";
    }
    if (out.empty()) out = "No chat models are configured: answers list the best places.";
    reply(channel, out);
    co_return;
  }
  ModelResolution r = resolve_model(models, a);
  if (!r.model) {
    reply(channel, "\u274C " + r.error);
    co_return;
  }
  ChannelPrefs prefs = state_.prefs(channel.key);
  prefs.model = r.model->id();
  state_.set_prefs(channel.key, prefs);
  std::string out = "Model set to `" + r.model->id() + "`.";
  if (!r.alternatives.empty()) {
    out += " Also matched:";
    for (const auto& alt : r.alternatives) out += " `" + alt.id() + "`";
  }
  reply(channel, out);
  co_return;
}

asio::awaitable<void> Bridge::provider_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  std::string verb = ascii_lower(a.substr(0, a.find(' ')));
  if (verb == "add" || verb == "remove") {
    // Providers hold credentials' names and addresses: they live in the config file, which the
    // chat cannot write.
    std::string where = config_.source.empty() ? std::string("the config file") : "`" + config_.source + "`";
    reply(channel,
          verb == "add"
              ? "Providers are added in " + where +
                    ", under \"providers\": `{\"NAME\": {\"type\": \"openai\" | "
                    "\"anthropic\" | \"local\", \"baseUrl\": \"https://…\", \"apiKeyEnv\": "
                    "\"VARIABLE_WITH_THE_KEY\", \"models\": [{\"id\": \"…\"}]}}` (the key "
                    "itself stays in the environment). Then `/reload config`, and `/provider "
                    "test NAME` to check it answers."
              : "Providers are removed from " + where +
                    " (its entry under \"providers\", and any model of it named in defaults or "
                    "channels); then `/reload config`.");
    co_return;
  }
  if (verb == "test") {
    std::string name = a.size() > 4 ? a.substr(a.find_first_not_of(' ', 4)) : "";
    const ProviderConfig* p = config_.provider(name);
    if (!p) {
      reply(channel, "\u274C No provider is called `" + name + "`.");
      co_return;
    }
    std::string out;
    ProviderConfig copy = *p;
    co_await offload(runtime_.pool(), [&] {
      try {
        std::vector<std::string> offered = list_provider_models(copy, 10000);
        std::string missing;
        for (const auto& mc : copy.models)
          if (std::find(offered.begin(), offered.end(), mc.id) == offered.end())
            missing += " `" + mc.id + "`";
        out = "\u2705 `" + copy.name + "` answers and offers " + std::to_string(offered.size()) +
              " models." + (missing.empty() ? "" : " Configured but not offered:" + missing);
      } catch (const std::exception& e) {
        out = "\u274C `" + copy.name + "`: " + e.what();
      }
    });
    reply(channel, out);
    co_return;
  }
  std::string out;
  for (const auto& p : config_.providers)
    out += "- **" + p.name + "** " + p.type +
           (p.type == "local" ? std::string(" (GGUF files in process)") : " at " + p.base_url) +
           ", " +
           (p.api_key_env.empty() && p.bearer_token_env.empty()
                ? "no key"
                : "key from $" + (p.api_key_env.empty() ? p.bearer_token_env : p.api_key_env)) +
           ", " + std::to_string(p.models.size()) + " models\n";
  reply(channel, out.empty() ? "No providers are configured." : out);
  co_return;
}

asio::awaitable<void> Bridge::status_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  std::optional<std::string> conv =
      state_.active_conversation(conversation_key_at(channel, channel.thread_root));
  int64_t tokens = 0;
  if (conv)
    for (const auto& s : state_.messages(*conv))
      if (!s.compacted) tokens += s.tokens + 4;
  TurnShape shape = shape_of(channel);
  const std::string& model = shape.model;
  int64_t window = context_window_of(model);
  std::string context = std::to_string(tokens) + " of " + std::to_string(window) + " tokens (" +
                        std::to_string(window ? tokens * 100 / window : 0) + "%), estimated";
  if (c.name == "context") {
    reply(channel, "Context: " + context);
    co_return;
  }
  reply(channel, "| | |\n|---|---|\n| conversation | `" + conv.value_or("(none yet)") +
                     "` |\n| model | `" + (model.empty() ? "retrieval-only" : model) +
                     "` |\n| mode | " +
                     (shape.plan ? "plan" : shape.autopilot ? "autopilot" : "interactive") +
                     " |\n| reasoning | " +
                     (shape.reasoning_effort.empty() ? std::string("default")
                                                     : shape.reasoning_effort) +
                     " |\n| agent | " + (shape.agent ? "`" + shape.agent->name + "`" : "none") +
                     " |\n| skills | " + std::to_string(shape.skills.size()) +
                     " |\n| repository | `" + channel.config.working_directory + "` |\n| bot | " +
                     channel.adapter->bot() + " |\n| verbose | " +
                     (verbose_of(channel) ? "on" : "off") + " |\n| busy | " +
                     (channel.busy ? "answering" : "idle") + " |\n| context | " + context + " |");
  co_return;
}

asio::awaitable<void> Bridge::config_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  ChannelPrefs prefs = state_.prefs(channel.key);
  auto source = [](bool pref, bool channel_set) {
    return pref ? "channel preference" : channel_set ? "channel config" : "defaults";
  };
  std::string mode = channel.config.trigger_mode.value_or(settings().defaults.trigger_mode);
  std::string where = channel.dm                        ? "defaults"
                      : channel.config.added_by.empty() ? "channel config"
                                                        : "added from chat by @" + channel.config.added_by;
  if (!channel.config.source.empty()) where += ", a clone of " + channel.config.source;
  reply(channel,
        "| setting | value | from |\n|---|---|---|\n| model | `" + model_of(channel) + "` | " +
            source(prefs.model.has_value(), !channel.config.model.empty()) + " |\n| verbose | " +
            (verbose_of(channel) ? "on" : "off") + " | " +
            source(prefs.verbose.has_value(), channel.config.verbose.has_value()) +
            " |\n| triggerMode | " + (channel.dm ? "all" : mode) + " | " +
            (channel.dm ? "DM" : source(false, channel.config.trigger_mode.has_value())) +
            " |\n| workingDirectory | `" + channel.config.working_directory + "` | " + where +
            " |\n| conversationScope | " +
            (thread_scoped(channel) ? "thread" : "channel") + " | " +
            (channel.dm ? "DM" : source(false, channel.config.conversation_scope.has_value())) +
            " |");
  co_return;
}

asio::awaitable<void> Bridge::verbose_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  std::optional<bool> on = a.empty() ? std::optional<bool>(!verbose_of(channel)) : loose_bool(a);
  if (!on) {
    reply(channel, "\u274C `/verbose` takes on or off, not `" + a + "`.");
    co_return;
  }
  ChannelPrefs prefs = state_.prefs(channel.key);
  prefs.verbose = *on;
  state_.set_prefs(channel.key, prefs);
  reply(channel, std::string("Verbose mode is ") + (*on ? "on: tool calls are shown." : "off."));
  co_return;
}

asio::awaitable<void> Bridge::mcp_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  std::vector<std::string> lines = mcp_tools_for(channel.config.working_directory)->status();
  std::string out = lines.empty() ? "No MCP servers are configured (mcp.servers in the config, or "
                                    "mcp-config.json in the workspace)."
                                  : "**MCP servers**\n";
  for (const auto& l : lines) out += "- " + l + "\n";
  reply(channel, out);
  co_return;
}

asio::awaitable<void> Bridge::tools_command(Channel& channel, const CommandCall& c) {
  Repository& repo = repository_of(channel);
  const std::string& root = channel.config.working_directory;
  if (!c.args.empty()) {  // enable / disable: no tool listing needed
    reply(channel, shelf_.skills_command(channel.key, root, c.args, ""));
    co_return;
  }
  TurnTools tools;
  co_await offer_tools(channel, repo, shape_of(channel), tools);
  std::string out = "**Tools offered here**";
  for (const ToolSpec& s : *tools.registry.specs()) {
    const ToolEntry* e = tools.registry.find(s.name);
    out += "\n- `" + s.name + "`" +
           (e && e->permission != ToolPermission::kNone ? " (asks permission)" : "");
  }
  if (!tools.mcp->empty()) out += "\nMCP servers and their state: `/mcp`.";
  out += "\n" + hooks_.describe(root);
  reply(channel, shelf_.skills_command(channel.key, root, "", out));
  co_return;
}

asio::awaitable<void> Bridge::agents_command(Channel& channel, const CommandCall& c) {
  const std::string& root = channel.config.working_directory;
  const std::string& configured = channel_agent(settings(), channel.config);
  reply(channel, c.name == "agents" ? shelf_.list_agents(channel.key, root, configured)
                                    : shelf_.select_agent(channel.key, root, configured, c.args));
  co_return;
}

asio::awaitable<void> Bridge::reload_command(Channel& channel, const CommandCall& c) {
  const std::string& a = c.args;
  (void)a;
  if (ascii_lower(a) == "skills") {
    shelf_.forget_skills(channel.config.working_directory);
    reply(channel, "Skills will be read afresh at the next answer (or `/skills`).");
    co_return;
  }
  if (ascii_lower(a) == "mcp") {
    mcp_.erase(channel.config.working_directory);  // running turns keep their servers
    reply(channel,
          "MCP servers will be started afresh (and mcp-config.json re-read) at the next turn.");
    co_return;
  }
  if (ascii_lower(a) == "config") {
    if (!reload_) {
      reply(channel, "This bridge was started without a config file to re-read.");
      co_return;
    }
    try {
      reply(channel, apply_config(reload_()));
    } catch (const std::exception& e) {
      reply(channel, std::string("\u274C The config was not applied: ") + e.what());
    }
    co_return;
  }
  shelf_.forget(channel.config.working_directory);
  hooks_.forget();
  reply(channel,
        "Custom agents, skills and hooks will be read afresh at the next answer; AGENTS.md, "
        "AGENTS.local.md and MEMORY.md are read at every turn; `/reload config` re-reads the "
        "configuration file.");
  co_return;
}

ScheduleSite Bridge::schedule_site(const Channel& channel) const {
  return {channel.key, channel.adapter->bot(), channel.thread_root};
}

void Bridge::schedule_command(Channel& channel, const InboundMessage&, const CommandCall& c) {
  reply(channel, scheduler_.command(schedule_site(channel), c.args));
}

asio::awaitable<void> Bridge::help_command(Channel& channel, const CommandCall& c) {
  reply(channel, commands_.help(c.args == "all"));
  co_return;
}

asio::awaitable<void> Bridge::shutdown(std::chrono::milliseconds grace) {
  stopping_ = true;
  for (auto& a : adapters_) a->disconnect();
  // The leases stay held until the process ends: the turns finishing here are this process's.
  leases_.stop();
  memory_.stop();
  scheduler_.stop();
  if (quiet_timer_) quiet_timer_->cancel();
  // Nobody can answer a prompt now: the turns waiting on one go on without the call.
  desk_.resolve_all("", "the bridge is shutting down");
  questions_.resolve_all("", "the bridge is shutting down");
  asio::steady_timer t(io_);
  auto until = std::chrono::steady_clock::now() + grace;
  while (!idle() && std::chrono::steady_clock::now() < until) {
    t.expires_after(std::chrono::milliseconds(50));
    co_await t.async_wait(asio::use_awaitable);
  }
  for (auto& [key, channel] : channels_)
    if (channel->cancel) channel->cancel->cancel();
  auto hard = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!idle() && std::chrono::steady_clock::now() < hard) {
    t.expires_after(std::chrono::milliseconds(50));
    co_await t.async_wait(asio::use_awaitable);
  }
  for (auto& [key, channel] : channels_) co_await channel->posts->drained();
}

}  // namespace pf
