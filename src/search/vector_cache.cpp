// The shared vector index cache (see vector_cache.h).
#include "search/vector_cache.h"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

namespace pf {
namespace {

struct Entry {
  int64_t generation = -1;
  std::shared_ptr<const VectorIndex> index;
};

std::mutex g_mu;
std::map<std::pair<std::string, std::string>, Entry> g_cache;  // (store path, model)
std::atomic<int64_t> g_loads{0};

}  // namespace

std::shared_ptr<const VectorIndex> shared_vector_index(Store& store, const std::string& model) {
  auto key = std::make_pair(store.path(), model);
  int64_t generation = store.generation();
  {
    std::lock_guard lock(g_mu);
    auto it = g_cache.find(key);
    if (it != g_cache.end() && it->second.generation == generation) return it->second.index;
  }
  // Loaded outside the lock: searches of other stores and models go on meanwhile. Two threads
  // may both load after a change; the second result simply replaces the first.
  auto index = std::make_shared<const VectorIndex>(VectorIndex::load(store, model));
  ++g_loads;
  std::lock_guard lock(g_mu);
  Entry& e = g_cache[key];
  if (generation >= e.generation) e = Entry{generation, index};
  return index;
}

int64_t vector_index_loads() {
  return g_loads.load();
}

}  // namespace pf
