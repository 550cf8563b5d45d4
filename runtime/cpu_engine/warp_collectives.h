//===- runtime/cpu_engine/warp_collectives.h - PTX warp semantics -*- C++ -*-===//
//
// What each lane of a warp gets from shfl.sync, vote.sync and match.sync,
// given what every lane of the group passed. Pure functions of a completed
// rendezvous; the fiber scheduler decides when a group is complete.
//
// `group` is the set of lanes taking part (bit i = lane i): the lanes named
// in the mask that are still alive. A lane that reads from a lane outside the
// group (PTX leaves the value undefined) gets its own value, so results stay
// deterministic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace kiln::cpu_engine {

enum class CollectiveKind : uint8_t { Syncwarp, Shuffle, Vote, MatchAny, MatchAll, ActiveMask };

/// The name a user knows the collective by, e.g. "shfl_down_sync".
const char *collectiveName(CollectiveKind kind, uint32_t mode);

/// shfl.sync for `lane`: `mode` is a KilnShuffleMode, `b` the source lane,
/// delta or lane mask, `c` PTX's packed clamp/segment-mask operand.
uint64_t shuffleLane(uint32_t group, const uint64_t values[32], uint32_t lane, uint32_t mode,
                     uint32_t b, uint32_t c);

/// vote.sync: `predicates` has bit i set when lane i's predicate is true.
uint32_t voteGroup(uint32_t group, uint32_t predicates, uint32_t mode);

/// match.any.sync for `lane`: the lanes of the group holding lane's value.
uint32_t matchAnyLane(uint32_t group, const uint64_t values[32], uint32_t lane);

/// match.all.sync: the group if all its lanes hold one value, else 0.
uint32_t matchAllGroup(uint32_t group, const uint64_t values[32], bool &allEqual);

} // namespace kiln::cpu_engine
