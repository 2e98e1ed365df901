// The audit trail (src/policy/audit.cpp, the gates that feed it, `pilotfish audit`): a decision
// and the call's result make one record; in the chat, an approved, a remembered and a denied
// call are kept in order with the person or rule behind each; `pilotfish ask` keeps its
// terminal's calls with their exit codes; --since and --channel select.
#include "policy/audit.h"

#include <gtest/gtest.h>

#include "bridge_fixture.h"
#include "net/http_client.h"

namespace pf {
namespace {

using nlohmann::json;

class MemoryAudit : public AuditLog {
 public:
  void add_audit(const AuditRecord& r) override { records.push_back(r); }
  std::vector<AuditRecord> audit_records(const AuditQuery&) override { return records; }
  std::vector<AuditRecord> records;
};

TEST(AuditTrail, ADecisionAndItsResultMakeOneRecord) {
  MemoryAudit log;
  AuditRecord base;
  base.front = "chat";
  base.place = "mm:c";
  base.user = "alice";
  AuditTrail trail(&log, base);
  PermissionRequest shell;
  shell.kind = ToolPermission::kShell;
  shell.command = "make test";
  ToolCall a{"1", "run_command", "{}"}, b{"2", "run_command", "{}"};
  trail.decided(a, shell, true, "config-allow", "permissions.allow[0]");
  EXPECT_TRUE(log.records.empty());  // kept until it has run
  trail.decided(b, shell, false, "@bob", "denied at the prompt");
  ASSERT_EQ(log.records.size(), 1u);  // a refusal at once
  EXPECT_EQ(log.records[0].decision, "denied");
  EXPECT_EQ(log.records[0].duration_ms, -1);
  trail.ran(a, R"({"exit_code": 2, "output": "", "duration_ms": 41})");
  ASSERT_EQ(log.records.size(), 2u);
  const AuditRecord& r = log.records[1];
  EXPECT_EQ(r.place, "mm:c");
  EXPECT_EQ(r.user, "alice");
  EXPECT_EQ(r.target, "make test");
  EXPECT_EQ(r.decided_by, "config-allow");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.duration_ms, 41);
  trail.ran(a, "{}");  // once only
  trail.ran(ToolCall{"9", "read_file", "{}"}, "{}");  // never decided: not a side effect
  EXPECT_EQ(log.records.size(), 2u);
  PermissionRequest write;
  write.kind = ToolPermission::kWrite;
  write.path = "/srv/x";
  ToolCall w{"3", "write_file", "{}"};
  trail.decided(w, write, true, "workspace", "");
  trail.ran(w, R"({"error": "cannot write /srv/x: read-only"})");
  EXPECT_EQ(log.records.back().error, "cannot write /srv/x: read-only");
  EXPECT_FALSE(log.records.back().exit_code.has_value());
  EXPECT_GE(log.records.back().duration_ms, 0);
  AuditTrail nowhere(nullptr, base);  // no log: nothing kept, nothing thrown
  nowhere.decided(a, shell, false, "hook", "");
  {
    AuditTrail stopped(&log, base);  // approved, then the answer ended before the call ran
    stopped.decided(ToolCall{"7", "run_command", "{}"}, shell, true, "yolo", "");
  }
  ASSERT_EQ(log.records.size(), 4u);
  EXPECT_EQ(log.records.back().decision, "approved");
  EXPECT_EQ(log.records.back().duration_ms, -1);
  EXPECT_EQ(log.records.back().error, "not run: the answer ended before the call");
}

json audit_of(const std::string& db, const std::string& cfg, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {test::pilotfish_bin(), "audit", "--db", db, "--config", cfg, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = test::run(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out)["records"] : json::array();
}

json run_step(const std::string& command, const std::string& id) {
  return {{"chat",
           {{"tool_calls", json::array({{{"id", id}, {"name", "run_command"},
                                         {"arguments", json{{"command", command}}.dump()}}})},
            {"finish", "tool_calls"}}}};
}
json say(const std::string& text) { return {{"chat", {{"text", {text}}}}}; }

class AuditInChatTest : public test::BridgeTest {
 protected:
  std::string prompt_then(const std::string& text, const std::string& answer,
                          const std::string& done) {
    std::string id = mm_.post(alice_, channel_, "@copilot " + text)["id"];
    EXPECT_TRUE(test::wait_for([&] {
      for (const json& p : replies_to(id))
        if (p["message"].get<std::string>().find("Permission needed") != std::string::npos) return true;
      return false;
    }));
    mm_.call("POST", "/_test/posts", {{"user_id", alice_["id"]}, {"channel_id", channel_},
                                      {"message", answer}, {"root_id", id}});
    EXPECT_TRUE(test::wait_for([&] { return answered(id, done); }));
    return id;
  }
};

// Approved at the prompt (and remembered), then approved by that stored rule, then denied at
// the prompt: three records, in order, each with who decided and how it ended.
TEST_F(AuditInChatTest, ApprovedRememberedAndDeniedCallsAreKept) {
  test::ScriptedModelServer model(json::array({run_step("touch one.txt", "1"), say("First done."),
                                               run_step("touch two.txt", "2"), say("Second done."),
                                               run_step("ls /nonexistent", "3"), say("Understood.")})
                                      .dump());
  write_config(test::one_model(model), "a:m", {{"actions", {"shell"}}});
  auto bridge = start_bridge();
  prompt_then("make one", "@copilot /always approve", "First done.");
  std::string second = mm_.post(alice_, channel_, "@copilot make two")["id"];
  ASSERT_TRUE(test::wait_for([&] { return answered(second, "Second done."); })) << bridge->log();
  prompt_then("list it", "no", "Understood.");
  std::string cfg = dir_ / "pilotfish.json";
  json records;
  ASSERT_TRUE(test::wait_for([&] { return (records = audit_of(db(), cfg)).size() == 3; }))
      << records.dump(2);
  EXPECT_EQ(records[0]["target"], "touch one.txt");
  EXPECT_EQ(records[0]["decision"], "approved");
  EXPECT_EQ(records[0]["decidedBy"], "@alice");
  EXPECT_EQ(records[0]["exitCode"], 0);
  EXPECT_GE(records[0]["durationMs"].get<int64_t>(), 0);
  EXPECT_EQ(records[1]["target"], "touch two.txt");
  EXPECT_EQ(records[1]["decidedBy"], "stored-rule");
  EXPECT_EQ(records[1]["exitCode"], 0);
  EXPECT_EQ(records[2]["target"], "ls /nonexistent");
  EXPECT_EQ(records[2]["decision"], "denied");
  EXPECT_EQ(records[2]["decidedBy"], "@alice");
  EXPECT_TRUE(records[2]["exitCode"].is_null());
  EXPECT_TRUE(records[2]["durationMs"].is_null());
  for (const json& r : records) {
    EXPECT_EQ(r["front"], "chat");
    EXPECT_EQ(r["user"], "alice");
    EXPECT_EQ(r["bot"], "copilot");
    EXPECT_NE(r["place"].get<std::string>().find(channel_), std::string::npos) << r;
  }
  // Selections: a channel nobody used, a time after all of them, and one --since it cannot read.
  EXPECT_EQ(audit_of(db(), cfg, {"--channel", "mm:elsewhere"}).size(), 0u);
  EXPECT_EQ(audit_of(db(), cfg, {"--since", "2999-01-01"}).size(), 0u);
  EXPECT_EQ(audit_of(db(), cfg, {"--since", "1h", "-n", "1"}).size(), 1u);
  auto bad = test::run({test::pilotfish_bin(), "audit", "--db", db(), "--config", cfg, "--since", "yesterday"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--since yesterday"), std::string::npos) << bad.err;
  auto text = test::run({test::pilotfish_bin(), "audit", "--db", db(), "--config", cfg});
  EXPECT_NE(text.out.find("touch two.txt\tapproved by stored-rule\texit 0"), std::string::npos) << text.out;
}

// `pilotfish ask`: a command the config allows runs, and the trail has it with its exit code.
TEST(AuditAtTheTerminal, AskKeepsItsCallsWithTheirExitCodes) {
  test::TempDir repo, tmp;
  test::write_file(repo / "a.txt", "a\n");
  std::string db = tmp / "a.db", cfg = tmp / "c.json";
  ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::ScriptedModelServer model(json::array({run_step("false", "1"), say("It failed.")}).dump());
  test::write_file(cfg, json{{"providers", test::one_model(model)},
                             {"defaults", {{"chatModel", "a:m"}}},
                             {"actions", {{"enabled", {"shell"}}}},
                             {"permissions", {{"allow", {"shell(false)"}}}}}
                            .dump());
  auto r = test::run({test::pilotfish_bin(), "ask", "does it work?", "--db", db, "--config", cfg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json records = audit_of(db, cfg);
  ASSERT_EQ(records.size(), 1u) << records;
  EXPECT_EQ(records[0]["front"], "cli");
  EXPECT_EQ(records[0]["place"], "terminal");
  EXPECT_EQ(records[0]["target"], "false");
  EXPECT_EQ(records[0]["decidedBy"], "config-allow");
  EXPECT_EQ(records[0]["exitCode"], 1);
}

// `pilotfish serve`: a call the rules approve and one they deny, over the OpenAI route, kept as
// the key that asked ("local" without keys).
TEST(AuditOverHttp, TheServersCallsAreKeptAsTheKeyThatAsked) {
  test::TempDir repo, tmp;
  test::write_file(repo / "a.txt", "a\n");
  std::string db = tmp / "a.db", cfg = tmp / "c.json";
  ASSERT_EQ(test::run({test::pilotfish_bin(), "index", repo.path(), "--db", db, "-q"}).exit_code, 0);
  test::ScriptedModelServer model(
      json::array({run_step("false", "1"), run_step("rm a.txt", "2"), say("Done.")}).dump());
  test::write_file(cfg, json{{"providers", test::one_model(model)},
                             {"defaults", {{"chatModel", "a:m"}}},
                             {"actions", {{"enabled", {"shell"}}}},
                             {"permissions", {{"allow", {"shell(false)"}}, {"deny", {"shell(rm)"}}}}}
                            .dump());
  {
    test::ServeProcess serve({"--db", db, "--config", cfg, "--repo", repo.path(), "--no-auth"});
    HttpRequest req;
    req.method = "POST";
    req.url = serve.url() + "/v1/chat/completions";
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = json{{"model", "pilotfish"},
                    {"messages", {{{"role", "user"}, {"content", "check it"}}}}}.dump();
    req.timeout = std::chrono::milliseconds(20000);
    HttpResponse res = http_request(req);
    ASSERT_EQ(res.status, 200) << res.body;
  }
  EXPECT_TRUE(std::filesystem::exists(repo / "a.txt"));
  json records = audit_of(db, cfg);
  ASSERT_EQ(records.size(), 2u) << records;
  EXPECT_EQ(records[0]["front"], "http");
  EXPECT_EQ(records[0]["place"], "local");
  EXPECT_EQ(records[0]["decidedBy"], "config-allow");
  EXPECT_EQ(records[0]["exitCode"], 1);
  EXPECT_EQ(records[1]["target"], "rm a.txt");
  EXPECT_EQ(records[1]["decision"], "denied");
  EXPECT_EQ(records[1]["decidedBy"], "config-deny");
}

}  // namespace
}  // namespace pf
