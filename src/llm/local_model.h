// Internal to llm: models on the user's own hardware, in process. A "local" provider's models are
// GGUF files run by llama.cpp (built from the git bundle of the pinned npm node-llama-cpp, see
// scripts/build-llama.sh), behind the same Embedder interface as a server: no server to run,
// nothing downloaded.
#pragma once

#include <memory>
#include <string>

#include "core/config.h"
#include "llm/chat.h"
#include "llm/embeddings.h"

namespace pf {

// An embedder for the GGUF file at path, an encoder (BERT) or a decoder (llama) model: the
// model's own pooling (mean, CLS, last; the last token when it names none), vectors of unit
// length as llama-server returns them, inputs up to the model's context (config contextWindow,
// else its trained context, at most 8192 tokens; a longer input is refused as too long, so
// EmbeddingFitter splits it), consecutive inputs up to 8 per decode while they fit the context
// together, threads half the machine's cores (at least one, so searches stay responsive). Any
// thread; one decode at a time per embedder. Throws ConfigError when the file is missing, not a GGUF file, or a
// model llama.cpp cannot load, or when this pilotfish was built without llama.cpp.
std::unique_ptr<Embedder> make_local_embedder(const std::string& model_id, const std::string& path,
                                              int context_window);

// A chat model for the GGUF file at path, streamed from a thread of its own: the model's chat
// template through llama.cpp's common/chat (ChatML when the file has none or llama.cpp cannot read
// it), greedy decoding unless sampling sets a temperature (then top-k, top-p, the temperature and
// a draw from sampling.seed, or a fresh seed), at most max_tokens (1024 when the request says 0), cancellation between
// tokens, a conversation longer than the context refused before generation. Tools: when the
// template describes them, the request's tools and tool_choice go into the prompt, the calls are
// sampled under the template's grammar and come back as kToolCall events (finish "tool_calls");
// otherwise they are left out (the log says so once per model). The loaded model is shared by
// every chat and embedder of the process on that file; each has its own context. Throws
// ConfigError as make_local_embedder does.
std::unique_ptr<ChatModel> make_local_chat_model(const std::string& model_id,
                                                 const std::string& path, int context_window,
                                                 const Sampling& sampling = {});

// Whether path can be opened and starts with the GGUF magic ("GGUF"); checked before llama.cpp
// is asked, for a message that says what is wrong with the file.
bool is_gguf_file(const std::string& path);

// Whether this build carries llama.cpp.
bool local_models_available();

}  // namespace pf
