package gates

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/engine/source/s3src"
)

// What gate 3 reads of each file.
//
// Every matched file is sampled: its first rows, its last rows and rows
// from seeded-random places in between (one in each of eight equal
// stretches), an equal share of the table's
// rows (ProposeOptions.MaxRows, at least sampleMinPerFile per file). The
// random places come from a seed made of the file's name and size, so the
// same input gives the same proposal. A CSV, TSV or NDJSON file in UTF-8 or
// a single-byte encoding that is a local file or an S3 object (ranged
// reads) is read at those places: after a seek the reader starts at a
// record that files.Resync proves to be one (a quoted field may hold line
// breaks), and a place where it cannot is left out. Other files (Parquet,
// xlsx, UTF-16 and multi-byte encodings) are read through, keeping a
// seeded reservoir of rows and the last rows, up to readThroughFileBytes
// per file and readThroughTableBytes per table; a local Parquet file cut
// off by that budget gives the last rows of its last row group too, any
// other file so cut is named in the finding ("only the first rows of …").
// A file small enough is read whole.
//
// The file's data rows are counted when it was read whole (or when its
// metadata says, Parquet), else estimated: the rows of its head and tail
// plus the bytes in between times the rows per byte measured at the random
// places (each place a byte-uniform draw, so the mean of their densities
// is unbiased).

const (
	sampleMinPerFile      = 3
	sampleSpots           = 8
	readThroughTableBytes = 256 << 20
	resyncWindow          = 256 << 10
)

// readThroughFileBytes is how much of one file is read through (a
// variable for tests).
var readThroughFileBytes int64 = 64 << 20

// Sampling says how a file was read for gate 3.
type Sampling string

const (
	// SampledWhole: every row was read.
	SampledWhole Sampling = "whole"
	// SampledSpread: its first, last and random rows.
	SampledSpread Sampling = "spread"
	// SampledFirst: only its first rows (read through up to the budget).
	SampledFirst Sampling = "first"
	// SampledNone: not read (unreadable, or the rows were used up).
	SampledNone Sampling = ""
)

// unitSample is what was read of one unit.
type unitSample struct {
	fr    run.FileResult
	cols  []string
	rows  [][2][]string // values, nulls ("1")
	how   Sampling
	est   int64 // its data rows: counted (exact) or estimated
	exact bool
	read  int64 // bytes read through, against the table's budget
}

func (us *unitSample) add(row source.Row, ncols int) {
	vals := make([]string, ncols)
	nulls := make([]string, ncols)
	for j := range vals {
		if j < len(row.Values) && (row.Nulls == nil || !row.Nulls[j]) {
			vals[j] = row.Values[j]
		} else {
			nulls[j] = "1"
		}
	}
	us.rows = append(us.rows, [2][]string{vals, nulls})
}

// rowBytes is about how many bytes of the file a row took.
func rowBytes(row source.Row) int64 {
	if row.Raw != nil {
		return int64(len(row.Raw)) + 1
	}
	n := int64(len(row.Values))
	for _, v := range row.Values {
		n += int64(len(v))
	}
	return n
}

// randomAccess returns the unit's bytes for ranged reads, when the source
// has them (a local file, an S3 object).
func randomAccess(ctx context.Context, src source.Source, u source.Unit) (io.ReaderAt, func(), bool) {
	switch s := src.(type) {
	case *files.Source:
		rc, err := s.OpenRaw(ctx, u)
		if err != nil {
			return nil, nil, false
		}
		ra, ok := rc.(io.ReaderAt)
		if !ok {
			rc.Close()
			return nil, nil, false
		}
		return ra, func() { rc.Close() }, true
	case *s3src.Source:
		key, sheet := files.SplitSheet(u.Path)
		if key == "" {
			key = s.Root.Key + u.Name
		}
		if sheet != "" || !strings.HasPrefix(key, s.Root.Key) || strings.Contains("/"+key+"/", "/../") {
			return nil, nil, false
		}
		return s.Client().NewReaderAt(ctx, s.Root.Bucket, key, u.Size), func() {}, true
	}
	return nil, nil, false
}

// spreadSource reports whether a source's units are files or objects,
// sampled at their start, end and random places (a database table is
// read from its first rows).
func spreadSource(src source.Source) bool {
	switch src.(type) {
	case *files.Source, *s3src.Source:
		return true
	}
	return false
}

func unitSeed(u source.Unit) (uint64, uint64) {
	h := fnv.New64a()
	h.Write([]byte(u.Name))
	return h.Sum64(), uint64(u.Size)
}

// sampleUnit reads share rows of one unit (see the comment above); budget
// is what may still be read through.
func sampleUnit(ctx context.Context, src source.Source, u source.Unit, so source.Options, share, budget int64) (*unitSample, error) {
	us := &unitSample{fr: run.FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "read"}}
	rd, err := src.Open(ctx, u, so)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		us.fr.Status, us.fr.Error = "unreadable", err.Error()
		return us, nil
	}
	defer func() { rd.Close() }()
	headN := max(1, share/3)
	tailN := max(1, share/3)
	randN := max(0, share-headN-tailN)
	var headBytes, headRecs, lineCount int64
	eof := false
	cols := rd.Columns()
	for int64(len(us.rows)) < headN {
		row, err := rd.Next()
		if err == io.EOF {
			eof = true
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			us.fr.Status, us.fr.Error = "unreadable", err.Error()
			us.cols = rd.Columns()
			us.how, us.est = SampledFirst, int64(len(us.rows))
			return us, nil
		}
		us.fr.RowsRead++
		lineCount++
		headBytes += rowBytes(row)
		if len(cols) == 0 {
			cols = rd.Columns()
		}
		if row.Kind == source.Data {
			headRecs++
			us.add(row, len(cols))
		}
	}
	us.cols = rd.Columns()
	if eof {
		us.how, us.est, us.exact = SampledWhole, headRecs, true
		return us, nil
	}
	format, _ := files.Format(so.Format, strings.TrimSuffix(u.Name, "#"))
	enc := ""
	if e, ok := rd.(interface{ Encoding() clean.Detection }); ok {
		enc = e.Encoding().Name
	}
	var dia files.Dialect
	if d, ok := rd.(interface{ Dialect() files.Dialect }); ok {
		dia = d.Dialect()
	}
	// A little over where the head ended (a CRLF counts one more byte, a
	// byte order mark three), so that no random place falls in the head.
	headEnd := headBytes + lineCount + 3
	avg := max(int64(1), headBytes/max(int64(1), lineCount))
	tailBytes := tailN*avg*2 + 4096
	seekable := (format == "csv" || format == "tsv" || format == "ndjson") && (enc == clean.UTF8 || enc == clean.Windows1252) &&
		(format == "ndjson" || (dia.Delimiter < 128 && dia.Quote < 128 && dia.Delimiter > 0 && dia.Quote > 0)) &&
		u.Size-headEnd > 4*tailBytes
	if seekable {
		if ra, done, ok := randomAccess(ctx, src, u); ok {
			defer done()
			rd.Close()
			return us, us.seek(ctx, ra, u, so, format, enc, dia, headEnd, headRecs, avg, tailN, randN, tailBytes)
		}
	}
	if err := us.through(ctx, rd, u, headBytes, headRecs, tailN, randN, budget); err != nil {
		return nil, err
	}
	if fs, ok := src.(*files.Source); ok && format == "parquet" && us.how == SampledFirst && us.fr.Status == "read" {
		// A Parquet file larger than the budget: its last row group too.
		lg, err := fs.OpenLastRowGroup(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return us, nil
		}
		defer lg.Close()
		var ring [][2][]string
		var bytes int64
		for bytes < max(budget-us.read, readThroughFileBytes/4) {
			row, err := lg.Next()
			if err != nil {
				break
			}
			us.fr.RowsRead++
			bytes += rowBytes(row)
			if row.Kind != source.Data {
				continue
			}
			tmp := unitSample{}
			tmp.add(row, len(us.cols))
			if ring = append(ring, tmp.rows[0]); int64(len(ring)) > tailN {
				ring = ring[1:]
			}
		}
		us.read += bytes
		if len(ring) > 0 {
			us.rows = append(us.rows, ring...)
			us.how = SampledSpread
		}
	}
	return us, nil
}

// through reads the rest of rd: a seeded reservoir of randN rows and the
// last tailN rows, until the end or the budget.
func (us *unitSample) through(ctx context.Context, rd source.RowReader, u source.Unit, headBytes, headRecs, tailN, randN, budget int64) error {
	rng := rand.New(rand.NewPCG(unitSeed(u)))
	type kept struct {
		i   int64
		row [2][]string
	}
	var res []kept
	var ring []kept
	ncols := len(us.cols)
	var i, bytes, recs int64
	eof := false
	for bytes < budget {
		row, err := rd.Next()
		if err == io.EOF {
			eof = true
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			us.fr.Status, us.fr.Error = "unreadable", err.Error()
			break
		}
		us.fr.RowsRead++
		bytes += rowBytes(row)
		if row.Kind != source.Data {
			continue
		}
		recs++
		tmp := unitSample{}
		tmp.add(row, ncols)
		ring = append(ring, kept{i, tmp.rows[0]})
		i++
		if int64(len(ring)) <= tailN {
			continue
		}
		// The row leaving the last rows is offered to the reservoir.
		k := ring[0]
		ring = ring[1:]
		switch {
		case int64(len(res)) < randN:
			res = append(res, k)
		case randN > 0:
			if j := rng.Int64N(k.i + 1); j < randN {
				res[j] = k
			}
		}
	}
	us.read = bytes
	dropped := i > int64(len(res)+len(ring))
	slices.SortFunc(res, func(a, b kept) int { return int(a.i - b.i) })
	for _, k := range append(res, ring...) {
		us.rows = append(us.rows, k.row)
	}
	total := headRecs + recs
	switch {
	case eof:
		us.how, us.est, us.exact = SampledWhole, total, true
		if dropped {
			us.how = SampledSpread
		}
		return nil
	case us.fr.Status != "read":
		us.how, us.est = SampledFirst, total
		return nil
	}
	us.how = SampledFirst
	if n, ok := rd.(interface{ NumRows() int64 }); ok {
		us.est, us.exact = n.NumRows(), true
	} else if w, ok := rd.(interface{ Unwrap() source.RowReader }); ok {
		if n, ok := w.Unwrap().(interface{ NumRows() int64 }); ok {
			us.est, us.exact = n.NumRows(), true
		}
	}
	if !us.exact {
		us.est = total
		if read := headBytes + bytes; read > 0 && u.Size > read {
			us.est = int64(float64(total) * float64(u.Size) / float64(read))
		}
	}
	return nil
}

// seek reads the unit's tail and randN rows at seeded-random places
// between its head and its tail.
func (us *unitSample) seek(ctx context.Context, ra io.ReaderAt, u source.Unit, so source.Options, format, enc string, dia files.Dialect,
	headEnd, headRecs, avg, tailN, randN, tailBytes int64) error {
	size := u.Size
	tailStart := size - tailBytes
	spots := min(int64(sampleSpots), randN)
	rng := rand.New(rand.NewPCG(unitSeed(u)))
	// One random place in each of spots equal stretches between the head
	// and the tail: spread over the file, and a steadier estimate of its
	// rows than places drawn over the whole of it.
	offs := make([]int64, spots)
	stretch := (tailStart - headEnd) / max(1, spots)
	for k := range offs {
		offs[k] = headEnd + int64(k)*stretch + rng.Int64N(max(1, stretch))
	}
	opts := source.Options{Format: format, Delimiter: dia.Delimiter, Quote: dia.Quote, Header: "no", Columns: us.cols, Encoding: enc, MaxRecordBytes: so.MaxRecordBytes}
	var dens []float64
	var middle []([2][]string)
	for k, off := range offs {
		end := tailStart
		if k+1 < len(offs) {
			end = offs[k+1]
		}
		n := randN / spots
		if int64(k) < randN%spots {
			n++
		}
		seg, err := us.segment(ctx, ra, u.Name, format, opts, off, end, size, n, n*avg*4+16<<10, false)
		if err != nil {
			return err
		}
		if seg.bytes > 0 {
			dens = append(dens, float64(seg.recs)/float64(seg.bytes))
		}
		middle = append(middle, seg.rows...)
	}
	tail, err := us.segment(ctx, ra, u.Name, format, opts, tailStart, size, size, tailN, 0, true)
	if err != nil {
		return err
	}
	us.rows = append(append(us.rows, middle...), tail.rows...)
	// Rows: the head's and the tail's, counted; the bytes between at the
	// density measured at the random places (or, without one, the head's
	// and the tail's).
	between := float64(size - headEnd - tail.bytes)
	if !tail.ok {
		between = float64(size - headEnd)
	}
	var d float64
	if len(dens) > 0 {
		for _, x := range dens {
			d += x
		}
		d /= float64(len(dens))
	} else if b := float64(headEnd + tail.bytes); b > 0 {
		d = float64(headRecs+tail.recs) / b
	}
	us.est = headRecs + tail.recs + int64(max(0, between)*d+0.5)
	us.how = SampledSpread
	return nil
}

type segment struct {
	rows  [][2][]string
	recs  int64 // data rows read …
	bytes int64 // … in these bytes, from the first record found
	ok    bool  // a record start was found
}

// segment reads up to n data rows from the first record at or after off,
// stopping at end, or hint bytes after that record when hint is set; last keeps the last n rows of the rest of the unit
// instead. A record that runs past end (cut by the section) is dropped.
func (us *unitSample) segment(ctx context.Context, ra io.ReaderAt, name, format string, opts source.Options, off, end, size, n, hint int64, last bool) (segment, error) {
	var seg segment
	var win []byte
	var start int
	// A short window first; a longer one when it holds no proven start.
	for _, w := range []int64{files.QuoteFreeProof + 16<<10, resyncWindow} {
		win = make([]byte, min(w, size-off))
		got, err := ra.ReadAt(win, off)
		if err != nil && !errors.Is(err, io.EOF) {
			if ctx.Err() != nil {
				return seg, ctx.Err()
			}
			return seg, nil // a place that cannot be read is left out
		}
		win = win[:got]
		if format == "ndjson" {
			start = strings.IndexByte(string(win), '\n') + 1
			seg.ok = start > 0
		} else {
			start, seg.ok = files.Resync(win, byte(delimOf(opts.Delimiter)), byte(opts.Quote), off+int64(len(win)) >= size)
		}
		if seg.ok || off+int64(len(win)) >= size {
			break
		}
	}
	if !seg.ok {
		return seg, nil
	}
	lineEnd := int64(1)
	if start >= 2 && win[start-2] == '\r' {
		lineEnd = 2
	}
	from := off + int64(start)
	if from >= end {
		seg.ok = false
		return seg, nil
	}
	if hint > 0 {
		end = min(end, from+hint) // about the bytes of n rows, and more
	}
	rd, err := files.OpenStream(ctx, io.NewSectionReader(ra, from, end-from), name, format, opts)
	if err != nil {
		if ctx.Err() != nil {
			return seg, ctx.Err()
		}
		seg.ok = false
		return seg, nil
	}
	defer rd.Close()
	ncols := len(opts.Columns)
	var pending *source.Row
	var pendBytes int64
	commit := func() {
		if pending == nil {
			return
		}
		seg.bytes += pendBytes
		us.fr.RowsRead++
		// A data row as the loader splits it: no quoting or encoding
		// fault, the header's number of fields (the section's reader
		// counts fields from its own first record).
		ok := pending.Kind != source.Blank && pending.Rule == "" && len(pending.Values) == ncols &&
			(pending.Kind == source.Data || strings.HasPrefix(pending.Reason, "expected "))
		if ok || pending.Kind == source.Data {
			seg.recs++
		}
		if ok {
			tmp := unitSample{}
			tmp.add(*pending, ncols)
			seg.rows = append(seg.rows, tmp.rows[0])
			if last && int64(len(seg.rows)) > n {
				seg.rows = seg.rows[1:]
			}
		}
		pending = nil
	}
	for last || int64(len(seg.rows)) < n {
		row, err := rd.Next()
		if err == io.EOF {
			if end >= size {
				commit()
			}
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return seg, ctx.Err()
			}
			break
		}
		commit()
		r := row
		pending, pendBytes = &r, int64(len(row.Raw))+lineEnd
	}
	if !last && int64(len(seg.rows)) < n {
		commit() // a row followed it: it is whole
	}
	return seg, nil
}

// delimOf is the delimiter in use (a comma when none was detected).
func delimOf(d rune) rune {
	if d == 0 {
		return ','
	}
	return d
}

// sampledText says how the table's files were sampled, for the files
// finding: "sampled 12 of 12 files (first, last and random rows of
// each)", and the files that were not.
func sampledText(ev *TableEvidence) string {
	var spread, whole, first, broken, none []string
	for i, u := range ev.Units {
		how := SampledNone
		if i < len(ev.Sampling) {
			how = ev.Sampling[i]
		}
		if how == SampledFirst && i < len(ev.Files) && ev.Files[i].Status != "read" {
			broken = append(broken, u) // read up to an error
			continue
		}
		switch how {
		case SampledSpread:
			spread = append(spread, u)
		case SampledWhole:
			whole = append(whole, u)
		case SampledFirst:
			first = append(first, u)
		default:
			none = append(none, u)
		}
	}
	m := len(ev.Units)
	read := len(spread) + len(whole) + len(first) + len(broken)
	s := fmt.Sprintf("sampled %d of %d files", read, m)
	switch {
	case len(spread) == read:
		s += " (first, last and random rows of each)"
	case len(whole) == read:
		s += " (every row of each)"
	default:
		var parts []string
		if len(spread) > 0 {
			parts = append(parts, fmt.Sprintf("first, last and random rows of %d", len(spread)))
		}
		if len(whole) > 0 {
			parts = append(parts, fmt.Sprintf("every row of %d", len(whole)))
		}
		if len(first) > 0 {
			parts = append(parts, fmt.Sprintf("only the first rows of %s (no random access, read through up to %s)", listFirst(first, 3), mib(readThroughFileBytes)))
		}
		if len(broken) > 0 {
			parts = append(parts, fmt.Sprintf("the rows of %s before a read error", listFirst(broken, 3)))
		}
		s += " (" + strings.Join(parts, "; ") + ")"
	}
	if len(none) > 0 {
		s += fmt.Sprintf("; not sampled: %s", listFirst(none, 3))
	}
	return s
}
