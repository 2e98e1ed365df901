// Error style for the whole project: failures cross component boundaries as exceptions derived
// from pf::Error, whose message is written for the person who must act on it ("what went wrong,
// what to do"). They are caught only where someone is told, or where the work is retried:
//  - the CLI's main: one line on stderr and the exit code of its type (2 usage, 3 busy, 1 else);
//  - the HTTP server's routes (api/): a 4xx/5xx JSON body, or an error chunk once a stream began;
//    the MCP server: a JSON-RPC error;
//  - a tool call (agent/, mcp/): an {"error": "..."} result the model reads and acts on;
//  - the chat bridge's turn and command: a line in the channel, the post finished;
//  - background work (index runs, schedules, memory, lease checks): logged, retried next time;
//  - retry loops (HTTP and WebSocket clients, adapters, embeddings): caught, retried, rethrown
//    when they give up;
//  - best-effort records (the audit trail, log rotation): logged once, the work goes on.
// Code below these catches third-party exceptions only to rethrow them as pf::Error with context.
#pragma once

#include <stdexcept>
#include <string>

namespace pf {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Wrong arguments or configuration: the user must change how they called us (exit code 2).
class UsageError : public Error {
 public:
  using Error::Error;
};

// The store is held by another process (exit code 3), so scripts can tell "busy" from "broken".
class BusyError : public Error {
 public:
  using Error::Error;
};

}  // namespace pf
