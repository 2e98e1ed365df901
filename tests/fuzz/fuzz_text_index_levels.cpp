// libFuzzer entry point: FTS5 structure records (store/text_index_levels.h) as a damaged or
// foreign store file can hold them. Every input is decoded or refused without a read past its
// end, and a decoded one describes what a structure can: no more segments merging than a level
// has, none with fewer pages than segments, at most FTS5's 2,000 segments.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/text_index_levels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto levels =
      pf::decode_text_index_levels(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!levels) return 0;
  int64_t segments = 0;
  for (const pf::TextIndexLevel& l : *levels) {
    if (l.merging < 0 || l.merging > l.segments || l.pages < l.segments ||
        l.merging_pages > l.pages || l.merging_pages < l.merging)
      __builtin_trap();
    segments += l.segments;
  }
  if (segments > 2000) __builtin_trap();
  return 0;
}
