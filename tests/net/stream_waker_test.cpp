// StreamWaker: what a committed stream's wait owns is handed to its wake once, or to its drop when
// the waker is dropped uncalled (a worker stopping with streams waiting).
#include "smartlb/net/stream_waker.hpp"

#include <gtest/gtest.h>

namespace smartlb::net {
namespace stream_waker_test {  // named, not anonymous: tests/CMakeLists.txt

struct Owned {
  explicit Owned(int* d) : deleted(d) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { ++*deleted; }
  int* deleted;
};

int woken = 0, dropped = 0;
void wake(std::unique_ptr<Owned> o) {
  ++woken;
  EXPECT_NE(o, nullptr);
}
void drop(std::unique_ptr<Owned> o) {
  ++dropped;
  EXPECT_NE(o, nullptr);
}

TEST(StreamWaker, WakingHandsWhatItOwnsToItsWakeOnce) {
  woken = dropped = 0;
  int deleted = 0;
  {
    StreamWaker w = StreamWaker::make<Owned, wake, drop>(std::make_unique<Owned>(&deleted));
    StreamWaker moved(std::move(w));
    std::move(moved)();
    EXPECT_EQ(woken, 1);
    EXPECT_EQ(deleted, 1) << "the wake had it, and let it go";
    std::move(moved)();  // a second call does nothing
  }
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(dropped, 0);
}

TEST(StreamWaker, ADroppedWakerHandsWhatItOwnsToItsDrop) {
  woken = dropped = 0;
  int deleted = 0;
  {
    StreamWaker w = StreamWaker::make<Owned, wake, drop>(std::make_unique<Owned>(&deleted));
    StreamWaker moved(std::move(w));
  }
  EXPECT_EQ(woken, 0);
  EXPECT_EQ(dropped, 1);
  EXPECT_EQ(deleted, 1);
}

}  // namespace stream_waker_test
}  // namespace smartlb::net
