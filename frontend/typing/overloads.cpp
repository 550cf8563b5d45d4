//===- frontend/typing/overloads.cpp --------------------------------------===//

#include "frontend/typing/overloads.h"

#include <algorithm>
#include <tuple>

namespace kiln {

const OverloadCase *resolveOverload(TypeContext &types, llvm::ArrayRef<OverloadCase> cases,
                                    llvm::ArrayRef<const Type *> args, bool allowUnsafe) {
  // Rating: (unsafe conversions, safe conversions, promotions); lower wins.
  using Rating = std::tuple<unsigned, unsigned, unsigned>;
  const OverloadCase *best = nullptr;
  Rating bestRating;
  for (const OverloadCase &candidate : cases) {
    if (candidate.args.size() != args.size())
      continue;
    Rating rating{0, 0, 0};
    bool viable = true;
    for (size_t i = 0; i < args.size() && viable; ++i) {
      std::optional<Conversion> conversion = types.canConvert(args[i], candidate.args[i]);
      if (!conversion || (!allowUnsafe && *conversion == Conversion::Unsafe)) {
        viable = false;
        break;
      }
      switch (*conversion) {
      case Conversion::Exact:
        break;
      case Conversion::Promote:
        ++std::get<2>(rating);
        break;
      case Conversion::Safe:
        ++std::get<1>(rating);
        break;
      case Conversion::Unsafe:
        ++std::get<0>(rating);
        break;
      }
    }
    // Strictly better only: ties keep the earlier case, as Numba's stable sort.
    if (viable && (!best || rating < bestRating)) {
      best = &candidate;
      bestRating = rating;
    }
  }
  return best;
}

CaseList &CaseList::integerBinary() {
  const Type *int64 = types.int64();
  const Type *uint64 = types.uint64();
  add(int64, {int64, int64});
  add(int64, {int64, uint64});
  add(int64, {uint64, int64});
  add(uint64, {uint64, uint64});
  return *this;
}

CaseList &CaseList::sameType(llvm::ArrayRef<const Type *> domain) {
  for (const Type *type : domain)
    add(type, {type, type});
  return *this;
}

CaseList &CaseList::sameTypeTo(llvm::ArrayRef<const Type *> domain, const Type *result) {
  for (const Type *type : domain)
    add(result, {type, type});
  return *this;
}

std::vector<const Type *> CaseList::signedDomain() const {
  return {types.integer(8, true), types.integer(16, true), types.integer(32, true),
          types.integer(64, true)};
}
std::vector<const Type *> CaseList::unsignedDomain() const {
  return {types.integer(8, false), types.integer(16, false), types.integer(32, false),
          types.integer(64, false)};
}
std::vector<const Type *> CaseList::realDomain() const {
  return {types.float32(), types.float64()};
}
std::vector<const Type *> CaseList::complexDomain() const {
  return {types.complex(64), types.complex(128)};
}

} // namespace kiln
