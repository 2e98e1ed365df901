// Counting a SQLite store for `pilotfish stats` (see sqlite_stats.h).
#include "store/sqlite_stats.h"

#include "store/sqlite_util.h"

namespace pf {

void count_sqlite_store(sqlite3* db, StoreStats* s) {
  using sqlite::Statement;
  {
    Statement st(db, "PRAGMA user_version");
    if (st.step()) s->schema_version = static_cast<int>(st.int64(0));
  }
  {
    Statement st(db, "SELECT count(*) FROM files");
    if (st.step()) s->files = st.int64(0);
  }
  {
    Statement st(db, "SELECT chunkType, count(*) FROM copilot_code_chunks GROUP BY 1");
    while (st.step()) {
      s->chunks_by_type[st.text(0)] = st.int64(1);
      s->chunks += st.int64(1);
    }
  }
  {
    Statement st(db,
                 "SELECT coalesce(language,'?'), count(*) FROM copilot_code_chunks GROUP BY 1");
    while (st.step()) s->chunks_by_language[st.text(0)] = st.int64(1);
  }
  {
    Statement st(db,
                 "SELECT embeddingModel, count(*) FROM copilot_code_chunks WHERE embedding IS "
                 "NOT NULL GROUP BY 1");
    while (st.step()) s->embeddings_by_model[st.text(0)] = st.int64(1);
  }
  {
    Statement st(db, "SELECT model, count(*) FROM embedding_failures GROUP BY 1");
    while (st.step()) s->embedding_failures_by_model[st.text(0)] = st.int64(1);
  }
  {
    Statement st(db,
                 "SELECT fallback, count(*) FROM files WHERE fallback IS NOT NULL GROUP BY 1");
    while (st.step()) s->fallbacks_by_reason[st.text(0)] = st.int64(1);
  }
  {
    Statement st(db,
                 "SELECT count(*), coalesce(sum(length(content)),0) FROM copilot_code_chunks "
                 "WHERE typeof(content) = 'blob'");
    if (st.step()) s->compressed_chunks = st.int64(0), s->compressed_bytes = st.int64(1);
  }
}

}  // namespace pf
