package files

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// resyncCSV generates a CSV whose quoted notes hold line breaks, commas,
// doubled quotes and whole lines that look like records; it returns the
// bytes and the offset at which each record starts (its ground truth).
func resyncCSV(seed uint64, rows int) ([]byte, map[int]bool) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	starts := map[int]bool{}
	b.WriteString("id,note,amount\r\n")
	for i := 0; i < rows; i++ {
		starts[b.Len()] = true
		var note string
		switch rng.IntN(5) {
		case 0:
			note = "plain"
		case 1:
			note = fmt.Sprintf("\"line one\n%d,\"\"looks\"\",1.5\nline three\"", 900000+i)
		case 2:
			note = "\"a, b\n\n\"\"quoted\"\"\n\""
		case 3:
			note = fmt.Sprintf("\"%s\"", strings.Repeat("x,\n", rng.IntN(4)))
		default:
			note = `"ends with a quote """`
		}
		end := "\n"
		if rng.IntN(3) == 0 {
			end = "\r\n"
		}
		fmt.Fprintf(&b, "%d,%s,%d.%02d%s", i, note, rng.IntN(1000), rng.IntN(100), end)
	}
	starts[b.Len()] = true // the end: no record, but a boundary
	return b.Bytes(), starts
}

// TestResyncFindsTrueRecordStarts: from any offset, the record start
// Resync returns is one a reader from the start of the file finds (the
// generator's), never a line inside a quoted field.
func TestResyncFindsTrueRecordStarts(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		data, starts := resyncCSV(seed, 3000)
		rng := rand.New(rand.NewPCG(seed, 11))
		found := 0
		const tries = 2000
		for k := 0; k < tries; k++ {
			off := rng.IntN(len(data) - 1)
			win := data[off:min(len(data), off+4096)]
			pos, ok := Resync(win, ',', '"', off+4096 >= len(data))
			if !ok {
				continue
			}
			found++
			if !starts[off+pos] {
				t.Fatalf("seed %d: from offset %d Resync gave %d, not a record start (%q)", seed, off, off+pos, data[off+pos:min(len(data), off+pos+40)])
			}
		}
		if found < tries*9/10 {
			t.Errorf("seed %d: a record start found from %d of %d offsets; want nearly all", seed, found, tries)
		}
	}
}

// TestResyncGivesUpWithoutALineEnd: a window without a line feed, or one
// that ends inside the first line, has no proven start.
func TestResyncGivesUpWithoutALineEnd(t *testing.T) {
	for _, b := range []string{"", "abc", "a,b\nc,d", `"x` + "\n" + `y`} {
		if _, ok := Resync([]byte(b), ',', '"', false); ok {
			t.Errorf("%q: a start found", b)
		}
	}
}

// TestResyncPlainFields: in a window of plain fields (no quote), the start
// is the line after the first line feed once the window is long enough to
// rule out one quoted field, or reaches the end of the unit.
func TestResyncPlainFields(t *testing.T) {
	var b bytes.Buffer
	for i := 0; b.Len() < QuoteFreeProof+100; i++ {
		fmt.Fprintf(&b, "%d,2024-01-01,%d.50\n", i, i%97)
	}
	data := b.Bytes()
	nl := bytes.IndexByte(data[5:], '\n') + 6
	if pos, ok := Resync(data[5:], ',', '"', false); !ok || pos+5 != nl {
		t.Errorf("long window: %d %v, want %d", pos+5, ok, nl)
	}
	short := data[5:200]
	if _, ok := Resync(short, ',', '"', false); ok {
		t.Error("a short window without a quote: a start found, yet it may lie in one quoted field")
	}
	if pos, ok := Resync(data[len(data)-100:], ',', '"', true); !ok || data[len(data)-100+pos-1] != '\n' {
		t.Errorf("the end of the unit: %d %v", pos, ok)
	}
}

// TestResyncPlainThenQuoted: in long windows over plain rows followed by
// quoted fields with line breaks (and the other way round), every start
// found is a true record start.
func TestResyncPlainThenQuoted(t *testing.T) {
	quoted, qstarts := resyncCSV(3, 4000)
	var b bytes.Buffer
	starts := map[int]bool{}
	plain := func(n int) {
		for i := 0; i < n; i++ {
			starts[b.Len()] = true
			fmt.Fprintf(&b, "%d,plain note,%d.25\n", i, i%89)
		}
	}
	plain(8000)
	base := b.Len()
	body := quoted[bytes.IndexByte(quoted, '\n')+1:] // without its header
	for off := range qstarts {
		if off >= len("id,note,amount\r\n") {
			starts[base+off-len("id,note,amount\r\n")] = true
		}
	}
	b.Write(body)
	plain(8000)
	data := b.Bytes()
	rng := rand.New(rand.NewPCG(3, 4))
	found := 0
	for k := 0; k < 1000; k++ {
		off := rng.IntN(len(data) - 1)
		win := data[off:min(len(data), off+256<<10)]
		pos, ok := Resync(win, ',', '"', off+len(win) >= len(data))
		if !ok {
			continue
		}
		found++
		if !starts[off+pos] {
			t.Fatalf("from offset %d Resync gave %d, not a record start (%q)", off, off+pos, data[off+pos:min(len(data), off+pos+40)])
		}
	}
	if found < 900 {
		t.Errorf("a record start found from %d of 1000 offsets", found)
	}
}
