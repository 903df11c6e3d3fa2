package icesink

// Files staged by distributed workers (flow/shard.go) and committed by one
// process: the worker's staging names its files with a write id derived
// from the load, the shard and the attempt (Options.WriteID); the commit
// adopts the winning attempts' files, reading each footer for the
// statistics the manifests need, and removes the losers' files by name.

import (
	"context"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

var (
	_ sink.Adopter         = (*Table)(nil)
	_ sink.FileLister      = (*staged)(nil)
	_ sink.LoadFileRemover = (*Sink)(nil)
)

// DataFiles lists the staged data files.
func (s *staged) DataFiles() []sink.DataFile {
	out := make([]sink.DataFile, 0, len(s.files))
	for _, f := range s.files {
		out = append(out, sink.DataFile{Path: f.FilePath(), Records: f.Count(), Bytes: f.FileSizeBytes()})
	}
	return out
}

// Adopt takes data files staged by workers as one staging of this table.
func (t *Table) Adopt(ctx context.Context, files []sink.DataFile) (sink.Staged, error) {
	tbl, err := t.writeTable(ctx)
	if err != nil {
		return nil, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	dataDir := strings.TrimSuffix(tbl.Location(), "/") + "/data/"
	st := &staged{t: t, adopted: true}
	seen := map[string]bool{}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, dataDir) || strings.Contains(f.Path[len(dataDir):], "..") || !strings.HasSuffix(f.Path, ".parquet") {
			return nil, fmt.Errorf("icesink: %s is not a data file of %s", f.Path, t.tableKey())
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("icesink: data file %s is listed twice", f.Path)
		}
		seen[f.Path] = true
		df, err := table.FileToDataFile(ctx, fs, f.Path, tbl.Schema(), tbl.Spec(), 0, tbl.Properties())
		if err != nil {
			return nil, fmt.Errorf("icesink: read the footer of %s: %w", f.Path, err)
		}
		if df.Count() != f.Records || df.FileSizeBytes() != f.Bytes {
			return nil, fmt.Errorf("icesink: %s holds %d rows in %d bytes, not the %d rows in %d bytes its worker reported",
				f.Path, df.Count(), df.FileSizeBytes(), f.Records, f.Bytes)
		}
		st.files = append(st.files, df)
		st.rows += df.Count()
		st.bytes += df.FileSizeBytes()
	}
	return st, nil
}

// RemoveLoadFiles removes the table's unreferenced data files named with
// marker and none of keep.
func (s *Sink) RemoveLoadFiles(ctx context.Context, tableName, marker string, keep []string) (int, error) {
	if len(marker) < 18 { // the first 18 characters of a write id: never a text every name contains
		return 0, fmt.Errorf("icesink: %q is not a load marker", marker)
	}
	return s.removeUnreferenced(ctx, tableName, "data", func(p string, _ iofs.DirEntry) bool {
		base := path.Base(p)
		if !strings.Contains(base, marker) {
			return false
		}
		for _, k := range keep {
			if strings.Contains(base, k) {
				return false
			}
		}
		return true
	}, referencedNames)
}
