package clean

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the test's time zones, whatever the machine has

	"github.com/lima-lake/lima/engine/plan"
)

// slowParseTime is parseTime as it was before the ISO fast path: every
// format through time.ParseInLocation. The expectations of the fast path
// come from it.
func slowParseTime(s string, formats []dateFormat, loc *time.Location) (time.Time, int, error) {
	plain := make([]dateFormat, len(formats))
	for i, f := range formats {
		plain[i] = dateFormat{pattern: f.pattern, layout: f.layout}
	}
	return parseTime(s, plain, loc)
}

// genISO makes date and timestamp text around the ISO shapes: valid
// values, fields out of range (month 0 and 13, day 0, 31 of a 30-day month,
// Feb 29 of common and leap years, 1900 and 2000, hour 24, minute and
// second 60), one-digit fields, other separators, fractions of 0–11 digits
// and with a comma, zones (Z, ±hh:mm in and out of range, a bare +05) and
// trailing garbage.
func genISO(rng *rand.Rand) string {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	years := []int{0, 1, 1600, 1900, 1970, 2000, 2023, 2024, 2026, 2100, 2400, 9999}
	y := years[rng.IntN(len(years))]
	if rng.IntN(2) == 0 {
		y = rng.IntN(10000)
	}
	mo, d := rng.IntN(14), rng.IntN(33)
	if rng.IntN(3) == 0 {
		mo, d = 2, 28+rng.IntN(3)
	}
	var b strings.Builder
	if rng.IntN(30) == 0 {
		fmt.Fprintf(&b, "%d-%d-%d", y, mo, d)
	} else {
		fmt.Fprintf(&b, "%04d-%02d-%02d", y, mo, d)
	}
	if rng.IntN(4) > 0 {
		b.WriteString(pick("T", " ", "T", " ", "t", "_"))
		h, mi, s := rng.IntN(26), rng.IntN(62), rng.IntN(62)
		if rng.IntN(3) > 0 {
			h, mi, s = rng.IntN(24), rng.IntN(60), rng.IntN(60)
		}
		if rng.IntN(30) == 0 {
			fmt.Fprintf(&b, "%d:%d:%d", h, mi, s)
		} else {
			fmt.Fprintf(&b, "%02d:%02d:%02d", h, mi, s)
		}
		if rng.IntN(2) == 0 {
			b.WriteString(pick(".", ".", ".", ","))
			for n := rng.IntN(12); n > 0; n-- {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		switch rng.IntN(6) {
		case 0:
			b.WriteString("Z")
		case 1, 2:
			zh, zm := rng.IntN(26), rng.IntN(62)
			if rng.IntN(2) == 0 {
				zh, zm = rng.IntN(15), []int{0, 30, 45}[rng.IntN(3)]
			}
			fmt.Fprintf(&b, "%s%02d:%02d", pick("+", "-"), zh, zm)
		case 3:
			b.WriteString(pick("+05", "+0530", "z", "UTC"))
		}
	}
	if rng.IntN(20) == 0 {
		b.WriteString(pick(" ", "x", "0", "Z", ".5"))
	}
	if rng.IntN(40) == 0 {
		return " " + b.String()
	}
	return b.String()
}

// parseTime with the fast path returns what the slow path returns — the
// same instant, wall clock, zone offset and name, the same matching format,
// the same error text — for every format list and time zone, on generated
// valid and invalid inputs.
func TestISOFastPathMatchesTimeParse(t *testing.T) {
	var locs []*time.Location
	for _, name := range []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "America/Sao_Paulo", "Pacific/Chatham"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	lists := [][]string{DefaultDateFormats, DefaultTimestampFormats, {"yyyy-MM-dd", "yyyy/M/d"}, {"yyyy/M/d", "yyyy-MM-dd"},
		{"yyyy-MM-dd HH:mm:ss.SSS"}, {"yyyy-MM-ddTHH:mm:ss.SSSSSSSSSXXX", "yyyy-MM-dd"}, {"yyyy-MM-dd HH:mm:ssXXX"}, {"excel", "yyyy-MM-dd"}}
	rng := rand.New(rand.NewPCG(5, 6))
	inputs := []string{"2024-02-29", "2023-02-29", "1900-02-29", "2000-02-29", "2026-04-31", "2026-12-31", "0000-01-01", "9999-12-31",
		"2026-01-02 03:04:05", "2026-01-02T03:04:05.123456789Z", "2026-01-02T03:04:05.1234567891Z", "2026-01-02T24:00:00Z",
		"2026-01-02T23:59:60Z", "2026-03-29T02:30:00", "2026-03-08 02:30:00", "2026-01-02T03:04:05+24:00", "2026-01-02T03:04:05-00:00",
		"2026-01-02T03:04:05,5Z", "2026-01-02T03:04:05.Z", "2026-13-01", "2026-00-10", "2026-01-00", "45678"}
	for i := 0; i < 20000; i++ {
		inputs = append(inputs, genISO(rng))
	}
	fastHits := 0
	for _, pats := range lists {
		formats, err := compileFormats(pats)
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range locs {
			for _, s := range inputs {
				got, gi, gerr := parseTime(s, formats, loc)
				want, wi, werr := slowParseTime(s, formats, loc)
				if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) || gi != wi {
					t.Fatalf("%q %v in %v: fast (%v, %d, %v), time.Parse (%v, %d, %v)", s, pats, loc, got, gi, gerr, want, wi, werr)
				}
				if gerr != nil {
					continue
				}
				gn, go_ := got.Zone()
				wn, wo := want.Zone()
				if !got.Equal(want) || got.String() != want.String() || gn != wn || go_ != wo || got.Location().String() != want.Location().String() {
					t.Fatalf("%q %v in %v: fast %v (%s %d), time.Parse %v (%s %d)", s, pats, loc, got, gn, go_, want, wn, wo)
				}
				if formats[gi].iso != nil {
					if _, ok := formats[gi].iso.parse(s, loc); ok {
						fastHits++
					}
				}
			}
		}
	}
	if fastHits < 20000 {
		t.Fatalf("the fast path read only %d values: the generator misses its shapes", fastHits)
	}
}

// The whole cast of date and timestamp columns is unchanged: cells, fixes
// and errors equal those of a caster without the fast path.
func TestISODateColumnsCastAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, ty := range []plan.Type{{Kind: plan.Date}, {Kind: plan.Timestamp}, {Kind: plan.TimestampTZ}} {
		for _, pats := range [][]string{nil, {"yyyy-MM-dd", "yyyy/M/d"}, {"yyyy-MM-dd HH:mm:ss"}} {
			fast := &column{kind: kindOf(ty), loc: time.UTC, spec: ColumnSpec{Formats: pats}}
			f := pats
			if len(f) == 0 {
				f = DefaultDateFormats
				if ty.Kind != plan.Date {
					f = DefaultTimestampFormats
				}
			}
			var err error
			if fast.formats, err = compileFormats(f); err != nil {
				t.Fatal(err)
			}
			slow := *fast
			slow.formats = nil
			for _, df := range fast.formats {
				slow.formats = append(slow.formats, dateFormat{pattern: df.pattern, layout: df.layout})
			}
			for i := 0; i < 20000; i++ {
				s := genISO(rng)
				var gc, wc Cell
				gfx, gerr := fast.cast(s, &gc)
				wfx, werr := slow.cast(s, &wc)
				if gc != wc || fmt.Sprint(gfx) != fmt.Sprint(wfx) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Fatalf("%v %v cast(%q): fast %+v %v %v, slow %+v %v %v", ty, pats, s, gc, gfx, gerr, wc, wfx, werr)
				}
			}
		}
	}
}
