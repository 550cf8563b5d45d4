//===- tests/cache/remote/tier_parts_test.cpp - Breaker and upload queue --===//
//
// The two parts of the remote tier that decide how much a misbehaving remote
// can cost a build: when to stop asking it, and how uploads wait.
//
//===----------------------------------------------------------------------===//

#include "cache/remote/circuit_breaker.h"
#include "cache/remote/upload_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace kiln::cache::remote {
namespace {

using Verdict = CircuitBreaker::Verdict;
constexpr CircuitBreaker::Request kLookup = CircuitBreaker::Request::Lookup;
constexpr CircuitBreaker::Request kUpload = CircuitBreaker::Request::Upload;

TEST(CircuitBreaker, StopsAtOnceForFailuresThatWillNotMend) {
  for (RemoteFailure failure :
       {RemoteFailure::Unreachable, RemoteFailure::TimedOut, RemoteFailure::Unauthorized}) {
    for (CircuitBreaker::Request request : {kLookup, kUpload}) {
      CircuitBreaker breaker;
      EXPECT_EQ(breaker.recordFailure(failure, request), Verdict::Stop)
          << describeFailure(failure).str();
      EXPECT_FALSE(breaker.allowsRequests());
      EXPECT_EQ(breaker.recordFailure(failure, request), Verdict::Continue)
          << "stopping was reported twice (two warnings)";
    }
  }
}

TEST(CircuitBreaker, StopsAfterThreeLookupErrorsInARowOnly) {
  CircuitBreaker breaker;
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::ServerError, kLookup), Verdict::Continue);
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::BadReply, kLookup), Verdict::Continue);
  breaker.recordSuccess(kLookup);
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::ServerError, kLookup), Verdict::Continue)
      << "a success between errors did not reset the count";
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::ServerError, kLookup), Verdict::Continue);
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::ServerError, kLookup), Verdict::Stop);
  EXPECT_FALSE(breaker.allowsRequests());
}

TEST(CircuitBreaker, UploadsThatKeepFailingStopUploadsWhileLookupsSucceed) {
  // nginx answers a write to a full disk with 500; the lookups between the
  // uploads (404, a miss) succeed and must not hide the uploads' failures.
  CircuitBreaker breaker;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(breaker.recordFailure(RemoteFailure::ServerError, kUpload), Verdict::Continue);
    breaker.recordSuccess(kLookup);
  }
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::ServerError, kUpload), Verdict::StopUploads);
  EXPECT_FALSE(breaker.allowsUploads());
  EXPECT_TRUE(breaker.allowsRequests()) << "a server that cannot store stopped serving lookups";
}

TEST(CircuitBreaker, StopsAfterThreeSlowLookupsInARow) {
  CircuitBreaker breaker;
  EXPECT_EQ(breaker.recordSlowLookup(), Verdict::Continue);
  EXPECT_EQ(breaker.recordSlowLookup(), Verdict::Continue);
  breaker.recordSuccess(kLookup);
  EXPECT_EQ(breaker.recordSlowLookup(), Verdict::Continue)
      << "a quick answer between slow ones did not reset the count";
  EXPECT_EQ(breaker.recordSlowLookup(), Verdict::Continue);
  EXPECT_EQ(breaker.recordSlowLookup(), Verdict::Stop)
      << "a remote that answers each lookup just inside its time-out was kept";
  EXPECT_FALSE(breaker.allowsRequests());
}

TEST(CircuitBreaker, AFullServerStopsUploadsButNotLookups) {
  CircuitBreaker breaker;
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::TooLarge, kUpload), Verdict::SkipEntry);
  EXPECT_TRUE(breaker.allowsUploads()) << "one entry too large stopped every upload";
  EXPECT_EQ(breaker.recordFailure(RemoteFailure::Full, kUpload), Verdict::StopUploads);
  EXPECT_FALSE(breaker.allowsUploads());
  EXPECT_TRUE(breaker.allowsRequests()) << "a full server is still worth reading from";
}

TEST(UploadQueue, UploadsEverythingQueuedWhenGivenTime) {
  std::atomic<int> uploaded{0};
  UploadQueue queue([&](const std::string &, const std::string &) { ++uploaded; }, 1 << 20, 100);
  for (int i = 0; i < 50; ++i)
    ASSERT_TRUE(queue.push("k" + std::to_string(i), std::make_shared<const std::string>("x")));
  EXPECT_EQ(queue.finish(std::chrono::steady_clock::now() + std::chrono::minutes(1)), 0u);
  EXPECT_EQ(uploaded, 50);
}

TEST(UploadQueue, RefusesWhatDoesNotFit) {
  UploadQueue queue([](const std::string &, const std::string &) {}, 10, 100);
  EXPECT_FALSE(queue.push("big", std::make_shared<const std::string>(std::string(11, 'x'))))
      << "an entry larger than the queue's byte limit was queued";
}

TEST(UploadQueue, DropsWhatIsLeftAtTheDeadline) {
  std::promise<void> release, started;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> uploaded{0};
  std::atomic<bool> first{true};
  UploadQueue queue(
      [&](const std::string &, const std::string &) {
        if (first.exchange(false))
          started.set_value();
        released.wait();
        ++uploaded;
      },
      1 << 20, 100);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(queue.push("k" + std::to_string(i), std::make_shared<const std::string>("x")));
  // The first upload is stuck; the deadline passes with four still queued.
  started.get_future().wait();
  std::thread unblock([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    release.set_value();
  });
  size_t dropped = queue.finish(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  unblock.join();
  EXPECT_EQ(dropped, 4u);
  EXPECT_EQ(uploaded, 1) << "uploads queued past the deadline still ran";
  EXPECT_FALSE(queue.push("late", std::make_shared<const std::string>("x")))
      << "a finished queue took an upload";
}

} // namespace
} // namespace kiln::cache::remote
