// `pilotfish serve` and `pilotfish hash-key`: the command-line side of the HTTP server.
#include <openssl/rand.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "api/auth.h"
#include "api/copilot_server.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/error.h"
#include "core/text.h"

namespace pf::cli {

int run_serve(const ServeArgs& args) {
  Config config = load_config(args.config);
  ServeOptions options;
  options.db_path = resolve_db(args.db);
  options.repository = args.repo;
  options.listen = args.listen;
  options.no_auth = args.no_auth;
  options.workers = args.workers;
  options.on_listening = [](const std::string& url) {
    // The first line of stdout: scripts and tests wait for it to learn the port.
    std::printf("listening on %s\n", url.c_str());
    std::fflush(stdout);
  };
  return serve(config, options);
}

int run_hash_key(const HashKeyArgs& args) {
  std::string key;
  if (args.generate) {
    unsigned char bytes[24];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw Error("no random bytes available");
    key = "pf_" + hex_encode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
    std::printf("key:  %s\nhash: sha256:%s\n", key.c_str(), sha256_hex(key).c_str());
    return 0;
  }
  if (!std::getline(std::cin, key) || key.empty())
    throw UsageError("give the key on stdin, e.g. `printf %s \"$KEY\" | pilotfish hash-key`");
  if (!key.empty() && key.back() == '\r') key.pop_back();
  std::printf("sha256:%s\n", sha256_hex(key).c_str());
  return 0;
}

}  // namespace pf::cli
