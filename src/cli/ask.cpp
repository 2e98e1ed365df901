// pilotfish ask: one question answered on the terminal, with the repository's tools, its
// custom agents and skills, the side-effecting tools the config enables (each call through the
// permission engine and the person at the terminal), hooks, images and reasoning effort; and
// plan mode (--plan) and a plan carried out on autopilot (--implement FILE).
#include "cli/commands.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "agent/action_tools.h"
#include "agent/answer.h"
#include "agent/ask_user.h"
#include "agent/custom_agents.h"
#include "agent/hooks.h"
#include "agent/plan_mode.h"
#include "agent/skills.h"
#include "agent/tools.h"
#include "bridge/attachment_keeper.h"
#include "bridge/service.h"
#include "bridge/state_store.h"
#include "cli/policy.h"
#include "core/config.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/text.h"
#include "llm/model_registry.h"
#include "mcp/client.h"
#include "runtime/own_paths.h"
#include "search/retrieval_config.h"
#include "store/store.h"

namespace pf::cli {

namespace {

// The custom agent (--agent) and the repository's skills shape the answer: the agent's
// instructions, tool list and model (unless --model chose one), the skills' prompt lines and
// use_skill. Agent and skill files that do not load are named on standard error.
void shape_answer(const AskArgs& args, const Config& config, const std::string& root,
                  ToolRegistry* registry, AnswerOptions& opt) {
  if (!args.agent.empty()) {
    AgentCatalog agents = discover_agents(agent_dirs(root));
    for (const DefinitionProblem& p : agents.problems)
      std::fprintf(stderr, "-- not loaded: %s: %s\n", p.path.c_str(), p.message.c_str());
    const AgentDefinition* a = agents.find(args.agent);
    if (!a) {
      std::string known;
      for (const AgentDefinition& d : agents.agents) known += (known.empty() ? "" : ", ") + d.name;
      throw UsageError("--agent " + args.agent + ": no such agent (" +
                       (known.empty() ? std::string("none are defined") : "the agents: " + known) +
                       ")");
    }
    opt.instructions += "<custom_agent name=\"" + a->name + "\">\n" + a->instructions +
                        "\n</custom_agent>";
    if (!a->model.empty() && args.model.empty()) {
      ModelResolution r = resolve_model(configured_models(config), a->model);
      if (!r.model) throw UsageError("agent " + a->name + "'s model " + a->model + ": " + r.error);
      opt.chat_model = r.model->id();
    }
    if (registry)
      registry->retain([&](const ToolEntry& e) {
        return e.spec.name == kAskUserTool || agent_allows_tool(*a, e.spec.name);
      });
  }
  if (!registry) return;
  SkillCatalog skills = discover_skills(skill_dirs(root));
  for (const DefinitionProblem& p : skills.problems)
    std::fprintf(stderr, "-- not loaded: %s: %s\n", p.path.c_str(), p.message.c_str());
  if (skills.skills.empty()) return;
  registry->add(use_skill_tool(skills.skills));
  opt.instructions += (opt.instructions.empty() ? "" : "\n\n") + skills_prompt(skills.skills);
}

// --reasoning and --image, checked against the model that will answer.
void shape_input(const AskArgs& args, const Config& config, AnswerOptions& opt) {
  std::string model = !opt.chat_model.empty() ? opt.chat_model : config.defaults.chat_model;
  if (!args.reasoning.empty()) {
    if (!model_reasons(config, model))
      throw UsageError("--reasoning: " + (model.empty() ? std::string("no chat model") : model) +
                       " does not reason (set \"reasoning\": true on it if it does)");
    opt.reasoning_effort = args.reasoning;
  }
  if (args.images.size() > kMaxImages) throw UsageError("--image: at most 4 images");
  for (const std::string& file : args.images) {
    std::string type = image_type(file);
    if (type.empty()) throw UsageError("--image " + file + ": not a PNG, JPEG, GIF or WebP file");
    std::error_code ec;
    if (static_cast<int64_t>(std::filesystem::file_size(file, ec)) > kMaxImageBytes)
      throw UsageError("--image " + file + ": over 5 MiB");
    if (!model_sees_images(config, model))
      throw UsageError("--image: " + (model.empty() ? std::string("no chat model") : model) +
                       " does not take images (set \"vision\": true on it if it does)");
    opt.question_images.push_back({type, base64_encode(read_file(file))});
  }
}

// --plan and --implement (agent/plan_mode.h): the tools kept, the prompt, the step cap and
// autopilot. Returns the question to ask.
std::string shape_mode(const AskArgs& args, const Config& config, ToolRegistry& registry,
                       AnswerOptions& opt) {
  opt.max_steps = args.max_steps > 0 ? args.max_steps : 5;
  std::string sep = opt.instructions.empty() ? "" : "\n\n";
  if (args.plan) {
    registry.retain(plan_mode_keeps);
    opt.instructions += sep + plan_answer_instructions();
  }
  if (args.implement.empty()) return args.question;
  std::string plan;
  try {
    plan = trim_space(read_file(args.implement));
  } catch (const Error& e) {
    throw UsageError("--implement: " + std::string(e.what()));
  }
  if (plan.empty()) throw UsageError("--implement " + args.implement + ": the plan is empty");
  if (plan.size() > 64 * 1024) throw UsageError("--implement " + args.implement + ": over 64 KiB");
  if (args.max_steps == 0) opt.max_steps = static_cast<int>(bridge_config(config).autopilot_max_steps);
  opt.instructions += sep + autopilot_instructions();
  opt.keep_going = [](const std::string& text) {
    std::optional<std::string> nudge = autopilot_continue(text);
    if (nudge) std::fputs("\n", stdout);  // the next step's text on a line of its own
    return nudge;
  };
  return implement_request(plan, args.question);
}

}  // namespace

int run_ask(const AskArgs& args) {
  auto store = open_store(resolve_db(args.db), OpenMode::kReadOnly);
  Config config = load_config(args.config);
  AnswerOptions opt;
  apply_retrieval(retrieval_config(config), opt.search);
  std::unique_ptr<Embedder> embedder = retrieval_mode(config, args.mode, &opt.search);
  if (!args.model.empty()) {
    ModelResolution r = resolve_model(configured_models(config), args.model);
    if (!r.model) throw UsageError("--model " + args.model + ": " + r.error);
    opt.chat_model = r.model->id();
  }
  // The tools work in one repository: the one named, or the store's only one.
  std::vector<RepositoryInfo> repositories = store->list_repositories();
  std::optional<RepositoryInfo> repo;
  if (!args.repo.empty()) {
    std::error_code ec;
    repo = store->find_repository(std::filesystem::weakly_canonical(args.repo, ec).string());
    if (!repo)
      throw UsageError("no repository indexed at " + args.repo + "; see `pilotfish stats`");
    opt.search.base.repo_id = repo->id;
  } else if (repositories.size() == 1) {
    repo = repositories.front();
  }
  std::unique_ptr<RepositoryTools> tools;
  if (repo)
    tools = std::make_unique<RepositoryTools>(repo->root, opt.search, embedder.get(),
                                              own_paths(config, resolve_db(args.db), repo->root));
  // The side-effecting tools the config enables (actions.enabled), each call decided by the
  // permission engine and, when it says ask, by the person at the terminal.
  ToolRegistry registry;
  std::unique_ptr<ActionTools> actions;
  std::unique_ptr<StateStore> rules;
  std::unique_ptr<McpTools> mcp;
  std::unique_ptr<AuditTrail> audit;
  std::string root = repo ? repo->root : std::string();
  HookSet hooks = load_hooks(config, root);
  for (const DefinitionProblem& p : hooks.problems)
    std::fprintf(stderr, "-- not loaded: %s: %s\n", p.path.c_str(), p.message.c_str());
  HookContext hook_ctx = hook_context(config, resolve_db(args.db), root);
  if (tools) {
    registry = tools->registry();
    mcp = std::make_unique<McpTools>(config.mcp_servers, repo->root);
    if (!mcp->empty()) mcp->add_to(registry);
    if (!config.actions.enabled.empty() && !args.plan) {
      actions = std::make_unique<ActionTools>(repo->root, config.actions, tools->own(),
                                              config.permissions);
      actions->add_to(registry, config.actions.enabled);
    }
    if (!config.actions.enabled.empty() || !mcp->empty()) {
      rules = open_state_store(bridge_state_path(bridge_config(config), resolve_db(args.db)));
      AuditRecord who;
      who.front = "cli";
      who.place = "terminal";
      who.user = terminal_user();
      audit = std::make_unique<AuditTrail>(rules.get(), std::move(who));
      opt.after_tool = [&audit](const ToolCall& call, const std::string& result) {
        audit->ran(call, result);
      };
    }
    // Questions back to the person only where one can answer: a terminal.
    bool ask_user = ::isatty(STDIN_FILENO) != 0;
    if (ask_user) registry.add(ask_user_tool());
    if (rules || ask_user || !hooks.of(HookEvent::kPreToolUse).empty())
      opt.before_tool = terminal_permissions(registry, config, rules.get(), repo->root, &hooks,
                                             hook_ctx, audit.get());
  }
  shape_answer(args, config, repo ? repo->root : std::string(), tools ? &registry : nullptr, opt);
  shape_input(args, config, opt);
  std::string question = shape_mode(args, config, registry, opt);
  opt.tools = tools ? &registry : nullptr;
  opt.rewrite_query = args.rewrite || retrieval_config(config).rewrite;
  bool wrote = false;  // answer text: a failure after it starts on a line of its own
  auto print = [&](const AnswerEvent& e) {
    if (e.kind == AnswerEvent::Kind::kToolResult)
      run_event_hooks(hooks, HookEvent::kPostToolUse,
                      post_tool_payload(e.call.name, e.call.arguments, e.text), hook_ctx);
    if (e.kind == AnswerEvent::Kind::kText) {
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
      wrote = true;
    } else if (e.kind == AnswerEvent::Kind::kToolCall) {
      std::fprintf(stderr, "-- %s %s\n", e.call.name.c_str(), e.text.c_str());
    } else if (e.kind == AnswerEvent::Kind::kFinish) {
      std::string note = "\n-- answered by " + e.model;
      for (const auto& s : e.skipped_models) note += "\n-- passed over " + s;
      std::fprintf(stderr, "%s\n", note.c_str());
    }  // steps and tool results are for the model, not the terminal
    return true;
  };
  run_event_hooks(hooks, HookEvent::kSessionStart,
                  {{"source", "new"}, {"initialPrompt", question}}, hook_ctx);
  run_event_hooks(hooks, HookEvent::kUserPromptSubmitted, {{"prompt", question}}, hook_ctx);
  try {
    answer_question(*store, config, embedder.get(), question, {}, opt, print);
  } catch (const Error& e) {
    if (wrote) std::fputs("\n", stdout);
    std::fflush(stdout);
    run_event_hooks(hooks, HookEvent::kErrorOccurred,
                    {{"error", {{"message", e.what()}, {"name", "Error"}}}}, hook_ctx);
    run_event_hooks(hooks, HookEvent::kSessionEnd, {{"reason", "error"}}, hook_ctx);
    throw;
  }
  run_event_hooks(hooks, HookEvent::kSessionEnd, {{"reason", "complete"}}, hook_ctx);
  std::fputs("\n", stdout);
  return 0;
}

}  // namespace pf::cli
