// The agents and skills a channel runs with, and their commands (see agent_shelf.h).
#include "bridge/agent_shelf.h"

#include <algorithm>
#include <functional>

#include "core/text.h"

namespace pf {

namespace {

std::string problems_text(const std::vector<DefinitionProblem>& problems) {
  std::string out;
  for (const DefinitionProblem& p : problems)
    out += "\n- \u26A0\uFE0F `" + p.path + "`: " + p.message;
  return out.empty() ? out : "\n**Not loaded**" + out;
}

bool contains_name(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& n : names)
    if (ascii_lower(n) == ascii_lower(name)) return true;
  return false;
}

}  // namespace

AgentShelf::AgentShelf(StateStore& state, DirsFor dirs_for)
    : state_(state), dirs_for_(std::move(dirs_for)) {
  if (!dirs_for_)
    dirs_for_ = [](const std::string& root) { return Dirs{agent_dirs(root), skill_dirs(root)}; };
}

std::shared_ptr<const AgentCatalog> AgentShelf::agents(const std::string& root) {
  auto& slot = agents_[root];
  if (!slot) slot = std::make_shared<const AgentCatalog>(discover_agents(dirs_for_(root).agents));
  return slot;
}

std::shared_ptr<const SkillCatalog> AgentShelf::skills(const std::string& root) {
  auto& slot = skills_[root];
  if (!slot) slot = std::make_shared<const SkillCatalog>(discover_skills(dirs_for_(root).skills));
  return slot;
}

void AgentShelf::forget_skills(const std::string& root) { skills_.erase(root); }

void AgentShelf::forget(const std::string& root) {
  agents_.erase(root);
  skills_.erase(root);
  noticed_.clear();
}

std::optional<AgentDefinition> AgentShelf::agent_of(const ChannelPrefs& prefs,
                                                    const std::string& root,
                                                    const std::string& configured,
                                                    std::string* missing) {
  missing->clear();
  std::string name = prefs.agent ? *prefs.agent : configured;
  if (name.empty()) return std::nullopt;
  auto catalog = agents(root);
  if (const AgentDefinition* a = catalog->find(name)) return *a;
  *missing = name;
  return std::nullopt;
}

std::vector<Skill> AgentShelf::active_skills(const ChannelPrefs& prefs, const std::string& root) {
  std::vector<Skill> out;
  for (const Skill& s : skills(root)->skills)
    if (!contains_name(prefs.disabled_skills, s.name)) out.push_back(s);
  return out;
}

bool AgentShelf::first_notice(const std::string& channel_key, const std::string& text) {
  return noticed_.insert(channel_key + "\n" + text).second;
}

std::string AgentShelf::list_agents(const std::string& channel_key, const std::string& root,
                                    const std::string& configured) {
  agents_.erase(root);  // a listing shows what is on disk now
  auto catalog = agents(root);
  std::string missing;
  std::optional<AgentDefinition> current =
      agent_of(state_.prefs(channel_key), root, configured, &missing);
  std::string out = "**Custom agents**";
  if (catalog->agents.empty())
    out += "\nNone here. Put `NAME.agent.md` files in `.github/agents/` or `agents/` of the "
           "workspace, or in `~/.config/pilotfish/agents/`.";
  for (const AgentDefinition& a : catalog->agents) {
    bool on = current && current->name == a.name;
    out += "\n- `" + a.name + "`" + (on ? " **(selected)**" : "") + ": " + a.description;
    if (a.tools) out += " · tools: " + (a.tools->empty() ? std::string("none") : std::to_string(a.tools->size()));
    if (!a.model.empty()) out += " · model `" + a.model + "`";
  }
  if (!missing.empty())
    out += "\n\u26A0\uFE0F The selected agent `" + missing + "` is not defined here: answers run without one.";
  out += problems_text(catalog->problems);
  return out + "\n`/agent NAME` selects one for this channel, `/agent` alone none.";
}

std::string AgentShelf::select_agent(const std::string& channel_key, const std::string& root,
                                     const std::string& configured, const std::string& name_in) {
  std::string name = trim_space(name_in);
  ChannelPrefs prefs = state_.prefs(channel_key);
  if (name.empty()) {
    prefs.agent = "";
    state_.set_prefs(channel_key, prefs);
    return configured.empty() ? "No agent: answers use the channel's own instructions."
                              : "No agent: answers use the channel's own instructions (the "
                                "configured `" + configured + "` is off here until `/agent " +
                                    configured + "`).";
  }
  agents_.erase(root);
  auto catalog = agents(root);
  const AgentDefinition* a = catalog->find(name);
  if (!a) {
    std::string known;
    for (const AgentDefinition& d : catalog->agents) known += (known.empty() ? "`" : ", `") + d.name + "`";
    return "\u274C No agent `" + name + "` here." +
           (known.empty() ? std::string(" There are none (see `/agents`).") : " The agents: " + known + ".");
  }
  prefs.agent = a->name;
  state_.set_prefs(channel_key, prefs);
  std::string out = "\U0001F916 Agent `" + a->name + "` selected: " + a->description;
  if (a->tools) {
    std::string t;
    for (const std::string& p : *a->tools) t += (t.empty() ? "`" : ", `") + p + "`";
    out += "\nTools limited to: " + (t.empty() ? std::string("none") : t);
  }
  if (!a->model.empty()) out += "\nModel: `" + a->model + "`";
  return out;
}

std::string AgentShelf::skills_command(const std::string& channel_key, const std::string& root,
                                       const std::string& args, const std::string& tools_text) {
  std::string verb = ascii_lower(args.substr(0, args.find(' ')));
  if (verb == "enable" || verb == "disable") {
    std::string names = args.find(' ') == std::string::npos ? "" : args.substr(args.find(' ') + 1);
    auto catalog = skills(root);
    std::vector<std::string> unmatched;
    std::vector<std::string> hit = match_skill_names(*catalog, names, &unmatched);
    if (trim_space(names).empty()) return "\u274C Name the skills: `/skills " + verb + " NAME…` or `all`.";
    ChannelPrefs prefs = state_.prefs(channel_key);
    std::vector<std::string>& off = prefs.disabled_skills;
    for (const std::string& n : hit) {
      auto it = std::find_if(off.begin(), off.end(),
                             [&](const std::string& o) { return ascii_lower(o) == ascii_lower(n); });
      if (verb == "disable" && it == off.end()) off.push_back(n);
      if (verb == "enable" && it != off.end()) off.erase(it);
    }
    std::sort(off.begin(), off.end());
    if (!hit.empty()) state_.set_prefs(channel_key, prefs);
    std::string out;
    if (!hit.empty()) {
      out = (verb == "enable" ? "\u2705 Enabled:" : "\U0001F6AB Disabled:");
      for (const std::string& n : hit) out += " `" + n + "`";
      out += " (from the next answer).";
    }
    for (const std::string& u : unmatched) {
      if (!out.empty()) out += '\n';
      out += "\u274C ";
      out += u;
    }
    return out;
  }
  if (!verb.empty())
    return "\u274C `/skills` takes `enable NAME…`, `disable NAME…` (or `all`), or nothing.";
  auto catalog = skills(root);
  std::vector<std::string> disabled = state_.prefs(channel_key).disabled_skills;
  std::string on, off;
  for (const Skill& s : catalog->skills) {
    std::string line = "\n- `" + s.name + "`: " + s.description;
    (contains_name(disabled, s.name) ? off : on) += line;
  }
  std::string out = "**Skills**" + (on.empty() ? std::string("\nNone active.") : on);
  if (!off.empty()) out += "\n**Disabled here**" + off;
  out += problems_text(catalog->problems);
  return out + "\n\n" + tools_text;
}

}  // namespace pf
