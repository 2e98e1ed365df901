// Small file-system helpers shared by the indexer, the store and the CLI.
#pragma once

#include <string>

namespace pf {

// Reads a whole file; throws pf::Error naming the path and the OS reason on failure.
std::string read_file(const std::string& path);

// Writes content to path through a temporary file in the same directory and a rename, so a
// reader (or a crash) never sees half a file; creates missing parent directories. Throws
// pf::Error naming the path and the OS reason.
void write_file_atomic(const std::string& path, const std::string& content);

// The executable a program name runs: the name itself when it has a '/' (and is executable),
// else the first executable of that name on $PATH; empty when there is none.
std::string find_in_path(const std::string& name);

// The user's data directory for pilotfish: $XDG_DATA_HOME/pilotfish or ~/.local/share/pilotfish.
std::string default_data_dir();

// The user's home directory ($HOME); empty when unset.
std::string home_dir();

// The user's configuration directory for pilotfish: $XDG_CONFIG_HOME/pilotfish or
// ~/.config/pilotfish; empty when neither variable is set.
std::string user_config_dir();

}  // namespace pf
