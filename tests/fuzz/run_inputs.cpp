// A fuzz target's entry point run without libFuzzer, as a test: every file named on the command
// line (a folder: every file in it, in name order), then deterministic mutations of each (bytes
// flipped, inserted, deleted, repeated; cut short; spliced with another input) and of nothing,
// so a target's code is built and exercised in every test build, under the sanitizers in CI's.
// A target reports a failure by crashing or aborting, as under libFuzzer. Coverage-guided runs
// are scripts/fuzz.sh's. PF_FUZZ_MUTATIONS (default 500) sets the mutations per input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void run(const std::string& input) {
  // A copy of exactly its size, so that a read past the end is the sanitizer's to see.
  std::vector<uint8_t> bytes(input.begin(), input.end());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

std::string mutate(std::string s, const std::vector<std::string>& inputs, std::mt19937& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  const char interesting[] = {'\0', '\n', '"', '\\', '{', '}', '[', ']', ':', ',', '/', '*', '#',
                              '\xff', '\x80', '\xc3', ' ', '`', '<', '>', '=', '-', '0', '9'};
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // insert a character that parsers care about
        s.insert(pick(s.size() + 1), 1, interesting[pick(sizeof interesting)]);
        break;
      case 2:  // delete a range
        if (!s.empty()) {
          size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(16, s.size() - at)));
        }
        break;
      case 3:  // cut short
        s.resize(pick(s.size() + 1));
        break;
      case 4:  // repeat a range
        if (!s.empty()) {
          size_t at = pick(s.size()), n = 1 + pick(std::min<size_t>(64, s.size() - at));
          s.insert(at, s.substr(at, n));
        }
        break;
      case 5: {  // splice with another input
        const std::string& other = inputs[pick(inputs.size())];
        size_t at = pick(other.size() + 1);
        s = s.substr(0, pick(s.size() + 1)) + other.substr(at);
        break;
      }
      default:  // replace a byte with a random one
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p = argv[i];
    if (fs::is_directory(p)) {
      std::vector<fs::path> in;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file()) in.push_back(e.path());
      std::sort(in.begin(), in.end());
      files.insert(files.end(), in.begin(), in.end());
    } else if (fs::exists(p)) {
      files.push_back(p);
    }  // a target without committed seeds names a folder that does not exist
  }
  std::vector<std::string> inputs;
  for (const fs::path& p : files) inputs.push_back(read(p));
  inputs.push_back({});  // nothing, and what mutations make of nothing

  const char* env = std::getenv("PF_FUZZ_MUTATIONS");
  const int mutations = env ? std::atoi(env) : 500;
  std::mt19937 rng(20261205);
  long runs = 0;
  for (const std::string& input : inputs) {
    run(input);
    ++runs;
    for (int m = 0; m < mutations; ++m, ++runs) run(mutate(input, inputs, rng));
  }
  std::printf("%s: %ld inputs run (%zu files, %d mutations each)\n", argv[0], runs, files.size(),
              mutations);
  return 0;
}
