// The lease keeper (bridge/lease_keeper.h) with a scripted lease: every bot held without one; a
// lease held elsewhere is taken over once its holder is gone; a lost lease lets the bot go at
// the next check (the owner told first, the lease released); a failed take-over is retried.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/lease_keeper.h"

#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "recording_adapter.h"

namespace pf {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// A lease whose holders the test decides: "other" holds a key until freed; held keys can be
// taken away as a dead database session would.
class ScriptedLease : public BotLease {
 public:
  std::map<std::string, std::string> holder;  // key -> "me" or "other"
  std::vector<std::string> released;
  bool try_acquire(const std::string& key) override {
    if (holder.count(key) && holder[key] != "me") return false;
    holder[key] = "me";
    return true;
  }
  bool still_held(const std::string& key) override {
    return holder.count(key) && holder[key] == "me";
  }
  void release(const std::string& key) override {
    released.push_back(key);
    if (holder.count(key) && holder[key] == "me") holder.erase(key);
  }
};

class LeaseKeeperTest : public ::testing::Test {
 protected:
  LeaseKeeperTest() {
    adapters_.push_back(std::make_unique<RecordingAdapter>("mm", "alpha"));
    adapters_.push_back(std::make_unique<RecordingAdapter>("slack", "beta"));
  }
  void run_for(milliseconds d) {
    io_.restart();
    io_.run_for(d);
  }

  asio::io_context io_;
  std::vector<std::unique_ptr<ChannelAdapter>> adapters_;
  std::vector<std::string> taken_, lost_;
  bool fail_take_over_ = false;
  LeaseKeeper keeper_{io_,
                      {[this](ChannelAdapter& a) -> asio::awaitable<void> {
                         if (fail_take_over_) throw Error("cannot connect");
                         taken_.push_back(a.bot());
                         keeper_.hold(a);
                         co_return;
                       },
                       [this](ChannelAdapter& a) { lost_.push_back(a.bot()); }}};
  ScriptedLease lease_;
};

TEST_F(LeaseKeeperTest, WithoutALeaseEveryBotIsHeldOnceConnected) {
  ChannelAdapter& a = *adapters_[0];
  EXPECT_FALSE(keeper_.shared());
  EXPECT_TRUE(keeper_.try_acquire(a));
  EXPECT_FALSE(keeper_.holds(a));  // not until it connected
  keeper_.hold(a);
  EXPECT_TRUE(keeper_.holds(a));
  EXPECT_TRUE(keeper_.still_ours(a));
  keeper_.watch(adapters_);  // nothing to watch without a lease
  run_for(milliseconds(50));
  EXPECT_TRUE(taken_.empty());
}

TEST_F(LeaseKeeperTest, ABotIsTakenOverOnceItsHolderIsGone) {
  keeper_.set_lease(&lease_, milliseconds(20));
  lease_.holder["mm:alpha"] = "other";
  EXPECT_FALSE(keeper_.try_acquire(*adapters_[0]));
  ASSERT_TRUE(keeper_.try_acquire(*adapters_[1]));
  keeper_.hold(*adapters_[1]);
  keeper_.watch(adapters_);
  run_for(milliseconds(100));
  EXPECT_TRUE(taken_.empty());      // alpha's holder is alive
  lease_.holder.erase("mm:alpha");  // its session ended
  run_for(milliseconds(100));
  ASSERT_EQ(taken_, std::vector<std::string>{"alpha"});
  EXPECT_TRUE(keeper_.holds(*adapters_[0]));
  EXPECT_EQ(keeper_.takeovers(), 1);
  EXPECT_EQ(keeper_.lost(), 0);
}

TEST_F(LeaseKeeperTest, ALostLeaseLetsTheBotGoAtTheNextCheck) {
  keeper_.set_lease(&lease_, milliseconds(20));
  ChannelAdapter& b = *adapters_[1];
  ASSERT_TRUE(keeper_.try_acquire(b));
  keeper_.hold(b);
  lease_.holder["slack:beta"] = "other";  // lost, and another process took it
  keeper_.watch(adapters_);
  run_for(milliseconds(100));
  EXPECT_EQ(lost_, std::vector<std::string>{"beta"});
  EXPECT_FALSE(keeper_.holds(b));
  EXPECT_EQ(keeper_.lost(), 1);
  EXPECT_NE(std::find(lease_.released.begin(), lease_.released.end(), "slack:beta"),
            lease_.released.end());
  EXPECT_FALSE(keeper_.still_ours(b));
  keeper_.let_go(b);  // a no-op now
  EXPECT_EQ(keeper_.lost(), 1);
}

TEST_F(LeaseKeeperTest, AFailedTakeOverIsReleasedAndTriedAgain) {
  keeper_.set_lease(&lease_, milliseconds(20));
  fail_take_over_ = true;
  keeper_.watch(adapters_);
  run_for(milliseconds(70));
  EXPECT_TRUE(taken_.empty());
  EXPECT_FALSE(keeper_.holds(*adapters_[0]));
  EXPECT_FALSE(lease_.still_held("mm:alpha"));  // released for another process to try
  fail_take_over_ = false;
  run_for(milliseconds(100));
  EXPECT_EQ(taken_.size(), 2u);
  EXPECT_EQ(keeper_.takeovers(), 2);
  keeper_.stop();
  lease_.holder.clear();
  run_for(milliseconds(60));
  EXPECT_TRUE(lost_.empty());  // stopped: no more checks
}

}  // namespace
}  // namespace pf
