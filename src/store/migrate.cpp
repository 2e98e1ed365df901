// Store to store copies (see migrate.h).
#include "store/migrate.h"

#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace pf {

MigrateReport migrate_store(Store& from, Store& to,
                            const std::function<void(int64_t, int64_t)>& on_file) {
  StoreStats target = to.stats();
  if (!target.repositories.empty())
    throw UsageError(to.path() + " already holds " + std::to_string(target.repositories.size()) +
                     " repositor" + (target.repositories.size() == 1 ? "y" : "ies") +
                     "; migrate into an empty store");
  auto lock = to.acquire_writer_lock();
  StoreStats source = from.stats();
  MigrateReport report;
  int64_t total = 0;
  for (const RepositoryInfo& r : source.repositories) total += r.files;
  std::unordered_map<int64_t, int64_t> rowid;  // from's chunk -> to's
  for (const RepositoryInfo& r : source.repositories) {
    int64_t repo = to.ensure_repository(r.root);
    ++report.repositories;
    for (const FileRecord& file : from.list_files(r.id)) {
      std::vector<StoredChunk> stored = from.file_chunks(r.id, file.path);
      std::vector<Chunk> chunks;
      chunks.reserve(stored.size());
      for (const StoredChunk& s : stored) chunks.push_back(s.chunk);
      to.begin_batch();
      try {
        to.replace_file(repo, file, chunks);
        to.commit_batch();
      } catch (...) {
        to.rollback_batch();
        throw;
      }
      // Chunks come back in the order they were written, so the i-th is the i-th.
      std::vector<StoredChunk> written = to.file_chunks(repo, file.path);
      for (size_t i = 0; i < stored.size() && i < written.size(); ++i)
        rowid[stored[i].rowid] = written[i].rowid;
      ++report.files;
      report.chunks += static_cast<int64_t>(chunks.size());
      if (on_file) on_file(report.files, total);
    }
    to.begin_batch();
    to.mark_indexed(repo, from.chunker_version(r.id), r.commit);
    to.commit_batch();
  }
  for (const auto& by_model : source.embeddings_by_model) {
    const std::string& model = by_model.first;  // not a structured binding: clang 14 cannot capture one
    EmbeddingMatrix m = from.load_embeddings(model);
    const size_t dim = static_cast<size_t>(m.dim);
    std::vector<std::pair<int64_t, std::vector<float>>> batch;
    auto flush = [&] {
      if (batch.empty()) return;
      to.begin_batch();
      try {
        to.set_embeddings(model, batch);
        to.commit_batch();
      } catch (...) {
        to.rollback_batch();
        throw;
      }
      report.embeddings += static_cast<int64_t>(batch.size());
      batch.clear();
    };
    for (size_t i = 0; i < m.rowids.size(); ++i) {
      auto it = rowid.find(m.rowids[i]);
      if (it == rowid.end()) continue;
      batch.emplace_back(it->second, std::vector<float>(m.values.begin() + static_cast<std::ptrdiff_t>(i * dim),
                                                        m.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim)));
      if (batch.size() == 500) flush();
    }
    flush();
  }
  return report;
}

}  // namespace pf
