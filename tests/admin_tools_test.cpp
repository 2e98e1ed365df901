// bridge/admin_tools.h: the admin tools' arguments read and refused, their registry entries and
// what a person is shown; and the permission engine's rule for them (kAdmin): an admin bot is
// asked every time, whatever autopilot, config rules or stored decisions say; others are denied.
#include "bridge/admin_tools.h"

#include <gtest/gtest.h>

#include "core/json.h"
#include "policy/audit.h"
#include "policy/permission.h"

namespace pf {
namespace {

using nlohmann::json;

TEST(AdminToolsTest, ProjectRequestsAreReadAndRefused) {
  std::string why;
  auto r = parse_project_request(
      R"({"name": "#payments-api", "repository": "https://git.example.com/pay/api.git",
          "branch": "main", "purpose": "the payments API", "private": true})",
      &why);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->name, "payments-api");  // a leading '#' dropped
  EXPECT_EQ(r->repository, "https://git.example.com/pay/api.git");
  EXPECT_EQ(r->branch, "main");
  EXPECT_TRUE(r->is_private);
  ASSERT_TRUE(parse_project_request(R"({"name": "notes"})", &why)) << why;

  auto refused = [](const std::string& args, const std::string& fragment) {
    std::string why;
    EXPECT_FALSE(parse_project_request(args, &why)) << args;
    EXPECT_NE(why.find(fragment), std::string::npos) << args << ": " << why;
    EXPECT_EQ(why.find("s3cret"), std::string::npos) << why;
  };
  refused(R"({"name": "Payments API"})", "slug");
  refused(R"({"name": ""})", "slug");
  refused(R"({"name": "-x"})", "slug");
  refused(R"({"name": ")" + std::string(65, 'a') + R"("})", "slug");
  refused(R"({"name": "x", "repository": "/srv/repo"})", "git URL");
  refused(R"({"name": "x", "repository": "file:///srv/pilotfish"})", "not cloned from chat");
  refused(R"({"name": "x", "repository": "https://me:s3cret@h/r.git"})", "password");
  refused(R"({"name": "x", "repository": "https://h/r", "branch": "--upload-pack=sh"})", "branch");
  refused(R"({"name": "x", "branch": "main"})", "needs a repository");
  refused("[1]", "JSON object");
  refused("not json", "JSON object");
}

TEST(AdminToolsTest, PathAccessRequests) {
  std::string why;
  auto g = parse_path_access(R"({"path": "/srv/shared", "mode": "write", "bot": "ops"})", true, &why);
  ASSERT_TRUE(g) << why;
  EXPECT_EQ(g->mode, "write");
  EXPECT_EQ(g->bot, "ops");
  EXPECT_EQ(parse_path_access(R"({"path": "/srv"})", true, &why)->mode, "read");
  EXPECT_FALSE(parse_path_access(R"({"path": "srv"})", true, &why));
  EXPECT_NE(why.find("absolute"), std::string::npos);
  EXPECT_FALSE(parse_path_access(R"({"path": "/srv", "mode": "all"})", true, &why));
  EXPECT_NE(why.find("read"), std::string::npos);
  // revoke takes no mode
  EXPECT_TRUE(parse_path_access(R"({"path": "/srv", "mode": "all"})", false, &why));
}

TEST(AdminToolsTest, EntriesAreAdminToolsThatDescribeTheirCall) {
  ToolRegistry tools;
  add_admin_tools(tools);
  for (const char* name : {"create_project", "grant_path_access", "revoke_path_access",
                           "list_agent_access", "get_platform_info"}) {
    const ToolEntry* e = tools.find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->permission, ToolPermission::kAdmin) << name;
    EXPECT_TRUE(is_admin_tool(name));
    // Only the bridge runs them.
    EXPECT_TRUE(e->run("{}", nullptr).contains("error")) << name;
  }
  EXPECT_FALSE(is_admin_tool("run_command"));
  std::string error;
  auto req = permission_request(
      tools, "create_project",
      R"({"name": "web", "repository": "https://h/web.git", "intent": "a channel for web"})",
      &error);
  ASSERT_TRUE(req) << error;
  EXPECT_EQ(req->command, "create channel #web for https://h/web.git");
  EXPECT_EQ(req->intent, "a channel for web");
  EXPECT_EQ(audit_target(*req), req->command);
  EXPECT_FALSE(permission_request(tools, "create_project", R"({"name": "Bad Name"})", &error));
  EXPECT_NE(error.find("slug"), std::string::npos);
  req = permission_request(tools, "grant_path_access", R"({"path": "/srv/x", "mode": "write"})",
                           &error);
  ASSERT_TRUE(req) << error;
  EXPECT_EQ(req->command, "grant this bot write access to /srv/x");
}

TEST(AdminToolsTest, TheEngineAsksAnAdminBotEveryTimeAndDeniesOthers) {
  ToolRegistry tools;
  add_admin_tools(tools);
  std::string error;
  PermissionRequest req = *permission_request(tools, "create_project", R"({"name": "web"})", &error);

  class Rules : public RuleStore {
   public:
    std::vector<StoredRule> permission_rules(const std::string& tool,
                                             const std::vector<std::string>&) override {
      return {{1, "global", tool, "*", "allow"}};
    }
    int64_t add_permission_rule(const StoredRule&) override { return 1; }
    std::vector<StoredRule> list_permission_rules(const std::string&) override { return {}; }
    int clear_permission_rules(const std::string&, const std::string&,
                               const std::string&) override {
      return 0;
    }
  } rules;
  PermissionsConfig cfg;
  std::string why;
  for (const char* spec : {"create_project", "shell(git)"})  // the first where it parses
    if (auto s = parse_permission_spec(spec, &why)) cfg.allow.push_back(*s);
  ASSERT_FALSE(cfg.allow.empty()) << why;
  PolicyContext ctx;
  ctx.channel = "mm:c1";
  ctx.bot = "ops";
  ctx.admin = true;
  ctx.yolo = true;  // autopilot
  ctx.config = &cfg;
  ctx.rules = &rules;
  Verdict v = decide_permission(req, ctx);
  EXPECT_EQ(v.action, Verdict::Action::kAsk);
  EXPECT_EQ(v.check, "admin");
  EXPECT_TRUE(v.remember_patterns.empty());  // the prompt offers no "always"

  ctx.admin = false;
  v = decide_permission(req, ctx);
  EXPECT_EQ(v.action, Verdict::Action::kDeny);
  EXPECT_NE(v.detail.find("only an admin bot"), std::string::npos);
}

TEST(AdminToolsTest, ChannelSlugs) {
  for (const char* ok : {"a", "web", "payments-api", "team_2", "0day"})
    EXPECT_TRUE(is_channel_slug(ok)) << ok;
  for (const char* bad : {"", "Web", "a b", "_x", "-x", "a.b", "ünï", "#x"})
    EXPECT_FALSE(is_channel_slug(bad)) << bad;
  EXPECT_TRUE(is_channel_slug(std::string(64, 'a')));
  EXPECT_FALSE(is_channel_slug(std::string(65, 'a')));
}

}  // namespace
}  // namespace pf
