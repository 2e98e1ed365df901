// Attachments (src/bridge/attachment_keeper.cpp and the bridge's take_attachments): images told
// apart by their bytes; a channel's folder deleted once it has been idle for keepMinutes, not
// while a turn runs there, and folders an earlier run left adopted; end to end on both
// platforms, an image goes to a model that takes images as image content (checked by the test
// server as the APIs check it), is refused with a line for one that does not, and is gone after
// the idle spell.
#include "bridge/attachment_keeper.h"

#include <boost/asio/io_context.hpp>
#include <filesystem>

#include "chat_bridge_fixture.h"
#include "core/text.h"

namespace pf {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The smallest PNG: a 1x1 transparent pixel.
const std::string kPng = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

TEST(AttachmentKeeper, ImagesAreToldApartByTheirBytes) {
  test::TempDir dir;
  struct Case {
    std::string bytes, type;
  };
  for (const Case& c : std::vector<Case>{{std::string("\x89PNG\r\n\x1a\n....", 12), "image/png"},
                                         {"\xFF\xD8\xFF\xE0......", "image/jpeg"},
                                         {"GIF89a......", "image/gif"},
                                         {std::string("RIFF\x10\0\0\0WEBPVP8 ", 16), "image/webp"},
                                         {std::string("RIFF\x10\0\0\0WAVEfmt ", 16), ""},
                                         {"hello, world", ""},
                                         {"GIF", ""}}) {
    std::string path = dir / "f";
    test::write_file(path, c.bytes);
    EXPECT_EQ(image_type(path), c.type) << c.bytes;
  }
  EXPECT_EQ(image_type(dir / "missing"), "");
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  EXPECT_EQ(base64_encode("abc"), "YWJj");
  EXPECT_EQ(base64_encode("a"), "YQ==");
  EXPECT_EQ(base64_encode(""), "");
}

TEST(AttachmentKeeper, AnIdleFolderGoesABusyOneStaysAndOldOnesAreAdopted) {
  test::TempDir root;
  std::string a = root / ".pilotfish/attachments/A", b = root / ".pilotfish/attachments/B";
  std::string old = root / ".pilotfish/attachments/old", fresh = root / ".pilotfish/attachments/fresh";
  for (const auto& d : {a, b, old, fresh}) test::write_file(d + "/f.txt", "x");
  fs::last_write_time(old + "/f.txt", fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(2));
  boost::asio::io_context io;
  bool b_busy = true;
  AttachmentKeeper keeper(io, [&](const std::string& key) { return key == "mm:B" && b_busy; });
  keeper.set_keep(std::chrono::minutes(30));
  keeper.adopt(root.path());  // old (2 h) and fresh (now), and A and B
  keeper.adopt(root.path());  // once per root
  EXPECT_EQ(keeper.tracked(), 4u);
  keeper.set_keep(std::chrono::milliseconds(300));
  keeper.touch("mm:A", a);
  keeper.touch("mm:B", b);
  io.run_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(fs::exists(a));  // not idle long enough yet
  io.run_for(std::chrono::milliseconds(700));
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(old));
  EXPECT_FALSE(fs::exists(fresh));  // 300 ms is its keep now, too
  EXPECT_TRUE(fs::exists(b));       // its channel's turn runs
  b_busy = false;
  io.run_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(fs::exists(b));
  EXPECT_EQ(keeper.tracked(), 0u);
  keeper.stop();
}

class ImagesInChatTest : public test::ChatBridgeTest {
 protected:
  void configure(const test::ScriptedModelServer& model, const std::string& chat_model,
                 double keep_minutes = 0.02) {
    json providers = {{"a", {{"type", "openai"}, {"baseUrl", model.base_url()},
                             {"models", {{{"id", "gpt-4o"}}, {{"id", "plain"}, {"vision", false}}}}}}};
    write_config(providers, chat_model, json::object(), {{"attachments", {{"keepMinutes", keep_minutes}}}});
  }
  std::unique_ptr<test::ServeProcess> bridge_;
};

TEST_P(ImagesInChatTest, AnImageGoesToAModelThatTakesImages) {
  test::ScriptedModelServer model(json::array({test::scripted_text("A tiny image.")}).dump());
  configure(model, "a:gpt-4o");
  bridge_ = start_bridge();
  std::string id = chat_->post_file("alice", channel(), chat_->mention() + "what is in it?", "pixel.png",
                                    "image/png", kPng);
  ASSERT_TRUE(test::wait_for([&] { return answered(id, "A tiny image."); })) << dump(bot_posts()) << bridge_->log();
  json asked = model.requests().back()["body"]["messages"].back();
  ASSERT_TRUE(asked["content"].is_array()) << asked;
  EXPECT_NE(asked["content"][0]["text"].get<std::string>().find("what is in it?"), std::string::npos);
  EXPECT_EQ(asked["content"][1]["image_url"]["url"], "data:image/png;base64," + kPng);
  // Deleted once the channel has been idle for keepMinutes (1.2 s here).
  std::string folder = repo_ / (".pilotfish/attachments/" + channel());
  EXPECT_TRUE(test::wait_for([&] { return !fs::exists(folder); }, 10000)) << folder;
}

TEST_P(ImagesInChatTest, AModelThatDoesNotTakeImagesIsNotSentOne) {
  test::ScriptedModelServer model("[]");  // echoes
  configure(model, "a:plain", 60);
  ASSERT_EQ(test::shell("cd '" + repo_.path() + "' && git init -q && git add -A && git -c "
                        "user.name=t -c user.email=t@t commit -qm init"), 0);
  bridge_ = start_bridge();
  std::string id = chat_->post_file("alice", channel(), chat_->mention() + "what is in it?", "pixel.png",
                                    "image/png", kPng);
  ASSERT_TRUE(test::wait_for([&] { return answered(id, "You said"); })) << dump(bot_posts()) << bridge_->log();
  EXPECT_TRUE(answered(id, "Not shown to the model: pixel.png. `a:plain` does not take images"))
      << dump(bot_posts());
  json asked = model.requests().back()["body"]["messages"].back();
  EXPECT_TRUE(asked["content"].is_string()) << asked;
  // Kept outside what git sees: the checkout stays clean, and `git add -A` takes none of it.
  EXPECT_TRUE(fs::exists(repo_ / (".pilotfish/attachments/" + channel())));
  auto status = test::run({"git", "-C", repo_.path(), "status", "--porcelain", "--untracked-files=all"});
  EXPECT_EQ(status.out, "");
}

INSTANTIATE_TEST_SUITE_P(Platforms, ImagesInChatTest, ::testing::Values("mattermost", "slack"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace pf
