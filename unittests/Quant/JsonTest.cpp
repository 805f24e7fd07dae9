//===- JsonTest.cpp - The JSON reader -------------------------------------===//

#include "Humming/Quant/Json.h"

#include <gtest/gtest.h>

using namespace humming;

TEST(Json, ParsesAndDumps) {
  Result<Json> j = parseJson(R"( {"a": [1, -2.5e3, true, null, "x\n\u00e9\ud83d\ude00"],
                                  "b": {"c": 9007199254740993}} )");
  ASSERT_TRUE(j.ok()) << j.error();
  const Json *a = j->get("a");
  ASSERT_TRUE(a && a->isArray());
  EXPECT_TRUE(a->items()[0].isInteger());
  EXPECT_EQ(a->items()[1].asNumber(), -2500.0);
  EXPECT_FALSE(a->items()[1].isInteger());
  EXPECT_EQ(a->items()[4].asString(), "x\n\xc3\xa9\xf0\x9f\x98\x80");
  // Integers stay exact beyond 2^53.
  EXPECT_EQ(j->get("b")->get("c")->asInteger(), 9007199254740993LL);
  Result<Json> again = parseJson(j->dump());
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->dump(), j->dump());
  EXPECT_EQ(parseJson(j->dump(2))->dump(), j->dump());
}

TEST(Json, ErrorsSayWhereAndWhat) {
  struct Case {
    const char *text, *error;
  } cases[] = {
      {"", "line 1, column 1: expected a value, got the end of the input"},
      {"{\"a\": 1,}", "line 1, column 9: expected a member name, got '}'"},
      {"[1 2]", "line 1, column 4: expected ',' or ']', got '2'"},
      {"{\"a\":1}\n x", "line 2, column 2: expected the end of the input, got 'x'"},
      {"\"abc", "line 1, column 5: expected a closing '\"', got the end of the input"},
      {"{\"a\": 1, \"a\": 2}",
       "line 1, column 10: expected unique member names ('a' repeats), got '\"'"},
      {"tru", "line 1, column 1: expected 'true', got 't'"},
      {"-", "line 1, column 2: expected a digit, got the end of the input"},
      {"1.", "line 1, column 3: expected a digit after '.', got the end of the input"},
      {"\"\\x\"", "line 1, column 3: expected a valid escape, got 'x'"},
      {"\"\\u12\"", "line 1, column 6: expected 4 hex digits after '\\u', got '\"'"},
  };
  for (const Case &c : cases) {
    Result<Json> j = parseJson(c.text);
    ASSERT_FALSE(j.ok()) << c.text;
    EXPECT_EQ(j.error(), c.error) << c.text;
  }
}

TEST(Json, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  Result<Json> j = parseJson(deep);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().find("expected at most 200 levels of nesting"),
            std::string::npos);
}
