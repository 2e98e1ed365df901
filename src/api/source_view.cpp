// GET /v1/file (see app.h): the lines a citation points at, read as the model's read_file tool
// reads them, so the same rules hold: inside the repository only (symlinks resolved), never a
// secret file or a file holding key material, never binary, at most the tool's line and byte caps.
#include "api/app.h"

#include <climits>

#include "agent/tools.h"
#include "api/api_error.h"

namespace pf {

asio::awaitable<int> App::source_view(ServerRequest& req, ServerResponse& res) {
  if (!repo_)
    throw ApiError(409, "no_repository", "the server has no repository: start it with --repo DIR");
  auto p = req.query.find("path");
  if (p == req.query.end() || p->second.empty())
    throw ApiError(400, "missing_path", "give the file as ?path=lib/file.js (relative to the repository)");
  std::optional<int> start = query_int(req, "start", 1, INT_MAX), end = query_int(req, "end", 1, INT_MAX);
  if (start && end && *end < *start) throw ApiError(400, "invalid_end", "end must not be before start");
  std::string path = p->second;
  json file;
  // A file read off the network thread, like every other piece of blocking work.
  co_await runtime_.workspace().run([&](Store&) { file = repo_->tools->read_file(path, start, end); });
  if (file.contains("error")) throw ApiError(404, "file_not_readable", file["error"].get<std::string>());
  json body = {{"path", path},
               {"startLine", file["startLine"]},
               {"endLine", file["endLine"]},
               {"lineCount", file["lineCount"]},
               {"content", file["content"]},
               {"truncated", file.value("truncated", false)}};
  co_return co_await send_json(res, 200, body);
}

}  // namespace pf
