// What pilotfish keeps as its own on disk — stores and their side files, the bridge's state, the
// config, attachments, MCP configs with secrets, the workspace's .env — as one list that every
// tool an agent runs consults: the host-side tools refuse these paths, and the bubblewrap
// sandbox hides the folders that hold them (sandbox.h). The list is built in one place
// (runtime/own_paths.h); nothing else decides what is pilotfish's.
#pragma once

#include <string>
#include <vector>

namespace pf {

class OwnFiles {
 public:
  // Adds a store file with everything SQLite and pilotfish make beside it, which are all named
  // after it: -wal, -shm, -journal, .lock, .lease-*, the .vectors/ folder; that is, the file
  // and every path in its folder whose name is the file's followed by '-' or '.'. A database
  // URL (scheme://) adds nothing.
  void add_store(const std::string& path);
  // Adds one file, or one folder with everything under it. Relative paths are taken from the
  // current directory; symlinks in the existing part are resolved. Empty paths are ignored.
  void add_file(const std::string& path);
  void add_folder(const std::string& path);
  // Makes a folder under an own folder reachable again (the current channel's attachments):
  // readable by the host tools and bound read-only into the sandbox.
  void expose(const std::string& folder);

  // Whether the absolute, symlink-free path is one of the own paths or lies under an own
  // folder, and is not under an exposed folder.
  bool covers(const std::string& path) const;
  // Whether an exposed folder is path or lies under it (a listing keeps path so it can be found).
  bool exposes_under(const std::string& path) const;

  struct Entry {
    enum Kind { kFile, kFolder, kStore };
    std::string path;  // absolute
    Kind kind = kFile;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<std::string>& exposed() const { return exposed_; }

 private:
  void add(const std::string& path, Entry::Kind kind);

  std::vector<Entry> entries_;
  std::vector<std::string> exposed_;
};

// The absolute form of path: relative to the current directory, "." and ".." folded, and the
// longest existing prefix's symlinks resolved (the rest need not exist yet).
std::string absolute_path(const std::string& path);

}  // namespace pf
