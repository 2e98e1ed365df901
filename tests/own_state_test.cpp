// pilotfish's own state is out of the agent's reach, end to end: real `pilotfish ask`, `serve`
// and `bridge` runs make their files (stores, side files, locks, leases, the config), then a
// model's run_command, approved by /yolo in the real bridge, tries to read, write and list every
// one of them — with the store inside the workspace and outside it.
#include <sys/stat.h>

#include <filesystem>

#include "bridge_fixture.h"

namespace pf::test {
namespace {

namespace fs = std::filesystem;

json tool_call(const std::string& name, const json& args) {
  return {{"id", "1"}, {"name", name}, {"arguments", args.dump()}};
}

// Reads the paths in .probe-list and says, per path, what the sandbox could do with it.
const char* kProbe =
    "while IFS= read -r p; do "
    "  [ -s \"$p\" ] && cat \"$p\" >/dev/null 2>&1 && echo \"readable $p\"; "
    "  (echo x >> \"$p\") 2>/dev/null && echo \"writable $p\"; "
    "  ls -A \"$(dirname \"$p\")\" 2>/dev/null | grep -qxF \"$(basename \"$p\")\" && echo \"listed $p\"; "
    "done < .probe-list; echo probe-done";

class OwnStateTest : public BridgeTest, public ::testing::WithParamInterface<bool> {
 protected:
  std::string db() const override {
    return GetParam() ? repo_ / ".pilotfish/index.db" : dir_ / "store/index.db";
  }
  // Every file under the repository and the test's folder but the repository's own sources.
  std::vector<std::string> made_by_pilotfish() {
    std::vector<std::string> out;
    for (const std::string& top : {repo_.path(), dir_.path()})
      for (auto it = fs::recursive_directory_iterator(top); it != fs::recursive_directory_iterator(); ++it) {
        std::string p = it->path().string();
        if (it->is_directory() || p == repo_ / "src/retry.ts" || p == repo_ / "README.md" ||
            p == repo_ / ".probe-list")
          continue;
        out.push_back(p);
      }
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_P(OwnStateTest, NothingPilotfishMadeIsReadableWritableOrListedFromRunCommand) {
  ScriptedModelServer model(
      json::array({{{"match", "PROBE"},
                    {"chat", {{"tool_calls", {tool_call("run_command", {{"command", kProbe}})}},
                              {"finish", "tool_calls"}}}},
                   {{"match", "PROBE"}, {"chat", {{"text", {"Probed."}}}}}})
          .dump());
  write_config(one_model(model), "a:m", {{"actions", {"shell"}}});
  json cfg = json::parse(test::run({"cat", dir_ / "pilotfish.json"}).out);
  cfg["actions"] = {{"enabled", {"shell"}}};  // so `ask` opens its permission rules too
  test::write_file(dir_ / "pilotfish.json", cfg.dump(2));

  auto ask = test::run({test::pilotfish_bin(), "ask", "where is retryWithBackoff?", "--db", db(),
                        "--config", dir_ / "pilotfish.json"});
  ASSERT_EQ(ask.exit_code, 0) << ask.err;
  {
    ServeProcess serve({"--db", db(), "--config", dir_ / "pilotfish.json", "--no-auth", "--repo", repo_.path()});
    std::string id = mm_.post(alice_, channel_, "@copilot hello")["id"];
    ASSERT_TRUE(wait_for([&] { return answered(id, "You said"); })) << serve.log();
    ASSERT_EQ(serve.stop(), 0) << serve.log();
  }
  auto bridge = start_bridge();
  std::string on = mm_.post(alice_, channel_, "@copilot /yolo on")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(on, "Autopilot on"); })) << bridge->log();

  // What the runs made, the running bridge's side files and locks included.
  std::vector<std::string> made = made_by_pilotfish();
  std::string list = repo_ / "README.md";  // a control: the probe must see this one
  for (const auto& p : made) list += "\n" + p;
  test::write_file(repo_ / ".probe-list", list + "\n");
  std::string joined;
  for (const auto& p : made) joined += p + "\n";
  EXPECT_NE(joined.find(db() + "\n"), std::string::npos) << joined;
  EXPECT_NE(joined.find("bridge.db\n"), std::string::npos) << joined;
  EXPECT_NE(joined.find(".lease-"), std::string::npos) << joined;
  EXPECT_NE(joined.find("pilotfish.json\n"), std::string::npos) << joined;

  std::string id = mm_.post(alice_, channel_, "@copilot PROBE")["id"];
  ASSERT_TRUE(wait_for([&] { return answered(id, "Probed."); })) << bridge->log();
  std::string result;
  for (json r : model.requests())
    for (const json& m : r["body"]["messages"])
      if (m["role"] == "tool") result = m["content"].is_string() ? m["content"].get<std::string>() : m["content"].dump();
  json out = json::parse(result);
  std::string control = repo_ / "README.md";
  EXPECT_EQ(out["output"], "readable " + control + "\nwritable " + control + "\nlisted " + control +
                               "\nprobe-done\n")
      << "checked:\n" << joined;
}

INSTANTIATE_TEST_SUITE_P(Store, OwnStateTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "InsideTheWorkspace" : "OutsideIt"; });

}  // namespace
}  // namespace pf::test
