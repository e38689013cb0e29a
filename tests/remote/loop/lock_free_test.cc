#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "tether/remote/loop/mailbox.h"
#include "tether/remote/loop/spsc_ring.h"

namespace tether::remote {
namespace {

TEST(SpscRing, DeliversEveryValueInOrderAcrossThreads) {
  SpscRing<std::uint64_t, 64> ring;
  constexpr std::uint64_t kCount = 200000;
  std::thread producer([&] {
    for (std::uint64_t i = 1; i <= kCount;) {
      if (ring.push(i)) ++i;
    }
  });
  std::uint64_t expected = 1, value = 0;
  while (expected <= kCount) {
    if (ring.pop(value)) {
      ASSERT_EQ(value, expected);
      ++expected;
    }
  }
  producer.join();
  EXPECT_FALSE(ring.pop(value));
}

TEST(SpscRing, RefusesWhenFullInsteadOfOverwriting) {
  SpscRing<int, 4> ring;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ring.push(i));
  EXPECT_FALSE(ring.push(99));
  int v;
  ASSERT_TRUE(ring.pop(v));
  EXPECT_EQ(v, 0);
}

struct Counted {
  static inline std::atomic<int> alive{0};
  int value;
  explicit Counted(int v) : value(v) { ++alive; }
  ~Counted() { --alive; }
};

TEST(Mailbox, LoopSeesTheNewestValueAndNothingLeaks) {
  {
    Mailbox<Counted> box;
    std::atomic<bool> done{false};
    std::thread publisher([&] {
      for (int i = 1; i <= 20000; ++i) box.publish(std::make_unique<Counted>(i));
      done = true;
    });
    Counted* current = nullptr;
    int last = 0;
    while (!done.load() || box.has_pending()) {
      if (done.load()) box.collect();  // the publisher's job once it has finished
      if (Counted* next = box.take()) {
        ASSERT_GT(next->value, last);  // never older than what the loop already has
        last = next->value;
        box.retire(current);
        current = next;
      }
    }
    publisher.join();
    EXPECT_EQ(last, 20000);
    box.collect();
    delete current;
  }
  EXPECT_EQ(Counted::alive.load(), 0);
}

TEST(SeqLock, ReaderNeverSeesATornValue) {
  struct Pair {
    std::uint64_t a = 0, b = 0;
  };
  SeqLock<Pair> lock;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t i = 1; i < 300000; ++i) lock.store(Pair{i, ~i});
    done = true;
  });
  while (!done.load()) {
    const Pair p = lock.load();
    ASSERT_EQ(p.b, p.a == 0 ? 0 : ~p.a);
  }
  writer.join();
}

}  // namespace
}  // namespace tether::remote
