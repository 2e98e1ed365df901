// Chunk content as zstd frames against per-repository dictionaries, and the pf_text SQL
// function that gives every reader the text back.
#include "store/content_codec.h"

#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>

#include <cstring>
#include <map>
#include <numeric>

#include "core/error.h"
#include "store/sqlite_util.h"

namespace pf {
namespace {

constexpr uint32_t kDictionaryMagic = 0xEC30A437;

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct DDictDeleter {
  void operator()(ZSTD_DDict* d) const { ZSTD_freeDDict(d); }
};

ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  return dctx.get();
}

std::string decompress_with(std::string_view frame, const ZSTD_DDict* ddict) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > (1u << 30))
    throw Error("a compressed chunk is damaged (no content size)");
  std::string out(static_cast<size_t>(size), '\0');
  size_t n = ddict ? ZSTD_decompress_usingDDict(thread_dctx(), out.data(), out.size(),
                                                frame.data(), frame.size(), ddict)
                   : ZSTD_decompressDCtx(thread_dctx(), out.data(), out.size(), frame.data(),
                                         frame.size());
  if (ZSTD_isError(n) || n != out.size())
    throw Error(std::string("a compressed chunk is damaged: ") +
                (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"));
  return out;
}

// The dictionaries one connection has met, by id, read from the store when a frame first
// names one. A connection is used by one thread at a time, as SQLite requires of it.
class DictionaryCache {
 public:
  const ZSTD_DDict* get(sqlite3* db, uint32_t id) {
    auto it = dicts_.find(id);
    if (it != dicts_.end()) return it->second.get();
    sqlite::Statement st(db, "SELECT dictionary FROM content_dictionaries WHERE id = ?");
    st.bind(1, static_cast<int64_t>(id - kFirstContentDictionaryId));
    if (!st.step()) throw Error("a compressed chunk names dictionary " + std::to_string(id) +
                                ", which the store does not hold");
    std::string dict = st.text(0);
    ZSTD_DDict* d = ZSTD_createDDict(dict.data(), dict.size());
    if (!d) throw Error("dictionary " + std::to_string(id) + " is damaged");
    return dicts_.emplace(id, std::unique_ptr<ZSTD_DDict, DDictDeleter>(d)).first->second.get();
  }

 private:
  std::map<uint32_t, std::unique_ptr<ZSTD_DDict, DDictDeleter>> dicts_;
};

void pf_text(sqlite3_context* ctx, int, sqlite3_value** argv) {
  sqlite3_value* v = argv[0];
  if (sqlite3_value_type(v) != SQLITE_BLOB) {
    sqlite3_result_value(ctx, v);
    return;
  }
  std::string_view frame(static_cast<const char*>(sqlite3_value_blob(v)),
                         static_cast<size_t>(sqlite3_value_bytes(v)));
  try {
    uint32_t id = frame_dictionary_id(frame);
    auto* cache = static_cast<DictionaryCache*>(sqlite3_user_data(ctx));
    const ZSTD_DDict* dict = id ? cache->get(sqlite3_context_db_handle(ctx), id) : nullptr;
    std::string text = decompress_with(frame, dict);
    sqlite3_result_text64(ctx, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  } catch (const std::exception& e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

}  // namespace

std::string train_content_dictionary(const std::vector<std::string_view>& samples, uint32_t id,
                                     size_t max_bytes) {
  std::string flat;
  std::vector<size_t> sizes;
  for (std::string_view s : samples) {
    if (s.size() < 8) continue;
    flat.append(s);
    sizes.push_back(s.size());
  }
  // zstd wants about 100 times the dictionary's size in samples; far less trains noise.
  if (sizes.size() < 64 || flat.size() < 8 * max_bytes) return {};
  ZDICT_fastCover_params_t p;
  std::memset(&p, 0, sizeof p);
  p.d = 8;
  p.steps = 4;
  p.nbThreads = 1;  // the same samples give the same dictionary
  p.zParams.compressionLevel = 3;
  p.zParams.dictID = id;
  std::string dict(max_bytes, '\0');
  size_t n = ZDICT_optimizeTrainFromBuffer_fastCover(dict.data(), dict.size(), flat.data(),
                                                     sizes.data(),
                                                     static_cast<unsigned>(sizes.size()), &p);
  if (ZDICT_isError(n)) return {};
  dict.resize(n);
  return dict;
}

uint32_t content_dictionary_id(std::string_view dictionary) {
  if (dictionary.size() < 8) return 0;
  uint32_t magic;
  std::memcpy(&magic, dictionary.data(), 4);
  if (magic != kDictionaryMagic) return 0;
  return ZDICT_getDictID(dictionary.data(), dictionary.size());
}

uint32_t frame_dictionary_id(std::string_view frame) {
  return ZSTD_getDictID_fromFrame(frame.data(), frame.size());
}

struct ContentCompressor::Dict {
  std::unique_ptr<ZSTD_CDict, size_t (*)(ZSTD_CDict*)> cdict{nullptr, ZSTD_freeCDict};
};

ContentCompressor::ContentCompressor(const std::string& dictionary, int level)
    : dict_(std::make_unique<Dict>()), id_(content_dictionary_id(dictionary)) {
  if (id_ == 0) throw Error("not a zstd dictionary");
  dict_->cdict.reset(ZSTD_createCDict(dictionary.data(), dictionary.size(), level));
  if (!dict_->cdict) throw Error("cannot load the content dictionary");
}

ContentCompressor::~ContentCompressor() = default;

bool ContentCompressor::compress(std::string* text) const {
  if (text->size() < 64) return false;
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  std::string frame(ZSTD_compressBound(text->size()), '\0');
  size_t n = ZSTD_compress_usingCDict(cctx.get(), frame.data(), frame.size(), text->data(),
                                      text->size(), dict_->cdict.get());
  if (ZSTD_isError(n) || n > text->size() - text->size() / 8) return false;
  frame.resize(n);
  frame.shrink_to_fit();
  *text = std::move(frame);
  return true;
}

std::string decompress_content(std::string_view frame, std::string_view dictionary) {
  uint32_t want = frame_dictionary_id(frame);
  if (want != content_dictionary_id(dictionary))
    throw Error("a compressed chunk names dictionary " + std::to_string(want) + ", not " +
                std::to_string(content_dictionary_id(dictionary)));
  if (want == 0) return decompress_with(frame, nullptr);
  std::unique_ptr<ZSTD_DDict, DDictDeleter> d(
      ZSTD_createDDict(dictionary.data(), dictionary.size()));
  if (!d) throw Error("the content dictionary is damaged");
  return decompress_with(frame, d.get());
}

void register_content_functions(sqlite3* db) {
  auto* cache = new DictionaryCache();
  int rc = sqlite3_create_function_v2(
      db, "pf_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, cache, pf_text, nullptr, nullptr,
      [](void* p) { delete static_cast<DictionaryCache*>(p); });
  if (rc != SQLITE_OK) throw Error(std::string("cannot register pf_text: ") + sqlite3_errmsg(db));
}

}  // namespace pf
