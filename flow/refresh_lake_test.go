package flow_test

// An independent reader of a local Iceberg table for the refresh/delete
// hygiene tests: the manifests are listed with iceberg-go (what any
// metadata-trusting engine reads), but the rows come from the Parquet files
// themselves through arrow-go's Parquet reader, with the position delete
// files applied by hand — neither Lima's sink nor iceberg-go's scan.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/fileuri"
)

// lakeState is a table's current snapshot as read independently.
type lakeState struct {
	rows []map[string]string // live rows: column → arrow text

	dataFiles, deleteFiles int
	dataRecords            int64 // records of the live data files (manifests)
	deleteRecords          int64 // records of the live delete files (manifests)
	distinctDeleted        int64 // distinct (data file, position) pairs deleted
	danglingRecords        int64 // delete records pointing at no live data file
	danglingFiles          int   // delete files pointing at no live data file
	snapshots              int   // snapshots in the table's metadata
	current                *table.Snapshot
}

// metaLive is the live row count a metadata-trusting engine computes.
func (s lakeState) metaLive() int64 { return s.dataRecords - s.deleteRecords }

// byKey indexes the live rows by one column; a key seen twice fails.
func (s lakeState) byKey(t *testing.T, col string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, r := range s.rows {
		if _, dup := out[r[col]]; dup {
			t.Fatalf("key %s=%s is in the lake twice", col, r[col])
		}
		out[r[col]] = r
	}
	return out
}

// localPath is the local path of a location iceberg-go recorded (a
// file:// URI) or of a plain path.
func localPath(uri string) string {
	if !fileuri.Is(uri) {
		return uri
	}
	p, err := fileuri.ToPath(uri)
	if err != nil {
		panic(err)
	}
	return p
}

// readParquet reads every row of a local Parquet file, in file order.
func readParquet(t *testing.T, path string, fn func(rec arrow.RecordBatch)) {
	t.Helper()
	rdr, err := file.OpenParquetFile(localPath(path), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	ar, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := ar.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	for rr.Next() {
		fn(rr.RecordBatch())
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
}

func readLake(t *testing.T, ws flow.Workspace, p *plan.Plan, name string) lakeState {
	t.Helper()
	ctx := context.Background()
	sk, err := flow.OpenSink(ctx, ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), name})
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return lakeState{}
	}
	if err != nil {
		t.Fatal(err)
	}
	st := lakeState{snapshots: len(tbl.Metadata().Snapshots()), current: tbl.CurrentSnapshot()}
	if st.current == nil {
		return st
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mans, err := st.current.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var data, dels []iceberg.DataFile
	for _, m := range mans {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Status() == iceberg.EntryStatusDELETED {
				continue
			}
			if df := e.DataFile(); df.ContentType() == iceberg.EntryContentData {
				data = append(data, df)
			} else {
				dels = append(dels, df)
			}
		}
	}
	live := map[string]bool{}
	for _, df := range data {
		live[df.FilePath()] = true
		st.dataFiles++
		st.dataRecords += df.Count()
	}
	deleted := map[string]map[int64]bool{}
	for _, df := range dels {
		if df.ContentType() != iceberg.EntryContentPosDeletes {
			t.Fatalf("delete file %s has content %s", df.FilePath(), df.ContentType())
		}
		st.deleteFiles++
		st.deleteRecords += df.Count()
		var n, dangling int64
		readParquet(t, df.FilePath(), func(rec arrow.RecordBatch) {
			var paths, pos arrow.Array
			for i, f := range rec.Schema().Fields() {
				switch f.Name {
				case "file_path":
					paths = rec.Column(i)
				case "pos":
					pos = rec.Column(i)
				}
			}
			for r := 0; r < int(rec.NumRows()); r++ {
				path, at := paths.ValueStr(r), pos.(*array.Int64).Value(r)
				n++
				if !live[path] {
					dangling++
					st.danglingRecords++
				}
				if deleted[path] == nil {
					deleted[path] = map[int64]bool{}
				}
				deleted[path][at] = true
			}
		})
		if n != df.Count() {
			t.Fatalf("delete file %s holds %d records, its manifest entry says %d", df.FilePath(), n, df.Count())
		}
		if dangling == n {
			st.danglingFiles++
		}
	}
	for _, m := range deleted {
		st.distinctDeleted += int64(len(m))
	}
	for _, df := range data {
		var pos int64
		gone := deleted[df.FilePath()]
		readParquet(t, df.FilePath(), func(rec arrow.RecordBatch) {
			for r := 0; r < int(rec.NumRows()); r++ {
				if !gone[pos+int64(r)] {
					row := map[string]string{}
					for i, f := range rec.Schema().Fields() {
						row[f.Name] = rec.Column(i).ValueStr(r)
					}
					st.rows = append(st.rows, row)
				}
			}
			pos += rec.NumRows()
		})
		if pos != df.Count() {
			t.Fatalf("data file %s holds %d rows, its manifest entry says %d", df.FilePath(), pos, df.Count())
		}
	}
	return st
}

// metadataTruthful fails unless the manifests tell the truth about the
// table: live rows from metadata = rows read, no position deleted twice,
// no delete record pointing at a data file that is gone.
func metadataTruthful(t *testing.T, what string, st lakeState) {
	t.Helper()
	var errs []string
	if st.metaLive() != int64(len(st.rows)) {
		errs = append(errs, fmt.Sprintf("manifests imply %d live rows (%d − %d), a reader reads %d", st.metaLive(), st.dataRecords, st.deleteRecords, len(st.rows)))
	}
	if st.deleteRecords != st.distinctDeleted {
		errs = append(errs, fmt.Sprintf("%d delete records for %d distinct positions", st.deleteRecords, st.distinctDeleted))
	}
	if st.danglingRecords > 0 {
		errs = append(errs, fmt.Sprintf("%d delete records in %d file(s) point at removed data files", st.danglingRecords, st.danglingFiles))
	}
	// The snapshot summary's totals are what the cheapest engines trust.
	if st.current != nil && st.current.Summary != nil {
		tr, e1 := strconv.ParseInt(st.current.Summary.Properties["total-records"], 10, 64)
		tp, e2 := strconv.ParseInt(st.current.Summary.Properties["total-position-deletes"], 10, 64)
		if e1 == nil && e2 == nil && tr-tp != int64(len(st.rows)) {
			errs = append(errs, fmt.Sprintf("the snapshot summary says %d records − %d position deletes = %d, a reader reads %d", tr, tp, tr-tp, len(st.rows)))
		}
	}
	if len(errs) > 0 {
		t.Fatalf("%s: %s", what, strings.Join(errs, "; "))
	}
}
