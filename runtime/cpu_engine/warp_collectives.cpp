//===- runtime/cpu_engine/warp_collectives.cpp - PTX warp semantics -------===//
//
// shfl.sync follows the pseudocode of the PTX ISA:
//
//   segmask = c[12:8]; maxLane = (lane & segmask) | (c[4:0] & ~segmask)
//   minLane = lane & segmask; bval = b[4:0]
//   up:   j = lane - bval; valid = j >= maxLane
//   down: j = lane + bval; valid = j <= maxLane
//   bfly: j = lane ^ bval; valid = j <= maxLane
//   idx:  j = minLane | (bval & ~segmask); valid = j <= maxLane
//   result = valid ? value[j] : value[lane]
//
// Numba passes c = 0x1f (0 for up): whole warps, out-of-range reads return
// the lane's own value.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_engine/warp_collectives.h"

#include "module/cpu_kernel_abi.h"

namespace kiln::cpu_engine {

const char *collectiveName(CollectiveKind kind, uint32_t mode) {
  switch (kind) {
  case CollectiveKind::Syncwarp:
    return "syncwarp";
  case CollectiveKind::Shuffle:
    switch (mode) {
    case KILN_SHFL_IDX:
      return "shfl_sync";
    case KILN_SHFL_UP:
      return "shfl_up_sync";
    case KILN_SHFL_DOWN:
      return "shfl_down_sync";
    case KILN_SHFL_BFLY:
      return "shfl_xor_sync";
    }
    return "shfl_sync";
  case CollectiveKind::Vote:
    switch (mode) {
    case KILN_VOTE_ALL:
      return "all_sync";
    case KILN_VOTE_ANY:
      return "any_sync";
    case KILN_VOTE_UNI:
      return "eq_sync";
    case KILN_VOTE_BALLOT:
      return "ballot_sync";
    }
    return "vote_sync";
  case CollectiveKind::MatchAny:
    return "match_any_sync";
  case CollectiveKind::MatchAll:
    return "match_all_sync";
  case CollectiveKind::ActiveMask:
    return "activemask";
  }
  return "warp collective";
}

uint64_t shuffleLane(uint32_t group, const uint64_t values[32], uint32_t lane, uint32_t mode,
                     uint32_t b, uint32_t c) {
  int32_t segmask = static_cast<int32_t>((c >> 8) & 0x1f);
  int32_t clamp = static_cast<int32_t>(c & 0x1f);
  int32_t self = static_cast<int32_t>(lane);
  int32_t bval = static_cast<int32_t>(b & 0x1f);
  int32_t maxLane = (self & segmask) | (clamp & ~segmask);
  int32_t minLane = self & segmask;
  int32_t source = self;
  bool valid = false;
  switch (mode) {
  case KILN_SHFL_UP:
    source = self - bval;
    valid = source >= maxLane;
    break;
  case KILN_SHFL_DOWN:
    source = self + bval;
    valid = source <= maxLane;
    break;
  case KILN_SHFL_BFLY:
    source = self ^ bval;
    valid = source <= maxLane;
    break;
  default: // KILN_SHFL_IDX
    source = minLane | (bval & ~segmask);
    valid = source <= maxLane;
    break;
  }
  if (!valid || !(group >> source & 1u))
    source = self;
  return values[source];
}

uint32_t voteGroup(uint32_t group, uint32_t predicates, uint32_t mode) {
  uint32_t yes = predicates & group;
  switch (mode) {
  case KILN_VOTE_ALL:
    return yes == group;
  case KILN_VOTE_ANY:
    return yes != 0;
  case KILN_VOTE_UNI:
    return yes == group || yes == 0;
  default: // KILN_VOTE_BALLOT
    return yes;
  }
}

uint32_t matchAnyLane(uint32_t group, const uint64_t values[32], uint32_t lane) {
  uint32_t result = 0;
  for (uint32_t other = 0; other < 32; ++other)
    if ((group >> other & 1u) && values[other] == values[lane])
      result |= 1u << other;
  return result;
}

uint32_t matchAllGroup(uint32_t group, const uint64_t values[32], bool &allEqual) {
  allEqual = true;
  bool seen = false;
  uint64_t first = 0;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    if (!(group >> lane & 1u))
      continue;
    if (!seen) {
      first = values[lane];
      seen = true;
    } else if (values[lane] != first) {
      allEqual = false;
    }
  }
  return allEqual ? group : 0;
}

} // namespace kiln::cpu_engine
