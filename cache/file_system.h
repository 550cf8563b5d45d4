//===- cache/file_system.h - What kind of file system a folder is on -*- C++ -*-===//
//
// SQLite's WAL mode needs shared memory between processes, which network
// file systems do not provide. statfs() tells them apart: NFS, SMB/CIFS,
// FUSE (sshfs, s3fs, ...), 9p, Ceph, AFS, Lustre, GPFS and GlusterFS count
// as network file systems. KILN_CACHE_TEST_NETWORK_FS=1 makes every folder
// count as one, for the cache's tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

namespace kiln::cache {

/// The network file system `path` is on ("nfs", "cifs", "fuse", ...), or
/// nothing for a local one (or when statfs fails).
std::optional<std::string> networkFileSystem(llvm::StringRef path);

} // namespace kiln::cache
