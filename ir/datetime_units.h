//===- ir/datetime_units.h - NumPy's datetime64 units -----------*- C++ -*-===//
//
// The units of datetime64 and timedelta64 values and how they combine, as
// NumPy and Numba's npdatetime_helpers define them: years and months (whose
// length varies) convert only to each other by a constant factor; weeks and
// finer units convert to any finer unit by one; the generic unit (a value
// without a unit) converts to anything.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>

namespace kiln {

/// Numbered as NumPy numbers them: a larger code is a finer unit (the gap at
/// 3 is NumPy's business days, which datetime64 arithmetic never takes).
enum class DateTimeUnit : uint8_t {
  Year = 0,
  Month = 1,
  Week = 2,
  Day = 4,
  Hour = 5,
  Minute = 6,
  Second = 7,
  Millisecond = 8,
  Microsecond = 9,
  Nanosecond = 10,
  Picosecond = 11,
  Femtosecond = 12,
  Attosecond = 13,
  Generic = 14,
};

/// NumPy's spelling: "Y", "M", "W", "D", "h", ..., "as"; "" for generic.
llvm::StringRef dateTimeUnitName(DateTimeUnit unit);
std::optional<DateTimeUnit> dateTimeUnitNamed(llvm::StringRef name);

/// Whether a timedelta of unit `from` converts to unit `to` without losing
/// anything (Numba's can_cast_timedelta_units).
bool canCastTimedeltaUnits(DateTimeUnit from, DateTimeUnit to);
/// What a value of `from` is multiplied by to be in `to`, when that is an
/// integer (from generic: 1); none otherwise.
std::optional<int64_t> dateTimeConversionFactor(DateTimeUnit from, DateTimeUnit to);
/// The unit of datetime ± timedelta; none where years or months of a
/// timedelta meet a finer datetime.
std::optional<DateTimeUnit> combineDatetimeTimedeltaUnits(DateTimeUnit datetime,
                                                          DateTimeUnit timedelta);
/// The finer of two units; generic yields to the other.
DateTimeUnit finerDateTimeUnit(DateTimeUnit a, DateTimeUnit b);

} // namespace kiln
