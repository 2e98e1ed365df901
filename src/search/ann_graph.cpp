// The HNSW graph over a store's vectors (see ann_graph.h).
#include "search/ann_graph.h"

// hnswlib 0.6.2 (Debian 12) computes a prefetch address from the slot after the last neighbour of
// a full upper-layer link list: a 4-byte read past its malloc(4k + 1) block (AddressSanitizer:
// heap-buffer-overflow in searchBaseLayer). The value only feeds _mm_prefetch, and glibc and
// jemalloc always round such a block up by at least those bytes, so it never faults or changes a
// result; without the SSE paths (NO_MANUAL_VECTORIZATION) it is gone, but building and searching
// take 2.4x as long (bench/ann_search.cpp). So sanitizer builds, which must see every other read,
// use the plain paths, and release builds the SSE ones.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <filesystem>
#include <unordered_set>

#include "core/log.h"

namespace pf {

struct AnnGraph::Impl {
  explicit Impl(int dim) : space(static_cast<size_t>(dim)) {}
  hnswlib::InnerProductSpace space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  size_t live = 0;
};

AnnGraph::~AnnGraph() = default;

std::unique_ptr<AnnGraph> AnnGraph::open(const std::string& file, int dim,
                                         const std::vector<int64_t>& rowids,
                                         const std::vector<float>& vectors,
                                         const AnnOptions& options) {
  std::unique_ptr<AnnGraph> g(new AnnGraph);
  g->impl_ = std::make_unique<Impl>(dim);
  auto& hnsw = g->impl_->hnsw;
  std::error_code ec;
  if (!file.empty() && std::filesystem::exists(file, ec)) {
    try {
      hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(&g->impl_->space, file);
      // loadIndex takes the vector size from the space; the file's row size says what it holds.
      if (hnsw->size_data_per_element_ !=
          hnsw->size_links_level0_ + hnsw->data_size_ + sizeof(hnswlib::labeltype)) {
        hnsw.reset();
      } else {
        // hnswlib 0.6.2's loadIndex counts deleted rows onto an uninitialised counter.
        hnsw->num_deleted_ = 0;
        for (hnswlib::tableint i = 0; i < hnsw->cur_element_count; ++i)
          hnsw->num_deleted_ += hnsw->isMarkedDeleted(i) ? 1 : 0;
      }
    } catch (const std::exception& e) {
      log::warn("search", "vector graph " + file + " is unreadable (" + e.what() + "); rebuilding");
      hnsw.reset();
    }
  }
  std::unordered_set<int64_t> wanted(rowids.begin(), rowids.end());
  bool changed = false;
  if (hnsw) {
    // Up to date: rows that are gone are marked deleted, new rows added.
    std::vector<int64_t> gone;
    size_t kept = 0;
    for (const auto& [label, id] : hnsw->label_lookup_) {
      bool deleted = hnsw->isMarkedDeleted(id);
      if (!wanted.count(static_cast<int64_t>(label))) {
        if (!deleted) gone.push_back(static_cast<int64_t>(label));
      } else if (!deleted) {
        ++kept;
      }
    }
    size_t added = rowids.size() - kept;
    size_t dead = hnsw->num_deleted_ + gone.size();
    if (dead * 5 > hnsw->cur_element_count + added) {
      hnsw.reset();  // a fifth of it deleted: a new graph is better connected and smaller
    } else if (!options.may_build && added + gone.size() > options.max_search_changes) {
      hnsw.reset();  // too much to add on a search's time: the next index run does it
    } else {
      for (int64_t r : gone) hnsw->markDelete(static_cast<hnswlib::labeltype>(r));
      if (hnsw->cur_element_count + added > hnsw->max_elements_)
        hnsw->resizeIndex(hnsw->cur_element_count + added + added / 4 + 16);
      for (size_t i = 0; i < rowids.size(); ++i) {
        auto it = hnsw->label_lookup_.find(static_cast<hnswlib::labeltype>(rowids[i]));
        if (it != hnsw->label_lookup_.end() && !hnsw->isMarkedDeleted(it->second)) continue;
        if (it != hnsw->label_lookup_.end()) hnsw->unmarkDelete(static_cast<hnswlib::labeltype>(rowids[i]));
        hnsw->addPoint(&vectors[i * static_cast<size_t>(dim)],
                       static_cast<hnswlib::labeltype>(rowids[i]));
      }
      changed = added > 0 || !gone.empty();
      g->how_opened_ = changed ? 2 : 1;
    }
  }
  if (!hnsw && !options.may_build) return nullptr;
  if (!hnsw) {
    hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(
        &g->impl_->space, std::max<size_t>(rowids.size(), 1), static_cast<size_t>(options.m),
        static_cast<size_t>(options.ef_construction));
    for (size_t i = 0; i < rowids.size(); ++i)
      hnsw->addPoint(&vectors[i * static_cast<size_t>(dim)],
                     static_cast<hnswlib::labeltype>(rowids[i]));
    changed = true;
    g->how_opened_ = 0;
  }
  hnsw->setEf(static_cast<size_t>(options.ef_search));
  g->impl_->live = rowids.size();
  if (changed && !file.empty()) {
    // Written to a temporary name and renamed, so a reader never loads half a graph.
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
    std::string tmp = file + ".tmp";
    try {
      hnsw->saveIndex(tmp);
      std::filesystem::rename(tmp, file, ec);
      if (ec) log::warn("search", "cannot write vector graph " + file + ": " + ec.message());
    } catch (const std::exception& e) {
      log::warn("search", "cannot write vector graph " + file + ": " + e.what());
    }
  }
  return g;
}

std::vector<AnnGraph::Hit> AnnGraph::search(const float* query, size_t k) const {
  if (k == 0 || impl_->live == 0) return {};
  auto found = impl_->hnsw->searchKnn(query, std::min(k, impl_->live));
  std::vector<Hit> out;
  out.reserve(found.size());
  while (!found.empty()) {
    out.push_back(Hit{static_cast<int64_t>(found.top().second), 1.0f - found.top().first});
    found.pop();
  }
  std::sort(out.begin(), out.end(), [](const Hit& a, const Hit& b) {
    return a.cosine != b.cosine ? a.cosine > b.cosine : a.rowid < b.rowid;
  });
  return out;
}

void AnnGraph::set_ef(int ef) { impl_->hnsw->setEf(static_cast<size_t>(std::max(ef, 1))); }

size_t AnnGraph::size() const { return impl_->live; }

size_t AnnGraph::memory_bytes() const {
  const auto& h = *impl_->hnsw;
  size_t upper = 0;
  for (size_t i = 0; i < h.cur_element_count; ++i)
    upper += static_cast<size_t>(h.element_levels_[i]) * h.size_links_per_element_;
  return h.max_elements_ * h.size_data_per_element_ + upper +
         h.label_lookup_.size() * (sizeof(hnswlib::labeltype) + sizeof(hnswlib::tableint) + 16);
}

}  // namespace pf
