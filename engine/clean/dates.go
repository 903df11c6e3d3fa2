package clean

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultDateFormats are accepted when a date column declares none.
var DefaultDateFormats = []string{"yyyy-MM-dd"}

// DefaultTimestampFormats are accepted when a timestamp column declares none.
var DefaultTimestampFormats = []string{
	"yyyy-MM-ddTHH:mm:ss.SSSSSSXXX", "yyyy-MM-ddTHH:mm:ssXXX", "yyyy-MM-dd HH:mm:ss.SSSSSS", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-ddTHH:mm:ss",
}

// layoutTokens maps the plan's date pattern tokens to Go layout elements,
// longest first.
var layoutTokens = []struct{ tok, layout string }{
	{"yyyy", "2006"}, {"yy", "06"},
	{"MMM", "Jan"}, {"MM", "01"}, {"M", "1"},
	{"dd", "02"}, {"d", "2"},
	{"HH", "15"}, {"mm", "04"}, {"ss", "05"},
	{"SSSSSSSSS", "999999999"}, {"SSSSSS", "999999"}, {"SSS", "999"},
	{"XXX", "Z07:00"}, {"Z", "-0700"},
}

// ExcelSerial is the date pattern for Excel serial numbers (days since
// 1899-12-30, a fraction for the time of day), as CSV exports of Excel
// sheets carry them.
const ExcelSerial = "excel"

// GoLayout turns a pattern such as "yyyy/M/d" into a Go time layout.
func GoLayout(pattern string) (string, error) {
	if pattern == ExcelSerial {
		return ExcelSerial, nil
	}
	var b strings.Builder
	for i := 0; i < len(pattern); {
		matched := false
		for _, t := range layoutTokens {
			if strings.HasPrefix(pattern[i:], t.tok) {
				b.WriteString(t.layout)
				i += len(t.tok)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		c := pattern[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			if c == 'T' {
				b.WriteByte('T')
				i++
				continue
			}
			return "", fmt.Errorf("date pattern %q: unknown letter %q", pattern, c)
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

type dateFormat struct {
	pattern string
	layout  string
	// iso is the fixed-width ISO shape the layout reads (isoDates.go), or
	// nil: those values are read without time.Parse.
	iso *isoShape
}

func compileFormats(patterns []string) ([]dateFormat, error) {
	out := make([]dateFormat, 0, len(patterns))
	for _, p := range patterns {
		l, err := GoLayout(p)
		if err != nil {
			return nil, err
		}
		out = append(out, dateFormat{pattern: p, layout: l, iso: isoShapeOf(l)})
	}
	return out, nil
}

// parseTime tries each format in order; it returns the index of the format
// that matched. Go's parser rejects impossible dates (2026-02-30).
func parseTime(s string, formats []dateFormat, loc *time.Location) (time.Time, int, error) {
	var firstErr error
	for i, f := range formats {
		if f.pattern == ExcelSerial {
			if t, ok := excelSerial(s, loc); ok {
				return t, i, nil
			}
			continue
		}
		if f.iso != nil {
			if t, ok := f.iso.parse(s, loc); ok {
				return t, i, nil
			}
		}
		t, err := time.ParseInLocation(f.layout, s, loc)
		if err == nil {
			return t, i, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.pattern
	}
	reason := "matches none of " + strings.Join(names, ", ")
	if firstErr != nil && strings.Contains(firstErr.Error(), "out of range") {
		reason = "is not a real date (" + strings.TrimPrefix(firstErr.Error(), "parsing time ") + ")"
	}
	return time.Time{}, -1, fmt.Errorf("%q %s", s, reason)
}

// excelSerial reads an Excel serial date: 45678 is 2025-01-22, 45678.5 is
// noon that day. Serials before 61 (Excel's fictitious 1900-02-29) and after
// 9999-12-31 are refused.
func excelSerial(s string, loc *time.Location) (time.Time, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 61 || f > 2958465 || strings.ContainsAny(s, "eE") {
		return time.Time{}, false
	}
	days := math.Floor(f)
	secs := math.Round((f - days) * 86400)
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, loc)
	return base.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second), true
}
