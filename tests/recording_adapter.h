// A channel adapter for unit tests of the bridge's parts: it records every post, edit and
// deletion it is asked for (with the time), answers at once, and can be told the reactions and
// messages a platform would deliver.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "chat/channel_adapter.h"
#include "core/error.h"

namespace pf {

// What reached the platform, and when (a post's id is "p" and the number of calls before it).
class RecordingAdapter : public ChannelAdapter {
 public:
  using Clock = std::chrono::steady_clock;
  template <class T>
  using awaitable = boost::asio::awaitable<T>;
  struct Call {
    std::string op, id, text;
    Clock::time_point at;
  };
  std::vector<Call> calls;

  explicit RecordingAdapter(std::string platform = "test", std::string bot = "test")
      : platform_(std::move(platform)), bot_(std::move(bot)) {}
  const std::string& platform() const override { return platform_; }
  const std::string& bot() const override { return bot_; }
  void on_message(MessageHandler) override {}
  void on_reaction(ReactionHandler) override {}
  awaitable<void> connect() override { co_return; }
  void disconnect() override {}
  const BotIdentity& identity() const override { return identity_; }
  void track_channel(const std::string&, int64_t) override {}
  const PlatformTraits& traits() const override { return traits_; }
  PlatformTraits traits_;
  awaitable<std::string> send_message(const std::string&, const std::string& text,
                                      const std::string&, const std::string&) override {
    std::string id = "p" + std::to_string(calls.size());
    calls.push_back({"create", id, text, Clock::now()});
    co_return id;
  }
  awaitable<void> update_message(const std::string& id, const std::string& text) override {
    calls.push_back({"edit", id, text, Clock::now()});
    co_return;
  }
  awaitable<void> delete_message(const std::string& id) override {
    calls.push_back({"delete", id, "", Clock::now()});
    co_return;
  }
  awaitable<void> set_typing(const std::string&, const std::string&) override { co_return; }
  awaitable<void> add_reaction(const std::string&, const std::string&) override { co_return; }
  awaitable<void> download_file(const std::string&, const std::string&) override {
    throw Error("no files here");
  }
  awaitable<std::string> send_file(const std::string&, const std::string&, const std::string&,
                                   const std::string&) override {
    throw Error("no files here");
  }
  awaitable<std::vector<std::pair<std::string, std::string>>> discover_dm_channels() override {
    co_return std::vector<std::pair<std::string, std::string>>{};
  }
  awaitable<std::string> username_of(const std::string&) override { co_return ""; }
  // Native streams (traits_.native_streaming): "start", "append" and "stop" calls, the status
  // line as "status" calls (id: the thread). refuse_streams makes start_stream throw.
  bool refuse_streams = false;
  awaitable<std::string> start_stream(const std::string&, const std::string&,
                                      const std::string& recipient,
                                      const std::string& text) override {
    if (refuse_streams) throw Error("not_agent_app");
    std::string id = "p" + std::to_string(calls.size());
    calls.push_back({"start", id, text, Clock::now()});
    recipients.push_back(recipient);
    co_return id;
  }
  awaitable<void> append_stream(const std::string& id, const std::string& text) override {
    calls.push_back({"append", id, text, Clock::now()});
    co_return;
  }
  awaitable<void> stop_stream(const std::string& id, const std::string& text) override {
    calls.push_back({"stop", id, text, Clock::now()});
    co_return;
  }
  awaitable<void> set_status(const std::string&, const std::string& root,
                             const std::string& status) override {
    calls.push_back({"status", root, status, Clock::now()});
    co_return;
  }
  std::vector<std::string> recipients;
  // A stream's whole text: its start, appends and stop, in order.
  std::string streamed(const std::string& id) const {
    std::string text;
    for (const auto& c : calls)
      if (c.id == id && (c.op == "start" || c.op == "append" || c.op == "stop")) text += c.text;
    return text;
  }
  // The calls of one kind.
  std::vector<Call> of(const std::string& op) const {
    std::vector<Call> out;
    for (const auto& c : calls)
      if (c.op == op) out.push_back(c);
    return out;
  }

  // The texts of every post created, in order.
  std::vector<std::string> created() const {
    std::vector<std::string> out;
    for (const auto& c : calls)
      if (c.op == "create") out.push_back(c.text);
    return out;
  }
  // The id of the i-th post created.
  std::string created_id(size_t i) const {
    for (const auto& c : calls)
      if (c.op == "create" && i-- == 0) return c.id;
    return "";
  }
  std::vector<Call> edits() const {
    std::vector<Call> out;
    for (const auto& c : calls)
      if (c.op == "edit") out.push_back(c);
    return out;
  }

 private:
  std::string platform_, bot_;
  BotIdentity identity_;
};

}  // namespace pf
