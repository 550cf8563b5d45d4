//===- ir/datetime_units.cpp - NumPy's datetime64 units -------------------===//

#include "ir/datetime_units.h"

#include <llvm/ADT/StringSwitch.h>

namespace kiln {

namespace {

unsigned code(DateTimeUnit unit) {
  return static_cast<unsigned>(unit);
}

/// Each unit's factor to the next finer unit it converts to exactly.
std::optional<std::pair<DateTimeUnit, int64_t>> nextFinerUnit(DateTimeUnit unit) {
  switch (unit) {
  case DateTimeUnit::Year:
    return std::pair(DateTimeUnit::Month, 12);
  case DateTimeUnit::Week:
    return std::pair(DateTimeUnit::Day, 7);
  case DateTimeUnit::Day:
    return std::pair(DateTimeUnit::Hour, 24);
  case DateTimeUnit::Hour:
    return std::pair(DateTimeUnit::Minute, 60);
  case DateTimeUnit::Minute:
    return std::pair(DateTimeUnit::Second, 60);
  case DateTimeUnit::Second:
  case DateTimeUnit::Millisecond:
  case DateTimeUnit::Microsecond:
  case DateTimeUnit::Nanosecond:
  case DateTimeUnit::Picosecond:
  case DateTimeUnit::Femtosecond:
    return std::pair(static_cast<DateTimeUnit>(code(unit) + 1), 1000);
  default:
    return std::nullopt;
  }
}

} // namespace

llvm::StringRef dateTimeUnitName(DateTimeUnit unit) {
  static const char *const names[] = {"Y",  "M",  "W",  "B",  "D",  "h",  "m", "s",
                                      "ms", "us", "ns", "ps", "fs", "as", ""};
  return names[code(unit)];
}

std::optional<DateTimeUnit> dateTimeUnitNamed(llvm::StringRef name) {
  for (unsigned i = 0; i <= code(DateTimeUnit::Generic); ++i)
    if (i != 3 && dateTimeUnitName(static_cast<DateTimeUnit>(i)) == name)
      return static_cast<DateTimeUnit>(i);
  return std::nullopt;
}

bool canCastTimedeltaUnits(DateTimeUnit from, DateTimeUnit to) {
  if (from == to || from == DateTimeUnit::Generic)
    return true;
  if (code(from) > code(to) || to == DateTimeUnit::Generic)
    return false;
  // Years and months have no fixed length in finer units.
  return !(code(from) <= code(DateTimeUnit::Month) && code(to) > code(DateTimeUnit::Month));
}

std::optional<int64_t> dateTimeConversionFactor(DateTimeUnit from, DateTimeUnit to) {
  if (from == DateTimeUnit::Generic)
    return 1;
  int64_t factor = 1;
  DateTimeUnit unit = from;
  while (code(unit) < code(to)) {
    std::optional<std::pair<DateTimeUnit, int64_t>> next = nextFinerUnit(unit);
    if (!next)
      return std::nullopt;
    unit = next->first;
    factor *= next->second;
  }
  if (unit != to)
    return std::nullopt;
  return factor;
}

std::optional<DateTimeUnit> combineDatetimeTimedeltaUnits(DateTimeUnit datetime,
                                                          DateTimeUnit timedelta) {
  if (datetime == DateTimeUnit::Generic)
    return timedelta;
  if (timedelta == DateTimeUnit::Generic)
    return datetime;
  if (code(timedelta) < code(DateTimeUnit::Week) && code(datetime) >= code(DateTimeUnit::Week))
    return std::nullopt;
  return code(datetime) > code(timedelta) ? datetime : timedelta;
}

DateTimeUnit finerDateTimeUnit(DateTimeUnit a, DateTimeUnit b) {
  if (a == DateTimeUnit::Generic)
    return b;
  if (b == DateTimeUnit::Generic)
    return a;
  return code(b) > code(a) ? b : a;
}

} // namespace kiln
