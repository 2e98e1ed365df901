// libFuzzer entry point: the readers of the PostgreSQL store's postings blocks and chunk lengths
// (store/pg_postings.h) on arbitrary bytes, looking for a term taken from the input's middle.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "store/pg_postings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  pf::PgTermPostings p;
  try {
    pf::pg_for_each_term(bytes, [](std::string_view term, pf::PgTermPostings& t) {
      if (term.empty() || t.postings.size() != static_cast<size_t>(t.adds + t.tombstones))
        __builtin_trap();
    });
  } catch (const pf::Error&) {
  }
  for (std::string_view term : {std::string_view("a"), bytes.substr(size / 2, 3)}) {
    try {
      pf::pg_find_term(bytes, term, &p);
    } catch (const pf::Error&) {
    }
  }
  std::vector<std::pair<int64_t, uint32_t>> lengths;
  try {
    pf::pg_decode_lengths(bytes, &lengths);
  } catch (const pf::Error&) {
  }
  return 0;
}
