// The API's one error type: an HTTP status, a stable machine-readable code and a sentence for
// people. Handlers throw it; the router answers {"error": code, "message": message}, which is
// what the Activepieces web client parses out of a failed request.
#pragma once

#include <string>

#include "core/error.h"

namespace pf {

class ApiError : public Error {
 public:
  ApiError(int status, std::string code, const std::string& message)
      : Error(message), status_(status), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string code_;
};

}  // namespace pf
