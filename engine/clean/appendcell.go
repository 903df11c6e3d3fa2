package clean

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lima-lake/lima/engine/plan"
)

// AppendCell appends FormatCell(t, c) to b, byte for byte, without making
// a string: the hot paths (the key set of a load) hash it from a reused
// buffer.
func AppendCell(b []byte, t plan.Type, c Cell) []byte {
	if c.Null {
		return append(b, "NULL"...)
	}
	switch kindOf(t) {
	case kInt, kLong:
		return strconv.AppendInt(b, c.I, 10)
	case kDouble:
		return strconv.AppendFloat(b, c.F, 'g', -1, 64)
	case kDecimal:
		return append(b, c.D.ToString(int32(t.Scale))...)
	case kDate:
		return appendDate(b, c.I)
	case kTimestamp:
		return time.UnixMicro(c.I).UTC().AppendFormat(b, "2006-01-02T15:04:05.000000")
	case kTimestampTZ:
		return time.UnixMicro(c.I).UTC().AppendFormat(b, "2006-01-02T15:04:05.000000Z")
	case kBoolean:
		return strconv.AppendBool(b, c.I == 1)
	case kBinary:
		if utf8.ValidString(c.S) {
			return append(b, c.S...)
		}
		return strconv.AppendQuote(b, c.S)
	}
	return append(b, c.S...)
}

// appendDate appends the yyyy-MM-dd text of a day number (days since
// 1970-01-01) as time.Format does; years outside 0000..9999 go through
// time.Format itself.
func appendDate(b []byte, days int64) []byte {
	y, m, d := civil(days)
	if y < 0 || y > 9999 {
		return time.Unix(days*86400, 0).UTC().AppendFormat(b, "2006-01-02")
	}
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// civil is the proleptic Gregorian date of a day number (days since
// 1970-01-01); Howard Hinnant's civil_from_days.
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z
	if z < 0 {
		era = z - 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysFromCivil is the day number of a proleptic Gregorian date (the
// inverse of civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if y < 0 {
		era = y - 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
