package gates

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/internal/s3test"
)

// wantGranularity is the partition rule computed from a generator's own
// truth: the finest of day, month and year whose parts would each hold
// minBytes of the input's bytes, over the whole input's span.
func wantGranularity(bytes int64, lo, hi time.Time, minBytes int64) string {
	days := math.Floor(hi.Sub(lo).Hours()/24) + 1
	for _, g := range []struct {
		name  string
		parts float64
	}{{"day", days}, {"month", math.Max(1, days/30.4)}, {"year", math.Max(1, days/365.25)}} {
		if float64(bytes)/g.parts >= float64(minBytes) {
			return g.name
		}
	}
	return ""
}

// TestProposeSpanFromWholeInput: twelve monthly files, each starting with
// hundreds of carried-over January rows and then the rows of its month.
// Read from their first rows only, the input spans January and gets
// day(); read at their first, last and random rows it spans the year and
// gets month(). The finding counts the files sampled; the row estimate is
// near the generator's count. Several seeds.
func TestProposeSpanFromWholeInput(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			fs := map[string]string{}
			var total int64
			var lo, hi time.Time
			var bytes int64
			id := 0
			for m := 1; m <= 12; m++ {
				var b strings.Builder
				b.WriteString("order_id,order_date,amount\n")
				carry := 200 + rng.IntN(100)
				rows := 1500 + rng.IntN(1500)
				for i := 0; i < carry+rows; i++ {
					d := time.Date(2025, 1, 1+rng.IntN(31), 0, 0, 0, 0, time.UTC)
					if i >= carry {
						days := time.Date(2025, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
						d = time.Date(2025, time.Month(m), 1+(i-carry)*days/rows, 0, 0, 0, 0, time.UTC)
					}
					if lo.IsZero() || d.Before(lo) {
						lo = d
					}
					if d.After(hi) {
						hi = d
					}
					id++
					fmt.Fprintf(&b, "%d,%s,%d.%02d\n", id, d.Format(time.DateOnly), rng.IntN(500), rng.IntN(100))
					total++
				}
				fs[fmt.Sprintf("orders_2025-%02d.csv", m)] = b.String()
				bytes += int64(b.Len())
			}
			minBytes := bytes / 100
			want := wantGranularity(bytes, lo, hi, minBytes) + "(order_date)"
			dir, p := writeExport(t, fs)
			o := ProposeOptions{Workspace: dir, MaxRows: 1200, partMinRows: 1000, partMinBytes: minBytes}
			pr, err := ProposeDataModel(context.Background(), p, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := pr.Plan.Tables["orders"].Partition; !slices.Equal(got, []string{want}) {
				t.Errorf("partition %v, want %s (the input spans %s … %s)\n%s", got, want, lo.Format(time.DateOnly), hi.Format(time.DateOnly), finding(t, pr.Findings, "orders: partition").Detail)
			}
			f := finding(t, pr.Findings, "orders: files")
			if !strings.Contains(f.Detail, "orders_*.csv matched 12 files; sampled 12 of 12 files (first, last and random rows of each)") {
				t.Errorf("files finding: %s", f.Detail)
			}
			ev := pr.Evidence["orders"]
			for _, c := range ev.Columns {
				if c.Profile.Name == "order_date" && !c.TimeMax.Equal(hi) {
					t.Errorf("latest date read %s, want %s (the last row of the last file)", c.TimeMax.Format(time.DateOnly), hi.Format(time.DateOnly))
				}
			}
			if r := float64(ev.EstRows) / float64(total); r < 0.8 || r > 1.25 {
				t.Errorf("about %d rows estimated, the files hold %d", ev.EstRows, total)
			}
			// Same input, same proposal.
			again, err := ProposeDataModel(context.Background(), p, o)
			if err != nil {
				t.Fatal(err)
			}
			if findingsText(again.Findings) != findingsText(pr.Findings) {
				t.Errorf("a second proposal differs:\n%s\nvs\n%s", findingsText(again.Findings), findingsText(pr.Findings))
			}
		})
	}
}

// TestProposeSeesLaterRows: a file whose first rows are clean and whose
// last third writes some dates as dd.MM.yyyy and some amounts as 12x.50:
// the proposal pins both date formats and names the amounts held back.
func TestProposeSeesLaterRows(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		var b strings.Builder
		b.WriteString("event_id,event_date,amount\n")
		const rows = 30000
		bad := 0
		for i := 0; i < rows; i++ {
			d := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*700/rows)
			date, amount := d.Format(time.DateOnly), fmt.Sprintf("%d.%02d", rng.IntN(900), rng.IntN(100))
			if i >= rows*2/3 {
				if rng.IntN(3) == 0 {
					date = d.Format("02.01.2006")
				}
				if rng.IntN(150) == 0 {
					amount, bad = fmt.Sprintf("%dx.50", rng.IntN(90)), bad+1
				}
			}
			fmt.Fprintf(&b, "%d,%s,%s\n", i+1, date, amount)
		}
		dir, p := writeExport(t, map[string]string{"events.csv": b.String()})
		pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir, MaxRows: 3000})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := pr.Plan.Tables["events"].Column("event_date")
		if c.Type != "date" || len(c.Formats) != 2 || !slices.ContainsFunc(c.Formats, func(f string) bool { return strings.Contains(f, "dd.MM") }) {
			t.Errorf("seed %d: event_date %s %q; want date with yyyy-MM-dd and dd.MM.yyyy", seed, c.Type, c.Formats)
		}
		a, _ := pr.Plan.Tables["events"].Column("amount")
		f := finding(t, pr.Findings, "events.amount: type")
		if !strings.HasPrefix(a.Type, "decimal") || f.Status != Warn || !strings.Contains(f.Detail, "x.50") {
			t.Errorf("seed %d (%d bad amounts in the file): amount %s; %s: %s", seed, bad, a.Type, f.Status, f.Detail)
		}
	}
}

// quotedCSV is a CSV whose second half holds notes with line breaks,
// commas, doubled quotes and lines that look like records; want maps each
// id to its row as the file means it.
func quotedCSV(seed uint64, rows int) (string, map[string][2]string) {
	rng := rand.New(rand.NewPCG(seed, 3))
	want := map[string][2]string{}
	var b strings.Builder
	b.WriteString("id,note,amount\n")
	for i := 1; i <= rows; i++ {
		note, field := "plain", "plain"
		if i > rows/2 {
			switch rng.IntN(4) {
			case 0:
				note = fmt.Sprintf("first line\n%d,looks like a row,1.00\nthird, with a comma", 100000+i)
			case 1:
				note = "said \"no\",\nthen left"
			case 2:
				note = strings.Repeat("x\n", 1+rng.IntN(5))
			}
			field = `"` + strings.ReplaceAll(note, `"`, `""`) + `"`
		}
		amount := fmt.Sprintf("%d.%02d", rng.IntN(100), rng.IntN(100))
		id := fmt.Sprint(i)
		want[id] = [2]string{note, amount}
		fmt.Fprintf(&b, "%s,%s,%s\n", id, field, amount)
	}
	return b.String(), want
}

// TestSampleResyncsInQuotedTail: the random and last rows of a CSV whose
// tail has quoted line breaks are read as the file means them: every row
// sampled is a row of the file, field for field, and the last row is among
// them.
func TestSampleResyncsInQuotedTail(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		body, want := quotedCSV(seed, 20000)
		dir, _ := writeExport(t, map[string]string{"notes.csv": body})
		src := files.New(dir + "/data")
		units, err := src.List(context.Background(), []string{"notes.csv"})
		if err != nil || len(units) != 1 {
			t.Fatal(units, err)
		}
		ev, err := ReadEvidence(context.Background(), src, units, source.Options{}, 600)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ev.Sampling, []Sampling{SampledSpread}) {
			t.Fatalf("seed %d: sampling %v, want spread", seed, ev.Sampling)
		}
		ids, notes, amounts := ev.Columns[0].Rows, ev.Columns[1].Rows, ev.Columns[2].Rows
		late := 0
		for k, id := range ids {
			w, ok := want[id]
			if !ok || w[0] != notes[k] || w[1] != amounts[k] {
				t.Fatalf("seed %d: sampled row %d (%q, %q, %q) is not a row of the file (want %q)", seed, k, id, notes[k], amounts[k], w)
			}
			if n := len(id); n >= 5 || (n == 4 && id > "5000") {
				late++
			}
		}
		if ev.Rows < 500 || !slices.Contains(ids, "20000") || late < 200 {
			t.Errorf("seed %d: %d rows, %d from the quoted half, last row read: %v", seed, ev.Rows, late, slices.Contains(ids, "20000"))
		}
		if r := float64(ev.EstRows) / 20000; r < 0.7 || r > 1.4 {
			t.Errorf("seed %d: about %d rows estimated, the file holds 20000", seed, ev.EstRows)
		}
	}
}

// TestProposeSmallTableFromEstimate: the small-table rule counts the rows
// from the bytes and the rows per byte sampled all through the file. A
// file of a few thousand wide rows is small; a file of the same size whose
// first rows are wide and whose other rows are short holds many rows and
// is partitioned. (The thresholds are scaled down to a few MiB of input.)
func TestProposeSmallTableFromEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	gen := func(prefix string, wide, short int) (string, int) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s_id,happened_on,notes\n", prefix)
		n := wide + short
		for i := 0; i < n; i++ {
			d := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*365/n)
			notes := "ok"
			if i < wide {
				notes = strings.Repeat(string(rune('a'+rng.IntN(26))), 2000)
			}
			fmt.Fprintf(&b, "%s%d,%s,%s\n", prefix, i, d.Format(time.DateOnly), notes)
		}
		return b.String(), n
	}
	few, fewRows := gen("w", 2000, 0)
	many, manyRows := gen("m", 300, 140000)
	const minRows, minBytes = 50000, 2 << 20
	dir, p := writeExport(t, map[string]string{"wide.csv": few, "many.csv": many})
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir, MaxRows: 300, partMinRows: minRows, partMinBytes: minBytes})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		table string
		rows  int
		bytes int
	}{{"wide", fewRows, len(few)}, {"many", manyRows, len(many)}} {
		var want []string
		if tc.rows >= minRows && tc.bytes >= minBytes {
			want = []string{wantGranularity(int64(tc.bytes), lo, hi, minBytes) + "(happened_on)"}
		}
		got := pr.Plan.Tables[tc.table].Partition
		if !slices.Equal(got, want) {
			t.Errorf("%s (%d rows, %d bytes): partition %v, want %v: %s", tc.table, tc.rows, tc.bytes, got, want, finding(t, pr.Findings, tc.table+": partition").Detail)
		}
		if r := float64(pr.Evidence[tc.table].EstRows) / float64(tc.rows); r < 0.5 || r > 2 {
			t.Errorf("%s: about %d rows estimated, the file holds %d", tc.table, pr.Evidence[tc.table].EstRows, tc.rows)
		}
	}
}

// TestSampleS3MatchesLocal: an S3 object is sampled at the same places as
// the same file in a folder (ranged reads), so the evidence is the same.
func TestSampleS3MatchesLocal(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	body, _ := quotedCSV(2, 20000)
	dir, _ := writeExport(t, map[string]string{"notes.csv": body})
	s3test.PutFile(t, cl, bucket, "exports/notes.csv", filepath.Join(dir, "data", "notes.csv"))
	s3s, err := s3src.New(cl, "s3://"+bucket+"/exports")
	if err != nil {
		t.Fatal(err)
	}
	read := func(src source.Source) *TableEvidence {
		t.Helper()
		units, err := src.List(context.Background(), []string{"notes.csv"})
		if err != nil || len(units) != 1 {
			t.Fatal(units, err)
		}
		ev, err := ReadEvidence(context.Background(), src, units, source.Options{}, 600)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	local, remote := read(files.New(filepath.Join(dir, "data"))), read(s3s)
	if !slices.Equal(remote.Sampling, []Sampling{SampledSpread}) || remote.Rows != local.Rows || remote.EstRows != local.EstRows {
		t.Fatalf("S3: %v, %d rows, about %d; local: %v, %d rows, about %d", remote.Sampling, remote.Rows, remote.EstRows, local.Sampling, local.Rows, local.EstRows)
	}
	for i := range local.Columns {
		if !slices.Equal(remote.Columns[i].Rows, local.Columns[i].Rows) {
			t.Errorf("column %s: the rows sampled from S3 differ from the local file's", local.Columns[i].Profile.Name)
		}
	}
}

// TestSampleParquetLastRowGroup: a Parquet file larger than the budget of
// what is read through gives its first rows and the rows of its last row
// group (their dates span the whole file), with its row count from the
// metadata.
func TestSampleParquetLastRowGroup(t *testing.T) {
	old := readThroughFileBytes
	readThroughFileBytes = 16 << 10
	t.Cleanup(func() { readThroughFileBytes = old })
	const rows, group = 9000, 3000
	sc := arrow.NewSchema([]arrow.Field{{Name: "event_id", Type: arrow.PrimitiveTypes.Int64}, {Name: "event_date", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	last := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < rows; i++ {
		d := time.Date(2024, 1, 1+i%28, 0, 0, 0, 0, time.UTC)
		if i >= rows-group {
			d = time.Date(2024, 12, 1+i%28, 0, 0, 0, 0, time.UTC)
		}
		if d.After(last) {
			last = d
		}
		b.Field(0).(*array.Int64Builder).Append(int64(i + 1))
		b.Field(1).(*array.StringBuilder).Append(d.Format(time.DateOnly))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "events.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(group)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	src := files.New(dir)
	units, err := src.List(context.Background(), []string{"events.parquet"})
	if err != nil || len(units) != 1 {
		t.Fatal(units, err)
	}
	ev, err := ReadEvidence(context.Background(), src, units, source.Options{}, 600)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.Sampling, []Sampling{SampledSpread}) || ev.EstRows != rows || !ev.Columns[1].TimeMax.Equal(last) {
		t.Errorf("sampling %v, %d rows counted, latest date %s; want spread, %d, %s", ev.Sampling, ev.EstRows, ev.Columns[1].TimeMax.Format(time.DateOnly), rows, last.Format(time.DateOnly))
	}
}

// TestSampleNDJSONSpread: an NDJSON file is read at its first, last and
// random lines too; every row read is a line of the file.
func TestSampleNDJSONSpread(t *testing.T) {
	var b strings.Builder
	const rows = 20000
	want := map[string]string{}
	for i := 1; i <= rows; i++ {
		d := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, (i-1)*365/rows).Format(time.DateOnly)
		want[fmt.Sprint(i)] = d
		fmt.Fprintf(&b, "{\"id\": %d, \"day\": %q, \"note\": \"a \\\"quoted\\\" text, with commas\"}\n", i, d)
	}
	dir, _ := writeExport(t, map[string]string{"events.ndjson": b.String()})
	src := files.New(filepath.Join(dir, "data"))
	units, err := src.List(context.Background(), []string{"events.ndjson"})
	if err != nil || len(units) != 1 {
		t.Fatal(units, err)
	}
	ev, err := ReadEvidence(context.Background(), src, units, source.Options{}, 300)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.Sampling, []Sampling{SampledSpread}) || ev.Columns[1].TimeMax.Format(time.DateOnly) != want[fmt.Sprint(rows)] {
		t.Fatalf("sampling %v, latest %s", ev.Sampling, ev.Columns[1].TimeMax)
	}
	for k, id := range ev.Columns[0].Rows {
		if want[id] != ev.Columns[1].Rows[k] || ev.Columns[2].Rows[k] != `a "quoted" text, with commas` {
			t.Fatalf("row %d: %q %q %q is not a line of the file", k, id, ev.Columns[1].Rows[k], ev.Columns[2].Rows[k])
		}
	}
	if r := float64(ev.EstRows) / rows; r < 0.9 || r > 1.1 {
		t.Errorf("about %d rows estimated, the file holds %d", ev.EstRows, rows)
	}
}

// TestSampledText: the files finding says how each file was read, and
// names the files read in part or not at all.
func TestSampledText(t *testing.T) {
	for _, tc := range []struct {
		how  []Sampling
		want string
	}{
		{[]Sampling{SampledSpread, SampledSpread}, "sampled 2 of 2 files (first, last and random rows of each)"},
		{[]Sampling{SampledWhole, SampledSpread, SampledNone}, "sampled 2 of 3 files (first, last and random rows of 1; every row of 1); not sampled: c.csv"},
		{[]Sampling{SampledFirst, SampledSpread}, "sampled 2 of 2 files (first, last and random rows of 1; only the first rows of a.csv (no random access, read through up to 64.0 MiB))"},
		{[]Sampling{SampledSpread, SampledFirst}, "sampled 2 of 2 files (first, last and random rows of 1; the rows of b.csv before a read error)"},
	} {
		ev := &TableEvidence{Units: []string{"a.csv", "b.csv", "c.csv"}[:len(tc.how)], Sampling: tc.how}
		for _, u := range ev.Units {
			st := "read"
			if u == "b.csv" && tc.how[1] == SampledFirst {
				st = "unreadable"
			}
			ev.Files = append(ev.Files, run.FileResult{Name: u, Status: st})
		}
		if got := sampledText(ev); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.how, got, tc.want)
		}
	}
}

// TestProposeSamplesEveryFileOnATinyBudget: with fewer rows to read than
// files, every file still gives its first, last and a random row (it used
// to be "sampled 6 of 12 files").
func TestProposeSamplesEveryFileOnATinyBudget(t *testing.T) {
	fs := map[string]string{}
	for m := 1; m <= 12; m++ {
		var b strings.Builder
		b.WriteString("event_id,happened_on\n")
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&b, "%d,2025-%02d-%02d\n", m*10000+i, m, 1+i%28)
		}
		fs[fmt.Sprintf("events_2025-%02d.csv", m)] = b.String()
	}
	dir, p := writeExport(t, fs)
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir, MaxRows: 6})
	if err != nil {
		t.Fatal(err)
	}
	f := finding(t, pr.Findings, "events: files")
	if !strings.Contains(f.Detail, "matched 12 files; sampled 12 of 12 files (first, last and random rows of each): 36 data rows read") {
		t.Errorf("files finding: %s", f.Detail)
	}
}
