// libFuzzer entry point: the permission engine's shell parser and hard denies on arbitrary
// command lines (a model writes them). Each line must parse without crashing, and a line that
// parsed cleanly must say what it runs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "policy/hard_deny.h"
#include "policy/shell_command.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string line(reinterpret_cast<const char*>(data), size);
  pf::ShellParse parse = pf::parse_shell(line);
  for (const auto& c : parse.commands)
    if (c.words.empty()) __builtin_trap();  // every recorded command has its program word
  (void)pf::hard_deny(parse);
  return 0;
}
