// parse_json, the one door for JSON from outside: too deep is refused before it can overflow a
// stack later; everything else parses as nlohmann would.
#include <gtest/gtest.h>

#include "core/json.h"

namespace pf {
namespace {

std::string nested(int depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

TEST(ParseJson, RefusesNestingDeeperThanTheLimit) {
  std::string why;
  auto at_limit = parse_json(nested(kMaxJsonDepth), &why);
  ASSERT_FALSE(at_limit.is_discarded()) << why;
  EXPECT_EQ(at_limit.dump().size(), nested(kMaxJsonDepth).size());
  EXPECT_TRUE(parse_json(nested(kMaxJsonDepth + 1), &why).is_discarded());
  EXPECT_EQ(why, "nested deeper than 256 levels");
  std::string objects;
  for (int i = 0; i <= kMaxJsonDepth; ++i) objects += "{\"a\":";
  objects += '1';
  objects.append(kMaxJsonDepth + 1, '}');
  EXPECT_TRUE(parse_json(objects).is_discarded());
  EXPECT_TRUE(parse_json(nested(1000000)).is_discarded());
}

TEST(ParseJson, BracketsInsideStringsDoNotCount) {
  std::string text = R"({"a":")" + std::string(1000, '[') + R"(\"[{","b":[1]})";
  auto j = parse_json(text);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["a"].get<std::string>(), std::string(1000, '[') + "\"[{");
  EXPECT_EQ(j["b"][0], 1);
}

TEST(ParseJson, InvalidJsonSaysSo) {
  std::string why;
  EXPECT_TRUE(parse_json("{\"a\":", &why).is_discarded());
  EXPECT_EQ(why, "not valid JSON");
  EXPECT_TRUE(parse_json("", &why).is_discarded());
  EXPECT_TRUE(parse_json("]]]]", &why).is_discarded());  // closers alone are not depth
  EXPECT_EQ(why, "not valid JSON");
  EXPECT_EQ(parse_json("\"x\"").get<std::string>(), "x");
}

}  // namespace
// Members of outside JSON read without trusting their types. A float out of int64's range was
// cast as is by the Mattermost post parser (undefined behaviour; INT64_MIN on x86).
TEST(JsonMembers, WrongTypesAndOutOfRangeNumbersReadAsEmpty) {
  nlohmann::json j = nlohmann::json::parse(
      R"({"s": "x", "n": 42, "u": 18446744073709551615, "f": 12.9, "big": 1e300, "neg": -1e300,
          "arr": [1], "obj": {}, "t": true})");
  EXPECT_EQ(json_string(j, "s"), "x");
  EXPECT_EQ(json_string(j, "n"), "");
  EXPECT_EQ(json_string(j, "missing"), "");
  EXPECT_EQ(json_int(j, "n"), 42);
  EXPECT_EQ(json_int(j, "u"), INT64_MAX);
  EXPECT_EQ(json_int(j, "f"), 12);
  EXPECT_EQ(json_int(j, "big"), 0);
  EXPECT_EQ(json_int(j, "neg"), 0);
  for (const char* k : {"s", "arr", "obj", "t", "missing"}) EXPECT_EQ(json_int(j, k), 0) << k;
  EXPECT_EQ(json_int(nlohmann::json::array({1}), "n"), 0);
  EXPECT_EQ(json_string(nlohmann::json("text"), "s"), "");
}

}  // namespace pf
