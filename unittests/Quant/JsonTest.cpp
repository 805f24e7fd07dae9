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
      // Strings are UTF-8 (RFC 8259): a stray continuation byte, a
      // truncated sequence, an overlong form, an encoded surrogate and a lone
      // low surrogate escape are refused; the byte is named, not echoed.
      {"\"a\x80\"", "line 1, column 3: expected valid UTF-8 in a string, got byte 0x80"},
      {"\"\xc3\"", "line 1, column 2: expected valid UTF-8 in a string, got byte 0xc3"},
      {"\"\xc0\xaf\"", "line 1, column 2: expected valid UTF-8 in a string, got byte 0xc0"},
      {"\"\xed\xa0\x80\"", "line 1, column 2: expected valid UTF-8 in a string, got byte 0xed"},
      {"\"\xf4\x90\x80\x80\"", "line 1, column 2: expected valid UTF-8 in a string, got byte 0xf4"},
      {"\"\\udc00\"", "line 1, column 2: expected a high surrogate before a low one, got '\\'"},
      {"\x01", "line 1, column 1: expected a value, got byte 0x01"},
  };
  for (const Case &c : cases) {
    Result<Json> j = parseJson(c.text);
    ASSERT_FALSE(j.ok()) << c.text;
    EXPECT_EQ(j.error(), c.error) << c.text;
  }
}

TEST(Json, NumbersThatAreNotIntegersStaySo) {
  // Found by humming-fuzz-json: -0E8 is the number -0.0, which dumped as
  // "-0" and read back as the integer 0 (dumped "0").
  for (const char *text : {"-0E8", "5.0", "1e2", "-0.0"}) {
    Result<Json> j = parseJson(text);
    ASSERT_TRUE(j.ok()) << text;
    EXPECT_FALSE(j->isInteger()) << text;
    Result<Json> again = parseJson(j->dump());
    ASSERT_TRUE(again.ok()) << j->dump();
    EXPECT_FALSE(again->isInteger()) << j->dump();
    EXPECT_EQ(again->dump(), j->dump());
  }
  EXPECT_EQ(parseJson("-0E8")->dump(), "-0.0");
  EXPECT_EQ(parseJson("1e2")->dump(), "100.0");
  EXPECT_EQ(parseJson("0.5")->dump(), "0.5");
}

TEST(Json, Utf8PassesThroughAndDumpsAsValidUtf8) {
  // Well-formed multi-byte text is kept as is (2, 3 and 4 bytes).
  Result<Json> j = parseJson("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\ud83d\\ude00\"");
  ASSERT_TRUE(j.ok()) << j.error();
  EXPECT_EQ(j->asString(), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf0\x9f\x98\x80");
  EXPECT_EQ(j->dump(), "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf0\x9f\x98\x80\"");
  // A string made outside the parser (a path, a message) with bytes that
  // are not UTF-8 still dumps as a valid document.
  EXPECT_EQ(Json::string("a\xff\xc3" "b").dump(), "\"a\\ufffd\\ufffdb\"");
  Result<Json> again = parseJson(Json::string("a\xff\xc3" "b").dump());
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->asString(), "a\xef\xbf\xbd\xef\xbf\xbd" "b");
}

TEST(Json, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  Result<Json> j = parseJson(deep);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().find("expected at most 200 levels of nesting"),
            std::string::npos);
}
