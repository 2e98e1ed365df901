// Internal to the SQLite store: the lock that keeps a second indexer out of a store file, an
// flock(2) on `<db>.lock` beside it. The kernel releases it however the holder dies, so a killed
// indexer never leaves a store locked; the holder's pid is written in the file for the message a
// second indexer gets.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace pf {

// Takes the lock of the store file at db_path, without waiting. Throws pf::BusyError naming the
// holder's pid when another open file description holds it (another process, or this one
// through another call), pf::Error when the lock file cannot be opened. Released when the
// returned object is destroyed.
std::unique_ptr<WriterLock> lock_store_file(const std::string& db_path);

}  // namespace pf
