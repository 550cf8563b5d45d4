//===- cache/remote/upload_queue.cpp --------------------------------------===//

#include "cache/remote/upload_queue.h"

namespace kiln::cache::remote {

UploadQueue::UploadQueue(Upload upload, uint64_t maxBytes, size_t maxEntries)
    : upload(std::move(upload)), maxBytes(maxBytes), maxEntries(maxEntries) {}

UploadQueue::~UploadQueue() {
  finish(std::chrono::steady_clock::now());
}

bool UploadQueue::push(std::string key, std::shared_ptr<const std::string> bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  if (stopping || items.size() >= maxEntries || queuedBytes + bytes->size() > maxBytes)
    return false;
  queuedBytes += bytes->size();
  items.push_back({std::move(key), std::move(bytes)});
  if (!worker.joinable())
    worker = std::thread([this] { run(); });
  changed.notify_all();
  return true;
}

void UploadQueue::run() {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    changed.wait(lock, [&] { return stopping || !items.empty(); });
    if (items.empty())
      return;
    Item item = std::move(items.front());
    items.pop_front();
    queuedBytes -= item.bytes->size();
    busy = true;
    lock.unlock();
    upload(item.key, *item.bytes);
    lock.lock();
    busy = false;
    changed.notify_all();
  }
}

size_t UploadQueue::finish(std::chrono::steady_clock::time_point deadline) {
  size_t dropped = 0;
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_until(lock, deadline, [&] { return items.empty() && !busy; });
    dropped = items.size();
    items.clear();
    queuedBytes = 0;
    stopping = true;
    changed.notify_all();
  }
  if (worker.joinable())
    worker.join();
  return dropped;
}

} // namespace kiln::cache::remote
