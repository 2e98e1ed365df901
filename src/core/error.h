// Error style for the whole project: failures cross component boundaries as exceptions derived
// from pf::Error, whose message is written for the person who must act on it ("what went wrong,
// what to do"). Boundaries (the CLI's main, later the HTTP server) catch them and turn them into
// a one-line message with a non-zero exit code or a 4xx/5xx JSON body. Nothing else catches.
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
