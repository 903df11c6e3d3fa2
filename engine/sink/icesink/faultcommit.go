package icesink

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/internal/faultpoint"
)

// InsideCommit returns tbl bound to a catalog that, when the fault point
// is armed (LIMA_FAULTPOINT, crash tests), does what iceberg-go's catalog
// commit does up to the moment the catalog's pointer would move — it
// validates the requirements, applies the updates to the current metadata
// and writes the new metadata file where and as iceberg-go names it
// (<version+1>-<uuid>.metadata.json) — and then kills the process. So a
// crash test reaches, every time, the state a SIGKILL leaves only now and
// then: a metadata file written, never made current. Unarmed, tbl is
// returned as it is.
func InsideCommit(tbl *table.Table, cat table.CatalogIO, point string) *table.Table {
	if !faultpoint.Armed(point) {
		return tbl
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, killInsideCommit{cat, point})
}

type killInsideCommit struct {
	table.CatalogIO
	point string
}

func (k killInsideCommit) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	cur, err := k.LoadTable(ctx, ident)
	if err != nil {
		return nil, "", err
	}
	for _, r := range reqs {
		if err := r.Validate(cur.Metadata()); err != nil {
			return nil, "", err
		}
	}
	updated, err := table.UpdateTableMetadata(cur.Metadata(), updates, cur.MetadataLocation())
	if err != nil {
		return nil, "", err
	}
	version, err := strconv.Atoi(strings.SplitN(path.Base(cur.MetadataLocation()), "-", 2)[0])
	if err != nil {
		return nil, "", fmt.Errorf("fault point %s: metadata version of %s: %w", k.point, cur.MetadataLocation(), err)
	}
	provider, err := table.LoadLocationProvider(updated.Location(), updated.Properties())
	if err != nil {
		return nil, "", err
	}
	loc, err := provider.NewTableMetadataFileLocation(version + 1)
	if err != nil {
		return nil, "", err
	}
	fs, err := cur.FS(ctx)
	if err != nil {
		return nil, "", err
	}
	w, err := fs.(icebergio.WriteFileIO).Create(loc)
	if err != nil {
		return nil, "", err
	}
	if err := json.NewEncoder(w).Encode(updated); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	faultpoint.Hit(k.point)
	return nil, "", fmt.Errorf("fault point %s: not killed", k.point)
}

// FaultDataFileBytes, followed by a number N (data-file-bytes-4096), kills
// the process once N bytes of a data file have reached the file: the
// write of the chunk that crosses N is cut at N, so the file on disk is
// exactly N bytes of a Parquet file never finished (LIMA_FAULTPOINT,
// crash tests).
const FaultDataFileBytes = "data-file-bytes-"

// DataFileFault returns tbl with its file IO wrapped so that, when
// FaultDataFileBytes is armed, a data file written through it (a .parquet
// file: WriteRecords writes through the table's IO) stops after N bytes.
// Unarmed, tbl is returned as it is.
func DataFileFault(tbl *table.Table, cat table.CatalogIO) *table.Table {
	n, ok := faultpoint.ArmedBytes(FaultDataFileBytes)
	if !ok {
		return tbl
	}
	fsF := func(ctx context.Context) (icebergio.IO, error) {
		fs, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		w, ok := fs.(icebergio.WriteFileIO)
		if !ok {
			return fs, nil
		}
		return cutFS{w, n, FaultDataFileBytes + strconv.FormatInt(n, 10)}, nil
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, cat)
}

type cutFS struct {
	icebergio.WriteFileIO
	n     int64
	point string
}

func (c cutFS) Create(name string) (icebergio.FileWriter, error) {
	w, err := c.WriteFileIO.Create(name)
	if err != nil || !strings.HasSuffix(name, ".parquet") {
		return w, err
	}
	return &cutWriter{FileWriter: w, left: c.n, point: c.point}, nil
}

type cutWriter struct {
	icebergio.FileWriter
	left  int64
	point string
}

func (w *cutWriter) Write(p []byte) (int, error) {
	if int64(len(p)) < w.left {
		n, err := w.FileWriter.Write(p)
		w.left -= int64(n)
		return n, err
	}
	_, _ = w.FileWriter.Write(p[:w.left])
	_ = w.FileWriter.Close() // the bytes reach the file system before the kill
	faultpoint.Hit(w.point)
	return 0, fmt.Errorf("fault point %s: not killed", w.point)
}

func (w *cutWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{w}, r)
}
