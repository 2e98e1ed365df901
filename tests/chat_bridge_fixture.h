// The end-to-end fixture of the bridge on either chat platform: a small ChatServer interface
// (people post, react, the bot's replies are read back, the event stream is cut) with a
// Mattermost and a Slack implementation over their test servers, and ChatBridgeTest, a test
// parametrised by platform name ("mattermost", "slack") that indexes a repository, writes the
// config and runs the real `pilotfish bridge`, so one scenario body runs on both platforms.
#pragma once

#include <stdlib.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge_fixture.h"
#include "slack_test_server.h"

namespace pf::test {

// One of the bot's posts: its id as the test server names it, its current text, and the id of
// the post whose thread it is in ("" at top level).
struct ChatPost {
  std::string id, text, root;
};

// A chat server with a bot "copilot", people "alice" and "mallory" and a channel they share.
// Users are named by those names; post ids are the server's own (Mattermost post id, Slack ts).
class ChatServer {
 public:
  virtual ~ChatServer() = default;
  // Sets the bot's token variables in this process's environment (the bridge inherits them).
  virtual void export_tokens() = 0;
  // The entry of bridge.platforms (key "chat"); access: the bot's access section.
  virtual json platform(const json& access) const = 0;
  virtual const std::string& channel() const = 0;
  // Another channel with alice and the bot in it.
  virtual std::string new_channel(const std::string& name) = 0;
  // Another bot on the server, its token variables exported; its entry for the platform's
  // "bots" (access not included).
  virtual json add_bot(const std::string& name) = 0;
  // What a message starts with to address the bot.
  virtual std::string mention() const = 0;
  virtual std::string post(const std::string& user, const std::string& channel,
                           const std::string& text, const std::string& root = "") = 0;
  // A person's message with a file attached (content base64-encoded); the post's id.
  virtual std::string post_file(const std::string& user, const std::string& channel,
                                const std::string& text, const std::string& name,
                                const std::string& mime, const std::string& content_base64) = 0;
  virtual void react(const std::string& user, const std::string& channel,
                     const std::string& post_id, const std::string& emoji) = 0;
  virtual bool has_reaction(const std::string& channel, const std::string& post_id,
                            const std::string& emoji) = 0;
  // The bot's posts in a channel (current text, deleted ones left out), oldest first.
  virtual std::vector<ChatPost> bot_posts(const std::string& channel) = 0;
  // A gap in the bot's event stream: what is posted between begin_gap() and end_gap() never
  // reaches it live, and its socket is dropped.
  virtual void begin_gap() = 0;
  virtual void end_gap() = 0;
  // The channel of that name (slug) and its members' names (the fixture's users), or nullopt.
  virtual std::optional<std::pair<std::string, std::set<std::string>>> channel_named(
      const std::string& name) = 0;
};

class MattermostChat : public ChatServer {
 public:
  MattermostChat() {
    users_["copilot"] = mm_.user("copilot", true);
    users_["alice"] = mm_.user("alice");
    users_["mallory"] = mm_.user("mallory");
    channel_ = mm_.call(
        "POST", "/_test/channels",
        {{"name", "town"},
         {"type", "O"},
         {"members",
          {users_["copilot"]["id"], users_["alice"]["id"], users_["mallory"]["id"]}}})["id"];
  }
  void export_tokens() override {
    ::setenv("MM_BOT_TOKEN", users_["copilot"]["token"].get<std::string>().c_str(), 1);
  }
  json platform(const json& access) const override {
    return {{"url", mm_.url()},
            {"bots", {{"copilot", {{"tokenEnv", "MM_BOT_TOKEN"}, {"access", access}}}}}};
  }
  const std::string& channel() const override { return channel_; }
  std::string new_channel(const std::string& name) override {
    return mm_.call("POST", "/_test/channels",
                    {{"name", name},
                     {"type", "O"},
                     {"members", {users_["copilot"]["id"], users_["alice"]["id"]}}})["id"];
  }
  json add_bot(const std::string& name) override {
    users_[name] = mm_.user(name, true);
    std::string var = "MM_" + name + "_TOKEN";
    ::setenv(var.c_str(), users_[name]["token"].get<std::string>().c_str(), 1);
    return {{"tokenEnv", var}};
  }
  std::string mention() const override { return "@copilot "; }
  std::string post(const std::string& user, const std::string& channel, const std::string& text,
                   const std::string& root) override {
    json body = {{"user_id", users_[user]["id"]}, {"channel_id", channel}, {"message", text}};
    if (!root.empty()) body["root_id"] = root;
    return mm_.call("POST", "/_test/posts", body)["id"];
  }
  std::string post_file(const std::string& user, const std::string& channel, const std::string& text,
                        const std::string& name, const std::string& mime,
                        const std::string& content_base64) override {
    json f = mm_.call("POST", "/_test/files",
                      {{"user_id", users_[user]["id"]}, {"channel_id", channel}, {"name", name},
                       {"content_base64", content_base64}, {"mime_type", mime}});
    return mm_.call("POST", "/_test/posts",
                    {{"user_id", users_[user]["id"]}, {"channel_id", channel}, {"message", text},
                     {"file_ids", {f["id"]}}})["id"];
  }
  void react(const std::string& user, const std::string&, const std::string& post_id,
             const std::string& emoji) override {
    mm_.call("POST", "/_test/reactions",
             {{"user_id", users_[user]["id"]}, {"post_id", post_id}, {"emoji_name", emoji}});
  }
  bool has_reaction(const std::string& channel, const std::string& post_id,
                    const std::string& emoji) override {
    for (const json& p : mm_.posts(channel))
      if (p["id"] == post_id)
        for (const json& r : p["reactions"])
          if (r["emoji_name"] == emoji) return true;
    return false;
  }
  std::vector<ChatPost> bot_posts(const std::string& channel) override {
    std::vector<ChatPost> out;
    for (const json& p : mm_.posts(channel))
      if (p["user_id"] == users_["copilot"]["id"] && p["delete_at"] == 0 && p["original_id"] == "")
        out.push_back({p["id"], p["message"], p["root_id"]});
    return out;
  }
  void begin_gap() override {
    mm_.call("POST", "/_test/ws/drop", {{"user_id", users_["copilot"]["id"]}, {"refuse_ms", 1500}});
  }
  void end_gap() override {}
  std::optional<std::pair<std::string, std::set<std::string>>> channel_named(
      const std::string& name) override {
    json state = mm_.call("GET", "/_test/state");
    for (const json& c : state["channels"]) {
      if (c["name"] != name) continue;
      std::set<std::string> members;
      for (const auto& [who, u] : users_)
        for (const json& m : c["members"])
          if (m == u["id"]) members.insert(who);
      return std::pair{c["id"].get<std::string>(), members};
    }
    return std::nullopt;
  }

 private:
  mutable Mattermost mm_;
  mutable std::map<std::string, json> users_;
  std::string channel_;
};

class SlackChat : public ChatServer {
 public:
  SlackChat() : slack_({"--ack-timeout-ms", "1000"}) {
    app_ = slack_.app("copilot");
    ids_["copilot"] = app_["bot_user_id"];
    ids_["alice"] = slack_.user("alice")["id"];
    ids_["mallory"] = slack_.user("mallory")["id"];
    channel_ = slack_.channel("public", {ids_["alice"], ids_["mallory"], ids_["copilot"]});
  }
  void export_tokens() override {
    ::setenv("SLACK_BOT_TOKEN", app_["bot_token"].get<std::string>().c_str(), 1);
    ::setenv("SLACK_APP_TOKEN", app_["app_token"].get<std::string>().c_str(), 1);
  }
  json platform(const json& access) const override {
    return {{"type", "slack"},
            {"url", slack_.api_url()},
            {"bots",
             {{"copilot",
               {{"tokenEnv", "SLACK_BOT_TOKEN"},
                {"appTokenEnv", "SLACK_APP_TOKEN"},
                {"access", access}}}}}};
  }
  const std::string& channel() const override { return channel_; }
  std::string new_channel(const std::string&) override {
    return slack_.channel("public", {ids_["alice"], ids_["copilot"]});
  }
  json add_bot(const std::string& name) override {
    json app = slack_.app(name);
    ids_[name] = app["bot_user_id"];
    std::string bot_var = "SLACK_" + name + "_BOT_TOKEN", app_var = "SLACK_" + name + "_APP_TOKEN";
    ::setenv(bot_var.c_str(), app["bot_token"].get<std::string>().c_str(), 1);
    ::setenv(app_var.c_str(), app["app_token"].get<std::string>().c_str(), 1);
    return {{"tokenEnv", bot_var}, {"appTokenEnv", app_var}};
  }
  std::string mention() const override { return "<@" + ids_.at("copilot") + "> "; }
  std::string post(const std::string& user, const std::string& channel, const std::string& text,
                   const std::string& root) override {
    return slack_.post(ids_[user], channel, text, root);
  }
  std::string post_file(const std::string& user, const std::string& channel, const std::string& text,
                        const std::string& name, const std::string& mime,
                        const std::string& content_base64) override {
    return slack_.call("POST", "/_test/files",
                       {{"user", ids_[user]}, {"channel", channel}, {"name", name},
                        {"mimetype", mime}, {"content_base64", content_base64}, {"text", text}})["ts"];
  }
  void react(const std::string& user, const std::string& channel, const std::string& post_id,
             const std::string& emoji) override {
    slack_.call("POST", "/_test/reactions",
                {{"user", ids_[user]}, {"channel", channel}, {"ts", post_id}, {"name", emoji}});
  }
  bool has_reaction(const std::string& channel, const std::string& post_id,
                    const std::string& emoji) override {
    for (const json& m : slack_.messages(channel))
      if (m["ts"] == post_id && m.contains("reactions"))
        for (const json& r : m["reactions"])
          if (r["name"] == emoji) return true;
    return false;
  }
  std::vector<ChatPost> bot_posts(const std::string& channel) override {
    std::vector<ChatPost> out;
    for (const json& m : slack_.messages(channel)) {
      if (m.value("user", "") != ids_["copilot"] || m.value("deleted", false)) continue;
      std::string root = m.value("thread_ts", "");
      out.push_back({m["ts"], m.value("text", ""), root == m["ts"] ? "" : root});
    }
    return out;
  }
  // Events are discarded (as over a long outage), then the socket dropped: only catch-up
  // from the history can find what was posted meanwhile.
  void begin_gap() override {
    slack_.call("POST", "/_test/apps/" + app_["app_id"].get<std::string>() + "/delivery",
                {{"mode", "drop"}});
  }
  void end_gap() override {
    slack_.call("POST", "/_test/sockets/drop", {{"app_id", app_["app_id"]}});
    slack_.call("POST", "/_test/apps/" + app_["app_id"].get<std::string>() + "/delivery",
                {{"mode", "normal"}});
  }

  // Whether the workspace has the Agents feature (native streams, the assistant status line);
  // without it those methods answer not_agent_app and replies are posts and edits.
  void set_agents(bool on) {
    slack_.call("POST", "/_test/apps/" + app_["app_id"].get<std::string>() + "/delivery",
                {{"agents", on}});
  }
  std::optional<std::pair<std::string, std::set<std::string>>> channel_named(
      const std::string& name) override {
    json state = slack_.call("GET", "/_test/state");
    for (const json& c : state["channels"]) {
      if (c.value("name", "") != name) continue;
      std::set<std::string> members;
      for (const auto& [who, id] : ids_)
        for (const json& m : c["members"])
          if (m == id) members.insert(who);
      return std::pair{c["id"].get<std::string>(), members};
    }
    return std::nullopt;
  }
  SlackServer& server() { return slack_; }
  const json& app() const { return app_; }
  std::string id_of(const std::string& user) { return ids_[user]; }

 private:
  mutable SlackServer slack_;
  json app_;
  mutable std::map<std::string, std::string> ids_;
  std::string channel_;
};

// A test on one platform, chosen by the parameter ("mattermost" or "slack").
class ChatBridgeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    write_file(repo_ / "src/retry.ts",
               "// Retries a request with exponential backoff.\n"
               "export function retryWithBackoff(fn: () => Promise<void>, tries = 3) {\n"
               "  return fn().catch(() => tries > 1 ? retryWithBackoff(fn, tries - 1) : "
               "undefined);\n}\n");
    write_file(repo_ / "README.md", "# demo\n\nA demo repository for the bridge tests.\n");
    auto r = run({pilotfish_bin(), "index", repo_.path(), "--db", db(), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (GetParam() == "slack")
      chat_ = std::make_unique<SlackChat>();
    else
      chat_ = std::make_unique<MattermostChat>();
    chat_->export_tokens();
  }
  std::string db() const { return dir_ / "index.db"; }
  const std::string& channel() const { return chat_->channel(); }

  // One bot that lets access_ in (alice), answering in channel() about the repository.
  void write_config(const json& providers = json::object(), const std::string& model = "",
                    const json& extra_channel = json::object(),
                    const json& extra_bridge = json::object()) {
    json ch = {{"id", channel()},
               {"platform", "chat"},
               {"bot", "copilot"},
               {"workingDirectory", repo_.path()}};
    ch.update(extra_channel);
    json cfg = {{"bridge",
                 {{"platforms", {{"chat", chat_->platform(access_)}}},
                  {"channels", {ch}},
                  {"replayWindowSeconds", 300}}}};
    cfg["bridge"].update(extra_bridge);
    if (!providers.empty()) cfg["providers"] = providers;
    if (!model.empty()) cfg["defaults"] = {{"chatModel", model}};
    write_file(dir_ / "pilotfish.json", cfg.dump(2));
  }
  std::unique_ptr<ServeProcess> start_bridge() {
    return std::make_unique<ServeProcess>(
        std::vector<std::string>{"--db", db(), "--config", dir_ / "pilotfish.json"}, "bridge");
  }

  // A person addresses the bot in channel() (in a thread when root is given); the post's id.
  std::string ask(const std::string& text, const std::string& user = "alice",
                  const std::string& root = "") {
    return chat_->post(user, channel(), chat_->mention() + text, root);
  }
  std::vector<ChatPost> bot_posts() { return chat_->bot_posts(channel()); }
  std::vector<ChatPost> replies_to(const std::string& post_id) {
    std::vector<ChatPost> out;
    for (ChatPost& p : bot_posts())
      if (p.root == post_id) out.push_back(std::move(p));
    return out;
  }
  // alice sends text (in root's thread when given); the text of the bot's first reply there
  // that was not there before and contains fragment, or nullopt after a timeout.
  std::optional<std::string> new_reply(const std::string& text, const std::string& fragment,
                                       const std::string& root = "") {
    std::set<std::string> earlier;
    if (!root.empty())
      for (const ChatPost& p : replies_to(root)) earlier.insert(p.id);
    std::string id = ask(text, "alice", root);
    std::optional<std::string> said;
    wait_for([&] {
      for (const ChatPost& p : replies_to(root.empty() ? id : root))
        if (!earlier.count(p.id) && p.text.find(fragment) != std::string::npos) {
          said = p.text;
          return true;
        }
      return false;
    });
    return said;
  }
  bool answered(const std::string& post_id, const std::string& fragment) {
    for (const ChatPost& p : replies_to(post_id))
      if (p.text.find(fragment) != std::string::npos) return true;
    return false;
  }
  // The first reply to post_id containing fragment, once there is one (false after a timeout).
  bool wait_reply(const std::string& post_id, const std::string& fragment, ChatPost* out) {
    return wait_for([&] {
      for (ChatPost& p : replies_to(post_id))
        if (p.text.find(fragment) != std::string::npos) {
          *out = std::move(p);
          return true;
        }
      return false;
    });
  }
  int count_replies(const std::string& post_id, const std::string& fragment) {
    int n = 0;
    for (const ChatPost& p : replies_to(post_id)) n += p.text.find(fragment) != std::string::npos;
    return n;
  }
  std::string dump(const std::vector<ChatPost>& posts) {
    std::string out;
    for (const ChatPost& p : posts) out += p.id + " (in " + p.root + "): " + p.text + "\n";
    return out;
  }
  // alice asks and the bot answers with something containing fragment.
  void expect_answer(ServeProcess& bridge, const std::string& text, const std::string& fragment) {
    std::string id = ask(text);
    EXPECT_TRUE(wait_for([&] { return answered(id, fragment); }))
        << text << "\n"
        << dump(replies_to(id)) << bridge.log();
  }

  TempDir dir_, repo_;
  std::unique_ptr<ChatServer> chat_;
  json access_ = {{"mode", "allowlist"}, {"users", {"alice"}}};  // the bot's, in the config
};

}  // namespace pf::test
