//===- cache/remote/upload_queue.h - Uploads off the build's path -*- C++ -*-===//
//
// A build never waits for an upload while it compiles: entries go into a
// bounded queue that one thread per remote drains. A full queue drops the
// entry (the remote misses it; the build goes on). At the end the build
// waits for what is queued, but only until a deadline; what is left then is
// dropped, and the one request in flight ends within its own time-out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::cache::remote {

class UploadQueue {
public:
  using Upload = std::function<void(const std::string &key, const std::string &bytes)>;

  UploadQueue(Upload upload, uint64_t maxBytes, size_t maxEntries);
  ~UploadQueue();
  UploadQueue(const UploadQueue &) = delete;
  UploadQueue &operator=(const UploadQueue &) = delete;

  /// Queues an upload; false, queueing nothing, when the queue is full or
  /// finished.
  bool push(std::string key, std::shared_ptr<const std::string> bytes);

  /// Waits until every queued upload is done or `deadline` passes, then
  /// stops the thread; returns how many queued uploads were dropped.
  size_t finish(std::chrono::steady_clock::time_point deadline);

private:
  struct Item {
    std::string key;
    std::shared_ptr<const std::string> bytes;
  };
  void run();

  Upload upload;
  uint64_t maxBytes;
  size_t maxEntries;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Item> items;
  uint64_t queuedBytes = 0;
  bool busy = false;
  bool stopping = false;
  std::thread worker;
};

} // namespace kiln::cache::remote
