package clean

import (
	"sync"
	"time"
)

// A fast path for the fixed-width ISO forms of dates and timestamps
// (yyyy-MM-dd, yyyy-MM-dd HH:mm:ss[.fraction], with T, with Z or ±hh:mm).
// It reads only values in exactly that shape with every field in range,
// and returns what time.ParseInLocation returns for them; anything else —
// another shape, a field out of range (month 13, Feb 29 of a common year),
// a comma before the fraction, more than nine fraction digits — is left to
// time.ParseInLocation, which accepts or refuses it with its own message.
// isodates_test.go compares the two on generated inputs.

// isoShape is the shape a Go layout reads.
type isoShape struct {
	// clock: the layout has a time of day after the date, separated by sep.
	clock bool
	sep   byte
	// zone: the layout ends in Z07:00 (Z, or ±hh:mm).
	zone bool
}

var isoShapes = map[string]*isoShape{
	"2006-01-02": {},
}

func init() {
	for _, sep := range []byte{' ', 'T'} {
		base := "2006-01-02" + string(sep) + "15:04:05"
		// A layout without a fraction reads one all the same, as
		// time.Parse does after the seconds.
		for _, frac := range []string{"", ".999", ".999999", ".999999999"} {
			isoShapes[base+frac] = &isoShape{clock: true, sep: sep}
			isoShapes[base+frac+"Z07:00"] = &isoShape{clock: true, sep: sep, zone: true}
		}
	}
}

// isoShapeOf is the shape of a layout, or nil when it has none.
func isoShapeOf(layout string) *isoShape { return isoShapes[layout] }

// digits2 reads two ASCII digits at s[i:i+2].
func digits2(s string, i int) (int, bool) {
	a, b := s[i]-'0', s[i+1]-'0'
	if a > 9 || b > 9 {
		return 0, false
	}
	return int(a)*10 + int(b), true
}

// daysIn is the length of month m (1..12) of year y (proleptic Gregorian).
func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parse reads s in the shape; ok is false when s is not exactly in it.
func (sh *isoShape) parse(s string, loc *time.Location) (time.Time, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	y1, ok1 := digits2(s, 0)
	y2, ok2 := digits2(s, 2)
	mo, ok3 := digits2(s, 5)
	d, ok4 := digits2(s, 8)
	if !ok1 || !ok2 || !ok3 || !ok4 || mo < 1 || mo > 12 {
		return time.Time{}, false
	}
	y := y1*100 + y2
	if d < 1 || d > daysIn(mo, y) {
		return time.Time{}, false
	}
	if !sh.clock {
		if len(s) != 10 {
			return time.Time{}, false
		}
		return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, loc), true
	}
	if len(s) < 19 || s[10] != sh.sep || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	h, ok1 := digits2(s, 11)
	mi, ok2 := digits2(s, 14)
	sec, ok3 := digits2(s, 17)
	if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	i, nsec := 19, 0
	if i < len(s) && s[i] == '.' {
		n := 0
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if n++; n > 9 {
				return time.Time{}, false
			}
			nsec = nsec*10 + int(s[i]-'0')
		}
		if n == 0 {
			return time.Time{}, false
		}
		for ; n < 9; n++ {
			nsec *= 10
		}
	}
	if !sh.zone {
		if i != len(s) {
			return time.Time{}, false
		}
		return time.Date(y, time.Month(mo), d, h, mi, sec, nsec, loc), true
	}
	rest := s[i:]
	if rest == "Z" {
		return time.Date(y, time.Month(mo), d, h, mi, sec, nsec, time.UTC), true
	}
	if len(rest) != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return time.Time{}, false
	}
	zh, ok1 := digits2(rest, 1)
	zm, ok2 := digits2(rest, 4)
	if !ok1 || !ok2 || zh > 23 || zm > 59 {
		return time.Time{}, false
	}
	off := (zh*60 + zm) * 60
	if rest[0] == '-' {
		off = -off
	}
	// As time.Parse: the instant of the wall clock at that offset, in loc
	// when loc has that offset then, else in a fixed zone of the offset.
	u := time.Date(y, time.Month(mo), d, h, mi, sec, nsec, time.UTC).Add(-time.Duration(off) * time.Second)
	if _, o := u.In(loc).Zone(); o == off {
		return u.In(loc), true
	}
	return u.In(fixedZone(off)), true
}

// fixedZones caches the unnamed fixed zones of the offsets seen.
var fixedZones sync.Map

func fixedZone(off int) *time.Location {
	if z, ok := fixedZones.Load(off); ok {
		return z.(*time.Location)
	}
	z, _ := fixedZones.LoadOrStore(off, time.FixedZone("", off))
	return z.(*time.Location)
}
