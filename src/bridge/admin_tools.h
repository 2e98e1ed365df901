// An admin bot's tools (bots with "admin": true): create_project (a channel by slug, created or
// joined on the bot's platform, the person asking added, a repository cloned from a git URL or
// a fresh folder, its workspace initialised from templates, indexed, and the channel registered
// to be answered: chat_channels.h), grant_path_access / revoke_path_access (path_grants.h),
// list_agent_access and get_platform_info. Their registry entries carry the schemas and what
// each call would do, for the person's prompt: every call passes the permission engine as
// kAdmin, which asks every time (never autopilot, a rule or a remembered answer) and denies
// them to other bots. The bridge runs them (bridge_admin.cpp), on the network thread.
#pragma once

#include <optional>
#include <string>

#include "agent/tool_registry.h"

namespace pf {

struct ProjectRequest {
  std::string name;        // the channel's slug
  std::string display_name;
  std::string repository;  // a git URL; empty: a folder of its own
  std::string branch;
  std::string purpose;
  std::string team;        // a team's name or id; empty: the bot's only team
  bool is_private = false;
};

struct PathAccessRequest {
  std::string path;
  std::string mode = "read";  // "read" or "write"
  std::string bot;            // empty: the bot asked
};

// The requests from a call's arguments (JSON text): nullopt with *why when they are unusable
// (a name that is not a slug, a mode other than read or write, a repository that is not a git
// URL).
std::optional<ProjectRequest> parse_project_request(const std::string& arguments, std::string* why);
std::optional<PathAccessRequest> parse_path_access(const std::string& arguments, bool grant,
                                                   std::string* why);

// Whether a name is a channel slug both platforms take: 1-64 of a-z, 0-9, '-' and '_',
// starting with a letter or digit.
bool is_channel_slug(const std::string& name);

// Adds the five entries (kAdmin; their run() refuses: the bridge runs them).
void add_admin_tools(ToolRegistry& tools);
bool is_admin_tool(const std::string& name);

}  // namespace pf
