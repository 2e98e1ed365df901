// Copying a whole store into another, across backends (`pilotfish migrate`: a SQLite file into
// PostgreSQL when a team outgrows one machine, or back): repositories, files, chunks and their
// embeddings, so the copy answers exactly as the original without indexing or embedding again.
// Refusals of embedding models are not copied (the next run tries those chunks again).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "store/store.h"

namespace pf {

struct MigrateReport {
  int64_t repositories = 0, files = 0, chunks = 0, embeddings = 0;
};

// Copies every repository of from into to, which must hold none (throws UsageError naming what
// it holds). Holds to's writer lock throughout (BusyError when an indexer writes it) and writes
// one transaction per file, then the embeddings in batches; a copy that fails half-way leaves to
// with whole files only, and running it again needs an empty store. on_file, when given, is told
// after each file (files done, files in all). Throws pf::Error from either store.
MigrateReport migrate_store(Store& from, Store& to,
                            const std::function<void(int64_t, int64_t)>& on_file = {});

}  // namespace pf
