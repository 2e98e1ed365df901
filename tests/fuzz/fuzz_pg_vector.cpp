// libFuzzer entry point: the reader of PostgreSQL's binary search vectors (store/pg_search.h) on
// arbitrary bytes, looking for terms taken from the input's tail.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "store/pg_search.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> terms = {"a", std::string(bytes.substr(size / 2, 3)), ""};
  std::vector<pf::BoundedTopK::Counts> counts;
  try {
    pf::pg_vector_counts(bytes, terms, counts);
  } catch (const pf::Error&) {
  }
  return 0;
}
