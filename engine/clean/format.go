package clean

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lima-lake/lima/engine/plan"
)

// FormatCell is the canonical text of a typed value: the form reports and
// gate 4 compare. Dates are yyyy-MM-dd, timestamps RFC 3339 with
// microseconds (UTC, "Z" only for zoned), decimals with their full scale.
func FormatCell(t plan.Type, c Cell) string {
	if c.Null {
		return "NULL"
	}
	switch kindOf(t) {
	case kInt, kLong:
		return strconv.FormatInt(c.I, 10)
	case kDouble:
		return strconv.FormatFloat(c.F, 'g', -1, 64)
	case kDecimal:
		return c.D.ToString(int32(t.Scale))
	case kDate:
		return time.Unix(c.I*86400, 0).UTC().Format("2006-01-02")
	case kTimestamp:
		return time.UnixMicro(c.I).UTC().Format("2006-01-02T15:04:05.000000")
	case kTimestampTZ:
		return time.UnixMicro(c.I).UTC().Format("2006-01-02T15:04:05.000000Z")
	case kBoolean:
		return strconv.FormatBool(c.I == 1)
	case kBinary:
		if utf8.ValidString(c.S) {
			return c.S
		}
		return strconv.Quote(c.S)
	}
	return c.S
}
