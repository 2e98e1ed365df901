// Calls between bots (see inter_agent.h): the config section, the allow lists and the chain's
// guards, and the ask_agent tool's schema, arguments and instructions.
#include "bridge/inter_agent.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/config_reader.h"
#include "core/json.h"
#include "core/text.h"

namespace pf {

using namespace config_detail;  // its json is ordered_json, as the loader reads the file
using Json = nlohmann::json;

namespace {

std::vector<std::string> names(Reader& r, const json& parent, const std::string& at, const char* key) {
  std::vector<std::string> out;
  auto it = parent.find(key);
  if (it == parent.end()) return out;
  if (!it->is_array()) fail(r.source(), Reader::join(at, key), "expected a list of bot names");
  for (const json& v : *it) {
    if (!v.is_string() || v.get<std::string>().empty())
      fail(r.source(), Reader::join(at, key), "expected a list of bot names (or \"*\")");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::shared_ptr<const ConfigSection> parse_inter_agent(const json& v, const Config&,
                                                       const std::string& source) {
  auto out = std::make_shared<InterAgentConfig>();
  if (v.is_null()) return out;
  if (!v.is_object()) fail(source, "interAgent", std::string("expected an object, got ") + kind(v));
  Reader r(source);
  r.only_keys(v, "interAgent", {"enabled", "maxDepth", "defaultTimeout", "maxTimeout", "allow"});
  if (v.contains("enabled")) {
    if (!v["enabled"].is_boolean()) fail(source, "interAgent.enabled", "expected true or false");
    out->enabled = v["enabled"].get<bool>();
  }
  out->max_depth = r.integer(v, "interAgent", "maxDepth", 1, 10, out->max_depth);
  out->max_timeout_seconds = r.integer(v, "interAgent", "maxTimeout", 1, 3600, out->max_timeout_seconds);
  out->default_timeout_seconds = r.integer(v, "interAgent", "defaultTimeout", 1,
                                           out->max_timeout_seconds, out->default_timeout_seconds);
  if (v.contains("allow")) {
    const json& allow = r.object(v, "interAgent", "allow");
    for (auto it = allow.begin(); it != allow.end(); ++it) {
      std::string at = "interAgent.allow." + it.key();
      if (!it->is_object()) fail(source, at, "expected an object {canCall, canBeCalledBy}");
      r.only_keys(*it, at, {"canCall", "canBeCalledBy"});
      out->allow[it.key()] = {names(r, *it, at, "canCall"), names(r, *it, at, "canBeCalledBy")};
    }
  }
  return out;
}

bool lists(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end() ||
         std::find(list.begin(), list.end(), "*") != list.end();
}

bool allows(const InterAgentConfig& c, const std::string& caller, const std::string& target) {
  auto from = c.allow.find(caller), to = c.allow.find(target);
  return from != c.allow.end() && to != c.allow.end() && lists(from->second.can_call, target) &&
         lists(to->second.can_be_called_by, caller);
}

}  // namespace

const InterAgentConfig& inter_agent_config(const Config& config) {
  static const InterAgentConfig kNone;
  const InterAgentConfig* c = config.section<InterAgentConfig>("interAgent");
  return c ? *c : kNone;
}

bool register_inter_agent_config() {
  static const bool once = register_config_section("interAgent", parse_inter_agent);
  return once;
}

std::optional<AgentCallRequest> parse_agent_call(const std::string& arguments,
                                                 const InterAgentConfig& config,
                                                 std::string* error) {
  Json args = parse_json(arguments);
  auto fail_with = [&](std::string why) -> std::optional<AgentCallRequest> {
    *error = std::move(why);
    return std::nullopt;
  };
  if (!args.is_object()) return fail_with("the arguments must be a JSON object");
  AgentCallRequest r;
  r.target = trim_space(json_string(args, "target"));
  r.message = trim_space(json_string(args, "message"));
  r.agent = trim_space(json_string(args, "agent"));
  if (!r.target.empty() && r.target.front() == '@') r.target.erase(0, 1);
  if (r.target.empty()) return fail_with("target is required (a bot's name)");
  if (r.message.empty()) return fail_with("message is required (what to ask the other bot)");
  r.timeout_seconds = config.default_timeout_seconds;
  if (args.contains("timeout") && !args["timeout"].is_null()) {
    const Json& t = args["timeout"];
    if (!t.is_number_integer() || t.get<int64_t>() < 1)
      return fail_with("timeout must be a whole number of seconds from 1");
    r.timeout_seconds = std::min(t.get<int64_t>(), config.max_timeout_seconds);
  }
  return r;
}

std::string agent_call_refusal(const InterAgentConfig& config, const AgentChain& chain,
                               const std::string& target) {
  if (!config.enabled) return "calls between bots are off (interAgent.enabled)";
  std::string caller = chain.visited.empty() ? std::string() : chain.visited.back();
  if (std::find(chain.visited.begin(), chain.visited.end(), target) != chain.visited.end()) {
    std::string path;
    for (const auto& b : chain.visited) path += b + " \u2192 ";
    return "a cycle: " + path + target + " (a bot already in this chain of calls)";
  }
  if (static_cast<int64_t>(chain.visited.size()) > config.max_depth)
    return "too deep: this call would be number " + std::to_string(chain.visited.size()) +
           " in the chain, over interAgent.maxDepth (" + std::to_string(config.max_depth) + ")";
  if (!allows(config, caller, target))
    return caller + " may not call " + target + " (interAgent.allow: " + caller +
           ".canCall and " + target + ".canBeCalledBy must both allow it)";
  return "";
}

std::vector<std::string> callable_bots(const InterAgentConfig& config, const std::string& caller,
                                       const std::vector<std::string>& bots) {
  std::vector<std::string> out;
  if (!config.enabled) return out;
  for (const auto& b : bots)
    if (b != caller && allows(config, caller, b)) out.push_back(b);
  return out;
}

ToolEntry ask_agent_tool(const std::vector<std::string>& targets) {
  std::string list;
  for (const auto& t : targets) list += (list.empty() ? "" : ", ") + t;
  Json schema = {
      {"type", "object"},
      {"properties",
       {{"target", {{"type", "string"}, {"enum", targets}, {"description", "The bot to ask."}}},
        {"message", {{"type", "string"}, {"description", "The whole request: it sees nothing else."}}},
        {"agent", {{"type", "string"}, {"description", "One of its custom agents (optional)."}}},
        {"timeout", {{"type", "integer"}, {"minimum", 1}, {"description", "Seconds to wait (optional)."}}}}},
      {"required", {"target", "message"}}};
  ToolSpec spec{kAskAgentTool,
                "Ask another bot of this team (" + list +
                    ") to do something in its own repository with its own tools, and get its "
                    "answer. It works alone: nobody can be asked anything during the call.",
                std::move(schema)};
  ToolEntry entry{std::move(spec), ToolPermission::kNone, 32 * 1024, nullptr,
                  [](const std::string&, Store*) -> Json {
                    return {{"error", "ask_agent runs only in the chat bridge"}};
                  }};
  entry.acts = true;  // as another bot
  return entry;
}

std::string agent_call_instructions(const AgentChain& chain, const std::string& target,
                                    const std::string& on_behalf_of, int64_t max_depth) {
  std::string caller = chain.visited.empty() ? std::string("another bot") : chain.visited.back();
  std::string out = "<agent_call>\nYou are the bot " + target + ", called by the bot " + caller;
  if (!on_behalf_of.empty()) out += " on behalf of @" + on_behalf_of;
  out += " (call " + std::to_string(chain.visited.size()) + " of at most " +
         std::to_string(max_depth) +
         " in this chain). Do what it asks and put everything it needs in your final answer: it "
         "sees only that. Nobody can be asked anything now: a tool call that needs a person's "
         "approval is refused.\n</agent_call>";
  return out;
}

}  // namespace pf
