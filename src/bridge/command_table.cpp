// Splitting a slash command from its arguments (see command_table.h).
#include "bridge/command_table.h"

namespace pf {

std::optional<CommandCall> split_command(const std::string& text) {
  if (text.size() < 2 || text[0] != '/') return std::nullopt;
  size_t space = text.find_first_of(" \t\n");
  CommandCall c;
  c.name = ascii_lower(text.substr(1, space == std::string::npos ? std::string::npos : space - 1));
  if (space != std::string::npos) {
    size_t b = text.find_first_not_of(" \t\n", space);
    if (b != std::string::npos) c.args = text.substr(b);
  }
  return c;
}

}  // namespace pf
