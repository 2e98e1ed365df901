// A turn's tools (offer_tools: what the model is offered; gate_call: what each call passes
// before it runs) and the bridge's chat tools (spec §16): show_file_in_chat (a fenced excerpt of a workspace file
// posted in the channel, at most 8,000 characters), send_file (a workspace file uploaded to the
// channel), no_reply (the turn posts nothing), ask_user (a question posted, the next message its
// answer: question_desk.h), ask_agent (bridge_agent_calls.cpp), schedule and plan mode's
// update_plan. They act on the channel, so they run here, on
// the network thread, from the turn's before_tool step; their registry entries only carry the
// schemas the model is offered. Paths pass the repository tools' rules: inside the workspace,
// no secrets, no symlinks out.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include <sys/stat.h>

#include <filesystem>

#include "agent/own_docs.h"
#include "agent/plan_mode.h"
#include "bridge/bridge.h"
#include "bridge/bridge_channel.h"
#include "core/json.h"
#include "core/log.h"
#include "core/fs.h"
#include "core/text.h"
#include "runtime/own_paths.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

constexpr size_t kShowMaxChars = 8000;
constexpr int64_t kSendMaxBytes = 50 << 20;

json schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

ToolEntry chat_entry(ToolSpec spec) {
  return ToolEntry{std::move(spec), ToolPermission::kNone, 4096, nullptr,
                   [](const std::string&, Store*) -> json {
                     return {{"error", "chat tools run only in the chat bridge"}};
                   }};
}

std::string language_of(const std::string& path) {
  size_t dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  static const std::map<std::string, std::string> langs = {
      {"ts", "typescript"}, {"tsx", "tsx"}, {"js", "javascript"}, {"py", "python"}, {"go", "go"},
      {"rs", "rust"},       {"java", "java"}, {"c", "c"},         {"h", "c"},       {"cpp", "cpp"},
      {"hpp", "cpp"},       {"cc", "cpp"},    {"cs", "csharp"},   {"rb", "ruby"},   {"php", "php"},
      {"sh", "bash"},       {"md", "markdown"}, {"json", "json"}, {"yml", "yaml"},  {"yaml", "yaml"}};
  auto it = langs.find(ext);
  return it == langs.end() ? "" : it->second;
}

}  // namespace

bool is_bridge_chat_tool(const std::string& name) {
  return name == "show_file_in_chat" || name == "send_file" || name == "no_reply" ||
         name == "schedule" || name == "update_plan" || name == kAskUserTool ||
         name == kAskAgentTool;
}

void add_plan_tool(ToolRegistry& tools) {
  tools.add(chat_entry({"update_plan",
                        "Plan mode: save the whole plan (Markdown: numbered steps, the files each "
                        "touches, how to check it). Shown in the channel; call it again as the "
                        "plan changes.",
                        schema({{"plan", {{"type", "string"}}}}, {"plan"})}));
}

void add_chat_tools(ToolRegistry& tools) {
  tools.add(chat_entry({"show_file_in_chat",
                        "Post an excerpt of a repository file in the channel as a code block "
                        "(at most 8,000 characters), optionally lines startLine..endLine; with "
                        "diff: true, its uncommitted changes (git diff against HEAD) instead.",
                        schema({{"path", {{"type", "string"}}},
                                {"startLine", {{"type", "integer"}, {"minimum", 1}}},
                                {"endLine", {{"type", "integer"}, {"minimum", 1}}},
                                {"diff", {{"type", "boolean"}}}},
                               {"path"})}));
  tools.add(chat_entry({"send_file", "Upload a repository file to the channel as an attachment.",
                        schema({{"path", {{"type", "string"}}}, {"message", {{"type", "string"}}}}, {"path"})}));
  ToolEntry schedule = chat_entry(
      {"schedule",
       "Schedule a prompt to run in this channel later: cron (5 fields, in timezone, an IANA "
       "name, default UTC) or run_at (a time, e.g. 2026-12-01T15:00). The answer is posted "
       "unless it is NO_REPLY. Also list, cancel, pause or resume schedules by id.",
       schema({{"action", {{"type", "string"}, {"enum", {"create", "list", "cancel", "pause", "resume"}}}},
               {"prompt", {{"type", "string"}}},
               {"cron", {{"type", "string"}}},
               {"timezone", {{"type", "string"}}},
               {"run_at", {{"type", "string"}}},
               {"id", {{"type", "string"}}}},
              {})});
  schedule.acts = true;  // later
  tools.add(std::move(schedule));
  tools.add(ask_user_tool());
  tools.add(own_docs_tool());
  tools.add(chat_entry({"no_reply",
                        "Call when the message needs no answer (small talk between people, an "
                        "acknowledgement): nothing is posted.",
                        schema(json::object(), {})}));
}

asio::awaitable<json> Bridge::run_chat_tool(Channel& channel, Repository& repo, const ToolCall& call,
                                            bool* no_reply) {
  json args = parse_json(call.arguments);
  if (!args.is_object()) co_return json{{"error", "the arguments must be a JSON object"}};
  if (call.name == "no_reply") {
    *no_reply = true;
    co_return json{{"ok", true}, {"note", "nothing will be posted for this message"}};
  }
  if (call.name == kAskUserTool) co_return co_await ask_user(channel, call);
  if (call.name == kAskAgentTool) co_return co_await ask_agent(channel, call);
  if (call.name == "schedule") co_return scheduler_.tool(schedule_site(channel), args, channel.turn_user);
  if (call.name == "update_plan") {
    std::string plan = json_string(args, "plan");
    if (trim_space(plan).empty()) co_return json{{"error", "plan is required (the whole plan)"}};
    if (plan.size() > 32 * 1024) co_return json{{"error", "the plan is over 32 KiB; keep it shorter"}};
    plans_.update(channel.key, channel.turn_conversation, channel.posts, channel.thread_root, plan);
    co_return json{{"saved", true}, {"characters", static_cast<int64_t>(plan.size())}};
  }
  if (!args.contains("path") || !args["path"].is_string()) co_return json{{"error", "path is required"}};
  std::string path = args["path"];
  if (call.name == "show_file_in_chat" && args.value("diff", false) == true)
    co_return co_await show_diff(channel, repo, path);
  if (call.name == "show_file_in_chat") {
    std::optional<int> start, end;
    if (args.contains("startLine") && args["startLine"].is_number_integer()) start = args["startLine"].get<int>();
    if (args.contains("endLine") && args["endLine"].is_number_integer()) end = args["endLine"].get<int>();
    json read;
    co_await runtime_.workspace().run([&](Store&) { read = repo.tools->read_file(path, start, end); });
    if (read.contains("error")) co_return read;
    std::string content = read["content"];
    bool cut = content.size() > kShowMaxChars;
    if (cut) content = content.substr(0, split_point(content, kShowMaxChars));
    std::string fence = "````";
    while (content.find(fence) != std::string::npos) fence += "`";
    std::string lines = std::to_string(read["startLine"].get<int>()) + "-" + std::to_string(read["endLine"].get<int>());
    std::string text = "`" + path + "` lines " + lines + (cut ? " (cut at 8,000 characters)" : "") + "\n" + fence +
                       language_of(path) + "\n" + content + (content.empty() || content.back() == '\n' ? "" : "\n") + fence;
    channel.posts->create(text, channel.thread_root);
    co_return json{{"shown", path}, {"lines", lines}, {"truncated", cut}};
  }
  // send_file
  std::string why;
  std::optional<std::string> abs = repo.tools->resolve(path, &why);
  if (!abs) co_return json{{"error", "cannot send " + path + ": " + why}};
  struct stat st {};
  if (::stat(abs->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) co_return json{{"error", path + " is not a regular file"}};
  if (st.st_size > kSendMaxBytes) co_return json{{"error", path + " is over 50 MiB"}};
  std::string message = args.contains("message") && args["message"].is_string() ? args["message"].get<std::string>() : "";
  co_await channel.posts->drained();  // after what the turn posted so far
  try {
    std::string post = co_await channel.adapter->send_file(channel.id, *abs, message, channel.thread_root);
    co_return json{{"sent", path}, {"bytes", static_cast<int64_t>(st.st_size)}, {"post", post}};
  } catch (const std::exception& e) {
    log::warn("bridge", "send_file " + path + ": " + e.what());
    co_return json{{"error", std::string("the upload failed: ") + e.what()}};
  }
}

asio::awaitable<json> Bridge::show_diff(Channel& channel, Repository& repo, const std::string& path) {
  std::string why;
  std::optional<std::string> abs = repo.tools->resolve(path, &why);
  if (!abs) co_return json{{"error", "cannot show " + path + ": " + why}};
  std::string rel = std::filesystem::relative(*abs, repo.root).string();
  std::string quoted = "'";
  for (char c : rel) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  // In run_command's sandbox (no network, pilotfish's files hidden), with the repository's own
  // diff drivers, text conversions, monitors and hooks off: its config runs nothing.
  std::string command =
      "git --no-pager --no-optional-locks -c core.fsmonitor=false -c core.hooksPath=/dev/null "
      "diff --no-color --no-ext-diff --no-textconv HEAD -- " + quoted;
  std::shared_ptr<ActionTools> tools = action_tools_for(repo.root, channel.adapter->bot());
  json r;
  co_await runtime_.workspace().run([&](Store&) { r = tools->run_command(command, 30, ""); });
  if (r.contains("error")) co_return r;
  std::string out = json_string(r, "output");
  if (json_int(r, "exit_code") != 0)
    co_return json{{"error", "git diff failed: " + out.substr(0, 500)}};
  if (trim_space(out).empty()) {
    channel.posts->create("`" + rel + "` has no uncommitted changes.", channel.thread_root);
    co_return json{{"shown", rel}, {"changes", false}};
  }
  bool cut = out.size() > kShowMaxChars || r.contains("truncated");
  if (out.size() > kShowMaxChars) out = out.substr(0, split_point(out, kShowMaxChars));
  std::string fence = "````";
  while (out.find(fence) != std::string::npos) fence += "`";
  channel.posts->create("`" + rel + "` uncommitted changes" + (cut ? " (cut at 8,000 characters)" : "") +
                            "\n" + fence + "diff\n" + out + (out.back() == '\n' ? "" : "\n") + fence,
                        channel.thread_root);
  co_return json{{"shown", rel}, {"changes", true}, {"truncated", cut}};
}

asio::awaitable<json> Bridge::ask_user(Channel& channel, const ToolCall& call) {
  std::string error;
  std::optional<UserQuestion> q = parse_user_question(call.arguments, &error);
  if (!q) co_return json{{"error", error}};
  if (channel.quiet) co_return no_user_answer("a scheduled run: nobody is there to ask");
  CancelSignal none;
  PromptPlace place{channel.key, channel.posts, channel.thread_root};
  QuestionReply r = co_await questions_.ask(place, std::move(*q), !thread_scoped(channel),
                                            channel.cancel ? *channel.cancel : none);
  co_return r.answered ? user_answer(r.answer, r.by) : no_user_answer(r.why);
}

asio::awaitable<void> Bridge::offer_tools(Channel& channel, Repository& repo,
                                          const TurnShape& shape, TurnTools& out) {
  // The channel's set, which alone sees the channel's attachments among pilotfish's own files;
  // the bridge's tools join here.
  std::string attachments = repo.root + "/" + attachments_folder(safe_name(channel.id));
  out.registry = repo.tools->registry_exposing(attachments);
  std::vector<std::string> kinds = action_kinds_of(channel);
  if (!kinds.empty()) {
    out.actions = action_tools_for(repo.root, channel.adapter->bot());
    out.actions->add_to(out.registry, kinds, attachments);
  }
  add_chat_tools(out.registry);
  const BotConfig* bot = bot_config(channel.adapter->platform(), channel.adapter->bot());
  if (bot && bot->admin) add_admin_tools(out.registry);
  std::vector<std::string> callable =
      callable_bots(inter_agent_config(config_), channel.adapter->bot(), bot_names());
  if (!callable.empty()) out.registry.add(ask_agent_tool(callable));
  // MCP servers' tools (starting a server blocks: a worker does it).
  out.mcp = mcp_tools_for(repo.root);
  if (!out.mcp->empty())
    co_await runtime_.workspace().run([&](Store&) { out.mcp->add_to(out.registry); });
  if (shape.agent)
    out.registry.retain([&](const ToolEntry& e) {
      return is_bridge_chat_tool(e.spec.name) || is_admin_tool(e.spec.name) ||
             agent_allows_tool(*shape.agent, e.spec.name);
    });
  if (!shape.skills.empty()) out.registry.add(use_skill_tool(shape.skills));
  if (shape.plan) {
    // Only what reads, whatever the rules or /yolo say; and the plan's own tool.
    out.registry.retain(plan_mode_keeps);
    add_plan_tool(out.registry);
  }
}

asio::awaitable<std::optional<json>> Bridge::gate_call(Channel& channel, Repository& repo,
                                                       const TurnTools& tools,
                                                       const TurnShape& shape,
                                                       const ToolCall& call, CancelSignal& cancel,
                                                       bool* no_reply) {
  if (shape.plan)
    if (std::optional<json> refused = plan_mode_refusal(tools.registry, call)) co_return refused;
  bool asked = false;
  // A named result, not one declared in the if: GCC 12 mishandles co_await there.
  std::optional<json> refused = co_await check_hooks(channel, tools.registry, call, repo.root,
                                                     cancel, &asked, tools.audit.get());
  if (refused) co_return refused;
  if (is_bridge_chat_tool(call.name)) co_return co_await run_chat_tool(channel, repo, call, no_reply);
  std::optional<json> decided = co_await check_permission(channel, tools.registry, call, repo.root,
                                                          cancel, asked, tools.audit.get());
  if (decided || !is_admin_tool(call.name) || !tools.registry.find(call.name)) co_return decided;
  // An approved admin tool runs here (it acts on the platform and the bridge), recorded as run.
  json result = co_await run_admin_tool(channel, call);
  tools.audit->ran(call, result.dump());
  co_return result;
}

}  // namespace pf
