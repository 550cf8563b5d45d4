//===- cache/blob_store.cpp -----------------------------------------------===//

#include "cache/blob_store.h"

#include <llvm/Support/Errc.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <set>
#include <unistd.h>
#include <vector>

namespace kiln::cache {

namespace {

llvm::Error errnoError(int error, const llvm::Twine &what) {
  std::error_code code(error, std::generic_category());
  return llvm::createStringError(code, what + ": " + code.message());
}

llvm::Error writeAll(int fd, llvm::StringRef bytes, const std::string &path) {
  const char *data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return errnoError(errno, "cannot write '" + path + "'");
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  return llvm::Error::success();
}

/// A new file in `folder` for a blob on its way in, opened for writing.
/// Names are the process's id and a counter, not random letters: a random
/// name costs a system call per letter, and a build writes hundreds of
/// blobs. A name left by a process that crashed is skipped.
llvm::Error createTemporary(llvm::StringRef folder, int &fd, std::string &path) {
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    llvm::SmallString<256> candidate(folder);
    llvm::sys::path::append(candidate, llvm::formatv(".tmp-{0}-{1}", ::getpid(), counter++));
    path = candidate.str().str();
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0)
      return llvm::Error::success();
    if (errno != EEXIST && errno != EINTR)
      return errnoError(errno, "cannot create a file in '" + folder + "'");
  }
  return errnoError(EEXIST, "cannot create a file in '" + folder + "'");
}

} // namespace

std::string BlobStore::packedPath(llvm::StringRef root) {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, "packed", "blobs.sqlite");
  return path.str().str();
}

std::string BlobStore::pathOf(llvm::StringRef digest) const {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, digest.take_front(2), digest.drop_front(2));
  return path.str().str();
}

std::optional<uint64_t> BlobStore::sizeOf(llvm::StringRef digest) const {
  if (packed)
    if (std::optional<uint64_t> size = packed->sizeOf(digest))
      return size;
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(pathOf(digest), size))
    return std::nullopt;
  return size;
}

bool BlobStore::startsWith(llvm::StringRef digest, llvm::StringRef prefix) const {
  if (packed && packed->startsWith(digest, prefix))
    return true;
  int fd = ::open(pathOf(digest).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  std::string head(prefix.size(), '\0');
  ssize_t got = ::read(fd, head.data(), head.size());
  ::close(fd);
  return got == static_cast<ssize_t>(head.size()) && head == prefix;
}

BlobStatus BlobStore::read(llvm::StringRef digest, std::string &bytes,
                           std::optional<uint64_t> size) const {
  if (packed && (!size || isPacked(*size))) {
    BlobStatus status = packed->read(digest, bytes, size);
    if (status != BlobStatus::Missing)
      return status;
  }
  // Volatile: read, never map, as a damaged file might shrink under a map.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(pathOf(digest), /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false, /*IsVolatile=*/true);
  if (!buffer)
    return buffer.getError() == llvm::errc::no_such_file_or_directory ? BlobStatus::Missing
                                                                      : BlobStatus::Damaged;
  llvm::StringRef contents = (*buffer)->getBuffer();
  if ((size && contents.size() != *size) || digestOf(contents) != digest)
    return BlobStatus::Damaged;
  bytes.assign(contents.data(), contents.size());
  return BlobStatus::Ok;
}

llvm::Error BlobStore::putAll(llvm::ArrayRef<Blob> blobs) const {
  std::vector<Blob> small;
  for (const Blob &blob : blobs) {
    if (isPacked(blob.bytes.size()))
      small.push_back(blob);
    else if (llvm::Error error = putFile(blob.digest, blob.bytes))
      return error;
  }
  return small.empty() ? llvm::Error::success() : packed->putAll(small);
}

llvm::Error BlobStore::ensureAll(llvm::ArrayRef<Blob> blobs) const {
  std::vector<Blob> missing;
  for (const Blob &blob : blobs) {
    bool there = isPacked(blob.bytes.size()) ? packed->contains(blob.digest)
                                             : llvm::sys::fs::exists(pathOf(blob.digest));
    if (!there)
      missing.push_back(blob);
  }
  return putAll(missing);
}

llvm::Error BlobStore::putFile(llvm::StringRef digest, llvm::StringRef bytes) const {
  std::string existing;
  if (read(digest, existing, bytes.size()) == BlobStatus::Ok)
    return llvm::Error::success();
  std::string path = pathOf(digest);
  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  if (std::error_code error = llvm::sys::fs::create_directories(folder, /*IgnoreExisting=*/true,
                                                                llvm::sys::fs::all_all))
    return llvm::createStringError(error,
                                   "cannot create '" + folder.str() + "': " + error.message());
  int fd = -1;
  std::string temporaryPath;
  if (llvm::Error error = createTemporary(folder, fd, temporaryPath))
    return error;
  llvm::Error written = writeAll(fd, bytes, temporaryPath);
  if (::close(fd) != 0 && !written)
    written = errnoError(errno, "cannot write '" + temporaryPath + "'");
  if (!written && ::rename(temporaryPath.c_str(), path.c_str()) != 0)
    written = errnoError(errno, "cannot rename '" + temporaryPath + "'");
  if (written) {
    ::unlink(temporaryPath.c_str());
    return written;
  }
  return llvm::Error::success();
}

llvm::Error BlobStore::remove(llvm::StringRef digest) const {
  return removeAll(digest.str());
}

llvm::Error BlobStore::removeAll(llvm::ArrayRef<std::string> digests) const {
  llvm::Error removed = packed ? packed->remove(digests) : llvm::Error::success();
  for (const std::string &digest : digests) {
    std::string path = pathOf(digest);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT && !removed)
      removed = errnoError(errno, "cannot remove '" + path + "'");
  }
  return removed;
}

llvm::Error BlobStore::clear() const {
  llvm::Error cleared = packed ? packed->removeAll() : llvm::Error::success();
  forEachFile([&](llvm::StringRef, llvm::StringRef path) { ::unlink(path.str().c_str()); }, {});
  return cleared;
}

void BlobStore::forEach(const std::function<void(llvm::StringRef digest)> &visit,
                        const std::function<void(llvm::StringRef path)> &leftover) const {
  std::set<std::string> packedDigests;
  if (packed)
    llvm::consumeError(packed->forEach([&](llvm::StringRef digest) {
      packedDigests.insert(digest.str());
      visit(digest);
    }));
  forEachFile(
      [&](llvm::StringRef digest, llvm::StringRef) {
        if (!packedDigests.count(digest.str()))
          visit(digest);
      },
      leftover);
}

void BlobStore::forEachFile(
    const std::function<void(llvm::StringRef digest, llvm::StringRef path)> &visit,
    const std::function<void(llvm::StringRef path)> &leftover) const {
  std::error_code error;
  for (llvm::sys::fs::directory_iterator folder(root, error), end; !error && folder != end;
       folder.increment(error)) {
    llvm::StringRef prefix = llvm::sys::path::filename(folder->path());
    if (folder->type() != llvm::sys::fs::file_type::directory_file || prefix.size() != 2)
      continue;
    std::error_code inner;
    for (llvm::sys::fs::directory_iterator file(folder->path(), inner); !inner && file != end;
         file.increment(inner)) {
      std::string digest = (prefix + llvm::sys::path::filename(file->path())).str();
      if (isHexDigest(digest))
        visit(digest, file->path());
      else if (leftover)
        leftover(file->path());
    }
  }
}

} // namespace kiln::cache
