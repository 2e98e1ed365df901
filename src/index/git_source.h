// Repositories given by git URL (`pilotfish index URL`, server.repository, a channel's
// workingDirectory): cloned once into the clone folder, shallow and on one branch, then fetched
// and moved forward before each re-index when that loses nothing local. Also the commit a work
// tree is at, read from .git without running git (what `pilotfish stats` shows). The "git"
// section of the config (including this header registers it):
//
//   "git": {"cloneDir": "~/.local/share/pilotfish/workspaces/git", "timeoutSeconds": 1800,
//           "tokenEnv": {"github.com": "GITHUB_TOKEN", "gitlab.example.com": "GITLAB_TOKEN"}}
//
// A token is read from the named variable when git runs and sent to that host only, in an
// Authorization header git gets through its environment: never on a command line, in the
// clone's .git/config, or in a message. git honours http_proxy/https_proxy/no_proxy itself.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/config.h"

namespace pf {

struct GitConfig : ConfigSection {
  std::string clone_dir;  // empty: default_data_dir()/workspaces/git
  int64_t timeout_seconds = 1800;  // one git command (a first clone of a big repository is slow)
  std::map<std::string, std::string> token_env;  // host -> variable name
};

// The config's section (its defaults when the file has none).
const GitConfig& git_config(const Config& config);

struct GitSource {
  std::string url;     // without "#branch"
  std::string host;    // lower case; "" for file:// URLs
  std::string branch;  // empty: the remote's default branch
};

// Whether text names a remote repository rather than a folder: https://, http://, ssh://,
// git://, file:// URLs and scp-like user@host:path.
bool is_git_url(std::string_view text);

// Parses "URL" or "URL#branch"; branch, when not empty, wins over the fragment. Throws
// UsageError for what is not a git URL, a URL with a password in it (name a token variable in
// git.tokenEnv instead) or a branch git would refuse.
GitSource parse_git_source(const std::string& text, const std::string& branch = "");

// Where the clone of source lives under clone_dir: host/path of the URL without ".git" (each
// part cut to letters, digits, '.', '-' and '_'), and "@branch" when a branch is named.
std::string clone_folder(const GitSource& source, const std::string& clone_dir);

struct GitSync {
  std::string dir;     // the work tree
  std::string commit;  // HEAD after the sync (40 hex digits)
  std::string before;  // HEAD before it; empty when it was cloned now
  bool cloned = false;
  // Set when the work tree was left where it was, and why (local changes in the way, commits
  // made in it, the fetch failed): it is indexed as it is.
  std::string warning;
};

// Clones source into dir when dir does not exist, else fetches the branch and moves the work
// tree to it when HEAD is still the last fetched commit and no local change is in the way.
// Blocking (runs git); callable from several threads for different dirs. Throws pf::Error when
// git is missing, the clone fails (git's message, never a token) or dir holds another
// repository than source.url.
GitSync sync_checkout(const GitSource& source, const std::string& dir, const GitConfig& config);

// The commit the git work tree holding dir is at (walking up to its .git, a linked worktree's
// or submodule's "gitdir:" file followed, loose and packed refs read), or "" when dir is in no
// work tree or HEAD names no commit yet. Reads files only; never throws.
std::string git_head(const std::string& dir);

bool register_git_config();
inline const bool kGitConfigRegistered = register_git_config();

}  // namespace pf
