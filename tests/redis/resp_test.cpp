// RESP through hiredis: commands formatted binary-safe, replies read whole, however the bytes
// are split.
#include "smartlb/redis/resp.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb::redis {
namespace resp_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(Resp, FormatsACommandAsAnArrayOfBulkStrings) {
  const std::vector<std::string> args = {"SET", "k", std::string("a\0b\r\n", 5)};
  EXPECT_EQ(format_command(args), std::string("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na\0b\r\n\r\n", 31));
}

TEST(Resp, ReadsEveryKindOfReply) {
  RespReader r;
  ASSERT_TRUE(r.feed("+OK\r\n-ERR no\r\n:42\r\n$-1\r\n$3\r\nabc\r\n*2\r\n:1\r\n*1\r\n$1\r\nx\r\n"));
  auto ok = r.next();
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->is("OK"));
  auto err = r.next();
  ASSERT_TRUE(err);
  EXPECT_TRUE(err->is_error());
  EXPECT_EQ(err->text, "ERR no");
  auto n = r.next();
  ASSERT_TRUE(n);
  EXPECT_EQ(n->as_integer(), 42);
  auto nil = r.next();
  ASSERT_TRUE(nil);
  EXPECT_TRUE(nil->is_nil());
  auto s = r.next();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, RedisValue::Kind::String);
  EXPECT_EQ(s->text, "abc");
  auto a = r.next();
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->is_array());
  ASSERT_EQ(a->elements.size(), 2u);
  EXPECT_EQ(a->elements[0].integer, 1);
  ASSERT_EQ(a->elements[1].elements.size(), 1u);
  EXPECT_EQ(a->elements[1].elements[0].text, "x");
  EXPECT_FALSE(r.next());
}

TEST(Resp, AReplySplitAnywhereIsReadOnceComplete) {
  const std::string wire = "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n";
  for (std::size_t cut = 1; cut < wire.size(); ++cut) {
    RespReader r;
    ASSERT_TRUE(r.feed(wire.substr(0, cut)));
    EXPECT_FALSE(r.next()) << cut;
    ASSERT_TRUE(r.feed(wire.substr(cut)));
    auto v = r.next();
    ASSERT_TRUE(v) << cut;
    EXPECT_EQ(v->elements[2].text, "hello");
  }
}

TEST(Resp, GarbageIsAProtocolError) {
  RespReader r;
  r.feed("?what\r\n");
  EXPECT_THROW(r.next(), std::runtime_error);
}

TEST(Resp, AnArrayOfMillionsOfElementsIsAnErrorNotAnAllocation) {
  // Found by fuzz_redis_input: hiredis would calloc the element pointers (3 GB) at the header.
  RespReader r;
  r.feed("*370500170\r\n");
  try {
    r.next();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("370500170 elements"), std::string::npos) << e.what();
  }
  RespReader nested;  // the bound holds inside an array too
  nested.feed("*2\r\n:1\r\n*100000\r\n");
  EXPECT_THROW(nested.next(), std::runtime_error);
  RespReader fine;
  fine.feed("*3\r\n:1\r\n:2\r\n:3\r\n");
  const auto v = fine.next();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->elements.size(), 3u);
}

TEST(Resp, IntegersInStringsAreReadAsIntegers) {
  RedisValue v;
  v.kind = RedisValue::Kind::String;
  v.text = "1700000000123";
  EXPECT_EQ(v.as_integer(), 1700000000123);
  v.text = "12x";
  EXPECT_FALSE(v.as_integer());
}

}  // namespace resp_test
}  // namespace smartlb::redis
