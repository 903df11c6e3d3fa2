package clean

import (
	"strings"
	"testing"
	"time"
)

func TestGoLayout(t *testing.T) {
	cases := map[string]string{
		"yyyy-MM-dd":                 "2006-01-02",
		"yyyy/M/d":                   "2006/1/2",
		"dd.MM.yyyy":                 "02.01.2006",
		"yyyyMMdd":                   "20060102",
		"yyyy-MM-ddTHH:mm:ssXXX":     "2006-01-02T15:04:05Z07:00",
		"yyyy-MM-dd HH:mm:ss.SSSSSS": "2006-01-02 15:04:05.999999",
	}
	for in, want := range cases {
		if got, err := GoLayout(in); err != nil || got != want {
			t.Errorf("GoLayout(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := GoLayout("yyyy-QQ"); err == nil {
		t.Error("unknown letters accepted")
	}
}

func TestParseTimeFormatsInOrder(t *testing.T) {
	f, err := compileFormats([]string{"yyyy-MM-dd", "yyyy/M/d", "dd.MM.yyyy"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in    string
		want  string
		idx   int
		error string
	}{
		{"2026-01-05", "2026-01-05", 0, ""},
		{"2026/1/7", "2026-01-07", 1, ""},
		{"2026/12/31", "2026-12-31", 1, ""},
		{"07.01.2026", "2026-01-07", 2, ""},
		{"2026-02-30", "", -1, "is not a real date"},
		{"2024-13-01", "", -1, "is not a real date"},
		{"Jan 5 2026", "", -1, "matches none of"},
	}
	for _, c := range cases {
		tm, idx, err := parseTime(c.in, f, time.UTC)
		if c.error != "" {
			if err == nil || !strings.Contains(err.Error(), c.error) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.error)
			}
			continue
		}
		if err != nil || tm.Format("2006-01-02") != c.want || idx != c.idx {
			t.Errorf("%q → %v (format %d), %v; want %s (format %d)", c.in, tm, idx, err, c.want, c.idx)
		}
	}
}

func FuzzParseTime(f *testing.F) {
	formats, _ := compileFormats([]string{"yyyy-MM-dd", "yyyy/M/d", "dd.MM.yyyy", "yyyyMMdd", "yyyy-MM-ddTHH:mm:ssXXX"})
	for _, s := range []string{"2026-01-05", "2026/1/7", "31.12.2026", "20260105", "2026-02-30", "2026-01-05T08:30:00+09:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, idx, err := parseTime(s, formats, time.UTC)
		if err != nil {
			return
		}
		// What parsed formats back to the same instant in its own format.
		back, err := time.ParseInLocation(formats[idx].layout, tm.In(tm.Location()).Format(formats[idx].layout), tm.Location())
		if err != nil || !back.Equal(tm) {
			t.Fatalf("%q parsed as %v with %s but does not round-trip: %v", s, tm, formats[idx].pattern, err)
		}
	})
}

func TestExcelSerialDates(t *testing.T) {
	f, err := compileFormats([]string{"yyyy-MM-dd", ExcelSerial})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ in, want string }{
		// Anchor: Excel shows 44927 as 2023-01-01; 2023 and 2024 have 365 + 366
		// days, so 45658 is 2025-01-01 and 45678 is 2025-01-21.
		{"45678", "2025-01-21T00:00:00"},
		{"45678.5", "2025-01-21T12:00:00"}, // .5 of a day is noon
		{"61", "1900-03-01T00:00:00"},      // the first serial after the fictitious 1900-02-29
		{"2026-03-19", "2026-03-19T00:00:00"},
	}
	for _, c := range cases {
		tm, _, err := parseTime(c.in, f, time.UTC)
		if err != nil || tm.Format("2006-01-02T15:04:05") != c.want {
			t.Errorf("%q → %v, %v; want %s", c.in, tm, err, c.want)
		}
	}
	for _, bad := range []string{"60", "1e5", "abc", "3000000"} {
		if _, _, err := parseTime(bad, f, time.UTC); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
