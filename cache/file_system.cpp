//===- cache/file_system.cpp ----------------------------------------------===//

#include "cache/file_system.h"

#include <llvm/Support/Process.h>

#include <cstdint>
#include <sys/vfs.h>

namespace kiln::cache {

std::optional<std::string> networkFileSystem(llvm::StringRef path) {
  if (std::optional<std::string> test = llvm::sys::Process::GetEnv("KILN_CACHE_TEST_NETWORK_FS"))
    if (*test == "1")
      return std::string("test");
  struct statfs info;
  if (::statfs(path.str().c_str(), &info) != 0)
    return std::nullopt;
  struct Kind {
    uint64_t magic;
    const char *name;
  };
  static const Kind kinds[] = {
      {0x6969, "nfs"},        {0x517B, "smb"},       {0xFE534D42, "smb2"},    {0xFF534D42, "cifs"},
      {0x65735546, "fuse"},   {0x01021997, "9p"},    {0x00C36400, "ceph"},    {0x5346414F, "afs"},
      {0x0BD00BD0, "lustre"}, {0x47504653, "gpfs"},  {0x65735543, "fusectl"}, {0x73757245, "coda"},
      {0x564c, "ncp"},        {0x7461636f, "ocfs2"}, {0x01161970, "gfs2"},
  };
  uint64_t magic = static_cast<uint64_t>(static_cast<uint32_t>(info.f_type));
  for (const Kind &kind : kinds)
    if (kind.magic == magic)
      return std::string(kind.name);
  return std::nullopt;
}

} // namespace kiln::cache
