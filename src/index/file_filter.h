// What the indexer refuses to index, and why. Name-based rules (secrets, tests, lock files) are
// decided by the walker before a file is opened; content-based rules (binary, minified, secret
// material inside an innocent-looking file) after it is read. Every refusal has a reason that
// the final report counts.
#pragma once

#include <string>
#include <string_view>

namespace pf {

enum class SkipReason {
  kNone = 0,
  kIgnored,        // .gitignore / .pilotfishignore / .git/info/exclude
  kDefaultDir,     // .git, node_modules
  kSecretName,     // .env*, *.pem, id_rsa*, secrets/, ...
  kSecretContent,  // a private key or access token inside the file
  kTest,           // test/, *.test.*, *.spec.* (unless tests are included)
  kTooLarge,
  kBinary,
  kMinified,
  kGenerated,  // lock files, source maps, "@generated" headers
  kSymlink,
  kUnreadable,
  kEmpty,
  kCount
};

const char* skip_reason_name(SkipReason r);

bool is_default_skipped_dir(std::string_view name);
bool is_secret_dir(std::string_view name);
bool is_secret_file(std::string_view name);
bool is_test_dir(std::string_view name);
bool is_test_file(std::string_view name);
bool is_generated_name(std::string_view name);

// Looks at a file's bytes. On kNone the content is fit to index; invalid UTF-8 sequences have
// been replaced with U+FFFD in *content so that every stored chunk is valid UTF-8.
SkipReason classify_content(std::string* content);

}  // namespace pf
