//===- cache/remote/redis_store.h - Objects in a Redis server -*- C++ -*-===//
//
// A RemoteStore on Redis, over TCP (redis://[user:password@]host[:port][/db])
// or a Unix socket (redis+unix://[user:password@]/path/to/socket[?db=N], or
// redis+unix:/path/to/socket). The object of key K is the string at the
// Redis key "kiln:K": GET reads it (nil is a miss), SET writes it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/remote/remote_store.h"
#include "cache/remote/remote_url.h"

namespace kiln::cache::remote {

/// A store for `endpoint`, whose URL `url` has the scheme redis or
/// redis+unix; an error for a URL it cannot use. Does not connect.
llvm::Expected<std::unique_ptr<RemoteStore>> openRedisStore(const Endpoint &endpoint,
                                                            const RemoteUrl &url);

} // namespace kiln::cache::remote
