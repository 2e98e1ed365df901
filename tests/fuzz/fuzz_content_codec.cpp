// libFuzzer entry point: chunk content frames (store/content_codec.h) on arbitrary bytes, as a
// damaged or hostile store would hold them. Decoding returns the text or throws pf::Error; any
// input compressed with the dictionary decodes back to itself, and decoding it with one byte
// changed returns or throws.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "store/content_codec.h"

namespace {

const std::string& dictionary() {
  static const std::string dict = [] {
    std::vector<std::string> texts;
    for (int i = 0; i < 6000; ++i)
      texts.push_back("static int handler_" + std::to_string(i * 7919 % 1000) +
                      "(struct request *req)\n{\n\tif (!req)\n\t\treturn -EINVAL;\n\treturn "
                      "queue_" + std::to_string(i % 37) + "(req, " + std::to_string(i) + ");\n}\n");
    std::vector<std::string_view> views(texts.begin(), texts.end());
    return pf::train_content_dictionary(views, pf::kFirstContentDictionaryId + 1);
  }();
  return dict;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (dictionary().empty()) __builtin_trap();
  for (std::string_view dict : {std::string_view(dictionary()), std::string_view()}) {
    try {
      std::string text = pf::decompress_content(bytes, dict);
      if (text.size() > (1u << 30)) __builtin_trap();
    } catch (const pf::Error&) {
    }
  }
  static const pf::ContentCompressor compressor(dictionary());
  std::string packed(bytes);
  if (!compressor.compress(&packed)) return 0;
  if (pf::decompress_content(packed, dictionary()) != bytes) __builtin_trap();
  // A frame damaged in one byte (a torn page, a bad disk): the text or an error, never a crash.
  packed[static_cast<size_t>(data[0]) * 7919 % packed.size()] ^= static_cast<char>(data[1] | 1);
  try {
    pf::decompress_content(packed, dictionary());
  } catch (const pf::Error&) {
  }
  return 0;
}
