// The ask_user tool's shared parts (see ask_user.h): schema, argument rules, the question as
// shown, a reply read against the choices, and the results.
#include "agent/ask_user.h"

#include "core/json.h"
#include "core/text.h"

namespace pf {

using nlohmann::json;

namespace {

constexpr size_t kMaxQuestion = 2000, kMaxChoice = 200, kMaxChoices = 10;

}  // namespace

ToolEntry ask_user_tool() {
  json schema = {
      {"type", "object"},
      {"properties",
       {{"question", {{"type", "string"}, {"description", "One clear question."}}},
        {"choices",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"maxItems", kMaxChoices},
          {"description", "Optional answers to pick from (the person may still write their own)."}}}}},
      {"required", {"question"}}};
  ToolSpec spec{kAskUserTool,
                "Ask the person you are working for a question and wait for the answer: only when "
                "you cannot go on without them (a choice between approaches, a missing fact). "
                "Returns their answer, or that they did not reply.",
                std::move(schema)};
  return ToolEntry{std::move(spec), ToolPermission::kNone, 8192, nullptr,
                   [](const std::string&, Store*) -> json {
                     return no_user_answer("nobody can be asked here");
                   }};
}

std::optional<UserQuestion> parse_user_question(const std::string& arguments, std::string* error) {
  json args = parse_json(arguments);
  auto fail = [&](std::string why) -> std::optional<UserQuestion> {
    *error = std::move(why);
    return std::nullopt;
  };
  if (!args.is_object()) return fail("the arguments must be a JSON object");
  if (!args.contains("question") || !args["question"].is_string())
    return fail("question is required (a string)");
  UserQuestion q;
  q.question = trim_space(args["question"].get<std::string>());
  if (q.question.empty()) return fail("question is empty");
  if (code_points(q.question) > kMaxQuestion) return fail("question is over 2,000 characters");
  if (args.contains("choices") && !args["choices"].is_null()) {
    const json& c = args["choices"];
    if (!c.is_array()) return fail("choices must be a list of strings");
    if (c.size() > kMaxChoices) return fail("at most 10 choices");
    for (const json& item : c) {
      if (!item.is_string()) return fail("choices must be a list of strings");
      std::string choice = trim_space(item.get<std::string>());
      if (choice.empty() || code_points(choice) > kMaxChoice)
        return fail("each choice must be 1 to 200 characters");
      q.choices.push_back(std::move(choice));
    }
  }
  return q;
}

std::string question_text(const UserQuestion& q) {
  std::string out = "\u2753 " + q.question;
  for (size_t i = 0; i < q.choices.size(); ++i) {
    out += '\n';
    out += std::to_string(i + 1);
    out += ". ";
    out += q.choices[i];
  }
  out += q.choices.empty() ? "\n_Reply to answer._" : "\n_Reply with a number, or in your own words._";
  return out;
}

std::string chosen_answer(const UserQuestion& q, const std::string& reply) {
  std::string t = trim_space(reply);
  std::string n = t;
  if (!n.empty() && n.front() == '#') n.erase(0, 1);
  if (!n.empty() && (n.back() == '.' || n.back() == ')')) n.pop_back();
  if (!n.empty() && n.size() <= 2 && n.find_first_not_of("0123456789") == std::string::npos) {
    size_t i = std::stoul(n);
    if (i >= 1 && i <= q.choices.size()) return q.choices[i - 1];
  }
  for (const std::string& c : q.choices)
    if (ascii_lower(c) == ascii_lower(t)) return c;
  return t;
}

json user_answer(const std::string& answer, const std::string& by) {
  json out = {{"answer", answer}};
  if (!by.empty()) out["by"] = by;
  return out;
}

json no_user_answer(const std::string& why) {
  return {{"answer", nullptr}, {"note", "the user did not reply (" + why + "); go on as best you can"}};
}

}  // namespace pf
