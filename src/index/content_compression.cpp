// The training sample of a repository's content dictionary, and the decision to compress.
#include "index/content_compression.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "index/file_filter.h"

namespace pf {
namespace {

// About 3 MB of chunks: zstd's rule of thumb is 100 times the dictionary; past half of it a
// larger sample gained the Linux tree's chunks 1.5% while its training took twice as long.
constexpr size_t kSampleBytes = size_t{3} << 20;
constexpr size_t kSampleFiles = 1500;             // spread over the tree, not its first folder
constexpr int64_t kLargestSampledFile = 256 << 10;

std::vector<Chunk> sample_chunks(const std::string& root,
                                 const std::vector<const WalkEntry*>& to_index,
                                 const ChunkLimits& limits) {
  std::vector<Chunk> sample;
  size_t bytes = 0;
  size_t stride = std::max<size_t>(1, to_index.size() / kSampleFiles);
  for (size_t i = 0; i < to_index.size() && bytes < kSampleBytes; i += stride) {
    const WalkEntry& e = *to_index[i];
    if (e.size > kLargestSampledFile) continue;
    std::string content;
    try {
      content = read_file(root + "/" + e.rel);
    } catch (const Error&) {
      continue;  // the run itself says why
    }
    if (classify_content(&content) != SkipReason::kNone) continue;
    for (Chunk& c : chunk_file(e.rel, detect_language(e.rel), content, limits)) {
      bytes += c.content.size();
      sample.push_back(std::move(c));
    }
  }
  return sample;
}

}  // namespace

std::unique_ptr<ContentCompressor> content_compressor(Store& store, int64_t repo,
                                                      const std::string& root,
                                                      const std::vector<const WalkEntry*>& to_index,
                                                      const IndexOptions& options) {
  if (to_index.empty() || !store.keeps_compressed_content() ||
      options.compress == ContentCompression::kNever)
    return nullptr;
  std::string dictionary = store.content_dictionary(repo);
  if (dictionary.empty()) {
    int64_t bytes = 0;
    for (const WalkEntry* e : to_index) bytes += e->size;
    if (options.compress == ContentCompression::kAuto && bytes < options.compress_from_bytes)
      return nullptr;
    std::vector<Chunk> sample = sample_chunks(root, to_index, options.limits);
    std::vector<std::string_view> texts;
    texts.reserve(sample.size());
    for (const Chunk& c : sample) texts.push_back(c.content);
    store.begin_batch();
    try {
      dictionary = train_content_dictionary(texts, store.next_content_dictionary_id());
      if (!dictionary.empty()) store.add_content_dictionary(repo, dictionary);
      store.commit_batch();
    } catch (...) {
      store.rollback_batch();
      throw;
    }
    if (dictionary.empty()) {
      log::info("index", "chunk content stays text: too little of it to train a dictionary");
      return nullptr;
    }
    log::info("index", "chunk content compressed with a " +
                           std::to_string(dictionary.size() / 1024) +
                           " KiB dictionary trained on " + std::to_string(sample.size()) +
                           " chunks");
  }
  return std::make_unique<ContentCompressor>(dictionary);
}

}  // namespace pf
