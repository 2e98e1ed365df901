// Calls between bots, the orchestrator's side (see inter_agent.h for the rules): ask_agent from
// a channel's turn, one call of a chain run as an ephemeral answer of the target bot (its
// workspace, tools, agents and skills; the action kinds every bot of the chain has; a timeout),
// the callee's tool gate, the call feed in a verbose channel and the agent_calls record.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "agent/answer.h"
#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/text.h"
#include "llm/model_registry.h"
#include "search/retrieval_config.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

// What a call runs with: the target bot, its workspace and tools, and the chain it extends.
struct Bridge::Callee {
  std::string bot, root;
  AgentChain chain;                // the chain with bot in it: a nested call's starting point
  std::vector<std::string> kinds;  // the action kinds the call may use
  TurnTools tools;
};

namespace {

std::string cut(const std::string& text, size_t max) {
  return text.size() <= max ? text : text.substr(0, split_point(text, max)) + "\u2026";
}

std::vector<std::string> common(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const auto& k : a)
    if (std::find(b.begin(), b.end(), k) != b.end()) out.push_back(k);
  return out;
}

// The call's feed post in a verbose channel: a header, the callee's tool calls, the outcome.
struct CallFeed {
  std::shared_ptr<PostQueue> posts;
  std::shared_ptr<PostQueue::Post> post;
  std::string text;
  void add(const std::string& line) {
    if (!post) return;
    text += "\n" + line;
    posts->edit(post, text);
  }
};

}  // namespace

std::vector<std::string> Bridge::bot_names() const {
  std::vector<std::string> out;
  for (const auto& p : settings().platforms)
    for (const auto& b : p.bots)
      if (std::find(out.begin(), out.end(), b.name) == out.end()) out.push_back(b.name);
  return out;
}

std::string Bridge::bot_workspace(const std::string& bot) const {
  for (const auto& c : settings().channels)
    if (c.bot == bot && !c.working_directory.empty()) return c.working_directory;
  return dm_workspace(bot);
}

asio::awaitable<json> Bridge::ask_agent(Channel& channel, const ToolCall& call) {
  AgentChain chain;
  chain.id = random_id(12);
  chain.visited = {channel.adapter->bot()};
  std::vector<std::string> kinds = action_kinds_of(channel);
  std::string arguments = call.arguments;
  CancelSignal none;
  co_return co_await call_agent(channel, chain, kinds, arguments,
                                channel.cancel ? *channel.cancel : none);
}

asio::awaitable<json> Bridge::call_agent(Channel& origin, AgentChain chain,
                                         std::vector<std::string> kinds, std::string arguments,
                                         CancelSignal& cancel) {
  const InterAgentConfig& ic = inter_agent_config(config_);
  auto t0 = std::chrono::steady_clock::now();
  AgentCallRecord record;
  record.caller_bot = chain.visited.empty() ? std::string() : chain.visited.back();
  record.chain_id = chain.id;
  record.depth = static_cast<int64_t>(chain.visited.size());
  record.created_at_ms = unix_time_ms();
  auto finish = [&](json result) {
    record.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - t0).count();
    record.success = !result.contains("error");
    if (!record.success) record.error = cut(json_string(result, "error"), 500);
    try {
      state_.add_agent_call(record);
    } catch (const std::exception& e) {
      log::warn("bridge", std::string("could not record the agent call: ") + e.what());
    }
    return result;
  };
  std::string error;
  std::optional<AgentCallRequest> request = parse_agent_call(arguments, ic, &error);
  if (!request) co_return finish(json{{"error", error}});
  record.target_bot = request->target;
  record.message_summary = cut(request->message, 500);
  std::vector<std::string> bots = bot_names();
  if (std::find(bots.begin(), bots.end(), request->target) == bots.end())
    co_return finish(json{{"error", "no bot is named " + request->target}});
  std::string refusal = agent_call_refusal(ic, chain, request->target);
  if (!refusal.empty()) co_return finish(json{{"error", refusal}});

  Callee callee;
  callee.bot = request->target;
  callee.root = bot_workspace(callee.bot);
  callee.chain = chain;
  callee.chain.visited.push_back(callee.bot);
  const BotConfig* bot = nullptr;
  for (const auto& p : settings().platforms)
    for (const auto& b : p.bots)
      if (b.name == callee.bot && !bot) bot = &b;
  callee.kinds = common(kinds, bot && bot->actions ? *bot->actions : settings().defaults.actions);
  // Its agent: the one asked for, else its own default.
  std::string agent_name = !request->agent.empty() ? request->agent
                           : bot && !bot->agent.empty() ? bot->agent
                                                        : settings().defaults.agent;
  std::optional<AgentDefinition> agent;
  if (!agent_name.empty()) {
    std::shared_ptr<const AgentCatalog> agents = shelf_.agents(callee.root);
    if (const AgentDefinition* a = agents->find(agent_name)) agent = *a;
    else co_return finish(json{{"error", callee.bot + " has no agent named " + agent_name}});
    record.target_agent = agent->name;
  }
  Repository& repo = prepare_repository(callee.root);
  co_await first_index(repo, cancel);

  // Its tools: the repository's, the action kinds the call may use, its MCP servers and skills,
  // narrowed to its agent's list; ask_agent again where the chain may go deeper.
  TurnTools& tools = callee.tools;
  tools.registry = repo.tools->registry();
  if (!callee.kinds.empty()) {
    tools.actions = action_tools_for(repo.root, callee.bot);
    tools.actions->add_to(tools.registry, callee.kinds);
  }
  tools.mcp = mcp_tools_for(repo.root);
  if (!tools.mcp->empty())
    co_await runtime_.workspace().run([&](Store&) { tools.mcp->add_to(tools.registry); });
  if (agent)
    tools.registry.retain([&](const ToolEntry& e) { return agent_allows_tool(*agent, e.spec.name); });
  std::vector<Skill> skills = shelf_.skills(repo.root)->skills;
  if (!skills.empty()) tools.registry.add(use_skill_tool(skills));
  std::vector<std::string> next = callable_bots(ic, callee.bot, bots);
  if (!next.empty() && static_cast<int64_t>(callee.chain.visited.size()) < ic.max_depth)
    tools.registry.add(ask_agent_tool(next));

  // The model: the agent's, resolved as /model resolves, else the bot's first channel's.
  std::string model;
  if (agent && !agent->model.empty())
    if (ModelResolution r = resolve_model(configured_models(config_), agent->model); r.model)
      model = r.model->id();
  for (const auto& c : settings().channels)
    if (model.empty() && c.bot == callee.bot && !c.model.empty()) model = c.model;
  if (model.empty()) model = settings().defaults.model;
  Config effective = answer_config(config_);
  if (!model.empty()) effective.defaults.chat_model = model;
  if (!settings().defaults.fallback_models.empty())
    effective.defaults.fallback_models = settings().defaults.fallback_models;

  AnswerOptions opt;
  opt.search = repo.search;
  opt.rewrite_query = retrieval_config(config_).rewrite;
  opt.tools = &tools.registry;
  opt.max_steps = static_cast<int>(bot && bot->max_steps ? *bot->max_steps : settings().defaults.max_steps);
  opt.instructions = agent_call_instructions(chain, callee.bot, origin.turn_user, ic.max_depth) +
                     workspace_notes(callee.root);
  if (agent)
    opt.instructions += "\n\n<custom_agent name=\"" + agent->name + "\">\n" + agent->instructions +
                        "\n</custom_agent>";
  if (!skills.empty()) opt.instructions += "\n\n" + skills_prompt(skills);
  // Its own cancel: the timeout, or the caller's turn being stopped.
  CancelSignal stop;
  opt.cancel = &stop;
  CancelRegistration follow(&cancel, [&stop] { stop.cancel(); });
  bool timed_out = false;
  asio::steady_timer deadline(io_, std::chrono::seconds(request->timeout_seconds));
  deadline.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;
    timed_out = true;
    stop.cancel();
  });
  opt.before_tool = [this, &origin, &callee, &stop](const ToolCall& c) {
    return callee_gate(origin, callee, c, stop);
  };
  AuditRecord who;  // the callee's calls, kept as the starting channel's, by the called bot
  who.front = "chat";
  who.place = origin.key;
  who.user = origin.turn_user;
  who.bot = callee.bot;
  tools.audit = std::make_unique<AuditTrail>(&state_, std::move(who));
  opt.after_tool = [&tools](const ToolCall& c, const std::string& result) {
    tools.audit->ran(c, result);
  };
  CallFeed feed;
  if (verbose_of(origin)) {
    feed.posts = origin.posts;
    feed.text = "\U0001F91D **" + record.caller_bot + " \u2192 " + callee.bot + "**" +
                (agent ? " (agent " + agent->name + ")" : "") + ": " + cut(request->message, 200);
    feed.post = origin.posts->create(feed.text, origin.thread_root);
  }
  std::string answer, failure;
  int steps = 0;
  try {
    co_await async_answer_question(
        runtime_.workspace(), effective, runtime_.embedder(), request->message, {}, opt,
        [&](const AnswerEvent& e) {
          if (e.kind == AnswerEvent::Kind::kStep) ++steps;
          if (e.kind == AnswerEvent::Kind::kText) answer += e.text;
          if (e.kind == AnswerEvent::Kind::kToolCall)
            feed.add("\u21B3 " + callee.bot + ": `" + e.call.name + "` " + cut(e.call.arguments, 150));
          return true;
        });
  } catch (const std::exception& e) {
    failure = e.what();
  }
  deadline.cancel();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json result;
  if (timed_out) {
    failure = callee.bot + " did not finish within " + std::to_string(request->timeout_seconds) + " s";
  } else if (cancel.cancelled() && failure.empty()) {
    failure = "the call was stopped";
  }
  if (!failure.empty()) {
    result = {{"error", failure}};
    if (!answer.empty()) result["partialAnswer"] = cut(answer, 8000);
    feed.add("\u26A0\uFE0F " + failure);
  } else {
    result = {{"target", callee.bot}, {"answer", answer}, {"steps", steps},
              {"seconds", std::round(seconds * 10) / 10}};
    if (agent) result["agent"] = agent->name;
    record.response_summary = cut(answer, 500);
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", seconds);
    feed.add("\u2705 answered in " + std::string(took));
  }
  co_return finish(std::move(result));
}

asio::awaitable<std::optional<json>> Bridge::callee_gate(Channel& origin, const Callee& callee,
                                                         const ToolCall& call,
                                                         CancelSignal& cancel) {
  if (call.name == kAskAgentTool) {
    AgentChain chain = callee.chain;
    std::vector<std::string> kinds = callee.kinds;
    std::string arguments = call.arguments;
    co_return co_await call_agent(origin, chain, kinds, arguments, cancel);
  }
  HookDecision d = co_await hooks_.before_tool(callee.root, call.name, call.arguments);
  const ToolEntry* entry = callee.tools.registry.find(call.name);
  std::string error;
  std::optional<PermissionRequest> request =
      permission_request(callee.tools.registry, call.name, call.arguments, &error);
  AuditTrail* audit =
      request && entry && entry->permission != ToolPermission::kNone ? callee.tools.audit.get() : nullptr;
  auto refuse = [&](const std::string& by, const std::string& message, bool not_given) {
    if (audit) audit->decided(call, *request, false, by, message, not_given);
    return json{{"error", message}};
  };
  if (d.action == HookDecision::Action::kDeny) co_return refuse("hook", "denied by a hook: " + d.reason, false);
  if (d.action == HookDecision::Action::kAsk)
    co_return refuse("hook", "permission was not given (user-not-available): a hook asks, and a "
                             "call between bots cannot ask anyone", true);
  if (!entry || entry->permission == ToolPermission::kNone) co_return std::nullopt;
  if (!request) co_return json{{"error", error}};
  // The target bot's own scope (its rules, its workspace) and the origin channel's (its rules,
  // its yolo, its workspace): both must approve, since nobody can be asked.
  PolicyContext target;
  target.bot = callee.bot;
  target.workspace_roots = {callee.root};
  target.config = &config_.permissions;
  target.rules = &state_;
  Verdict mine = decide_permission(*request, target);
  Verdict theirs = decide_permission(*request, policy_context(origin, origin.config.working_directory));
  log::info("bridge", origin.key + ": " + callee.bot + " (called) " + call.name + ": " +
                          action_name(mine.action) + " in its scope, " +
                          action_name(theirs.action) + " in the channel's");
  for (const Verdict* v : {&mine, &theirs})
    if (v->action == Verdict::Action::kDeny)
      co_return refuse(v->check, "permission denied (" + v->check + "): " + v->detail, false);
  if (mine.action == Verdict::Action::kApprove && theirs.action == Verdict::Action::kApprove) {
    if (audit) audit->decided(call, *request, true, mine.check + " + " + theirs.check, mine.detail);
    co_return std::nullopt;
  }
  co_return refuse("prompt", "permission was not given (user-not-available): a call between bots "
                             "cannot ask anyone, and the rules do not approve this call", true);
}

}  // namespace pf
