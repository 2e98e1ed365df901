// Chunk content kept compressed: zstd frames against a dictionary trained once per repository
// from its own files, so a large store's text takes about 2.7x less room (issue 25: the Linux
// tree's chunks are 1 GB of text, the larger part of its store). A compressed row's `content`
// is a BLOB holding one frame that names its dictionary by id; a plain row's is TEXT. Readers
// never see the difference: every SQL read of the column goes through pf_text(content), which
// register_content_functions adds to a connection.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

// Dictionary ids are the store's row id plus this (ids below 32768 are zstd's reserved range).
inline constexpr uint32_t kFirstContentDictionaryId = 32768;

// A dictionary of at most max_bytes trained from samples, with the given id; deterministic for
// the same samples. Returns "" when the samples are too few or too small to train one.
std::string train_content_dictionary(const std::vector<std::string_view>& samples, uint32_t id,
                                     size_t max_bytes = 64 * 1024);

// The id a dictionary's header names (0 when it is not a zstd dictionary).
uint32_t content_dictionary_id(std::string_view dictionary);

// Compresses chunk content against one dictionary. Thread-safe: each thread compresses with a
// context of its own. Throws pf::Error if the dictionary is not one.
class ContentCompressor {
 public:
  explicit ContentCompressor(const std::string& dictionary, int level = 3);
  ~ContentCompressor();
  ContentCompressor(const ContentCompressor&) = delete;
  ContentCompressor& operator=(const ContentCompressor&) = delete;

  // Replaces *text with its frame and returns true when that saves at least an eighth of it;
  // otherwise leaves it as it is (short or incompressible text stays text).
  bool compress(std::string* text) const;
  uint32_t dictionary_id() const { return id_; }

 private:
  struct Dict;
  std::unique_ptr<Dict> dict_;
  uint32_t id_ = 0;
};

// The text of a frame made by ContentCompressor, given its dictionary (null for a frame that
// names none). Throws pf::Error if the frame is damaged or names another dictionary.
std::string decompress_content(std::string_view frame, std::string_view dictionary);

// The dictionary id a frame names (0 for none, or if it is not a zstd frame).
uint32_t frame_dictionary_id(std::string_view frame);

// Registers pf_text(x) on a store connection: x itself for TEXT or NULL, the decompressed text
// for a compressed BLOB (dictionaries read from the store's content_dictionaries table as
// frames name them, and kept for the connection's life). A damaged frame is an SQL error.
void register_content_functions(sqlite3* db);

}  // namespace pf
