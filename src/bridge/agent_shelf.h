// The custom agents and skills each workspace offers (agent/custom_agents.h, agent/skills.h),
// read once per workspace and kept until /reload, and which of them a channel runs with: its
// stored /agent choice over the configured default, and every skill but those /skills disabled
// there. It also writes the replies of /agents, /agent and /skills.
//
// Threads: the bridge's network thread only. The state store must outlive the shelf. Catalogs
// are shared and immutable: a turn keeps what it was given while /reload replaces them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/custom_agents.h"
#include "agent/skills.h"
#include "bridge/state_store.h"

namespace pf {

class AgentShelf {
 public:
  // dirs_for: the agent and skill folders of a workspace (tests point them elsewhere); unset:
  // agent_dirs and skill_dirs.
  struct Dirs {
    std::vector<std::string> agents, skills;
  };
  using DirsFor = std::function<Dirs(const std::string& root)>;
  explicit AgentShelf(StateStore& state, DirsFor dirs_for = {});

  // The workspace's catalogs, read on first use and then kept.
  std::shared_ptr<const AgentCatalog> agents(const std::string& root);
  std::shared_ptr<const SkillCatalog> skills(const std::string& root);
  // Read again at next use: the skills (/reload skills), or both (/reload).
  void forget_skills(const std::string& root);
  void forget(const std::string& root);

  // The agent a channel runs with: its stored /agent choice (prefs.agent, "" for none), else
  // configured. *missing: a chosen or configured name that no file of the workspace defines
  // (the channel then runs with none), else empty.
  std::optional<AgentDefinition> agent_of(const ChannelPrefs& prefs, const std::string& root,
                                          const std::string& configured, std::string* missing);
  // The skills a channel runs with: the workspace's, less those its prefs disable.
  std::vector<Skill> active_skills(const ChannelPrefs& prefs, const std::string& root);

  // Whether to tell the channel about a problem now: true once per channel and text (until
  // forget), so a broken setting is said once, not at every turn.
  bool first_notice(const std::string& channel_key, const std::string& text);

  // /agents: each agent with its description and source, the channel's marked, then the files
  // that did not load. Re-reads the workspace's agents first.
  std::string list_agents(const std::string& channel_key, const std::string& root,
                          const std::string& configured);
  // /agent NAME selects (stored for the channel); /agent alone deselects. The reply.
  std::string select_agent(const std::string& channel_key, const std::string& root,
                           const std::string& configured, const std::string& name);
  // /skills: active and disabled skills with the files that did not load, then tools_text (the
  // tools and MCP servers offered, written by the caller). /skills enable|disable NAMES|all
  // changes the channel's disabled list and says what changed.
  std::string skills_command(const std::string& channel_key, const std::string& root,
                             const std::string& args, const std::string& tools_text);

 private:
  StateStore& state_;
  DirsFor dirs_for_;
  std::map<std::string, std::shared_ptr<const AgentCatalog>> agents_;  // by workspace root
  std::map<std::string, std::shared_ptr<const SkillCatalog>> skills_;
  std::set<std::string> noticed_;  // "channel key\ntext"
};

}  // namespace pf
