package icesink

// Delete hygiene. Lima writes its own position deletes instead of
// iceberg-go's Transaction.Delete, for two reasons (iceberg-go v0.7.0):
//
//   - Transaction.Delete reads the candidate data files without applying
//     their existing deletes, so a key whose old version was deleted before
//     gets that position deleted again (one more delete record for a row
//     already gone: the manifests' row count drifts below the rows a reader
//     reads);
//   - a delete and an append in one transaction make two snapshots (the
//     first one shows the table without the updated rows).
//
// Here the positions to delete are the live rows of the matching keys
// (existing position deletes applied), written as one position delete file
// per data file, and committed with the new rows in ONE RowDelta snapshot.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

// Field ids of a position delete file's columns (Iceberg spec).
const (
	posDeleteFilePathID = 2147483546
	posDeletePosID      = 2147483545
)

var _ sink.MetaCounter = (*Table)(nil)

// liveFiles lists the live data files and delete files of a snapshot, from
// its manifests.
func liveFiles(fs icebergio.IO, snap *table.Snapshot) (data, deletes []iceberg.DataFile, err error) {
	if snap == nil {
		return nil, nil, nil
	}
	mans, err := snap.Manifests(fs)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range mans {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, nil, err
			}
			if e.Status() == iceberg.EntryStatusDELETED {
				continue
			}
			df := e.DataFile()
			if df.ContentType() == iceberg.EntryContentData {
				data = append(data, df)
			} else {
				deletes = append(deletes, df)
			}
		}
	}
	return data, deletes, nil
}

// MetaRows counts a snapshot's rows as its manifests state them (0: the
// current snapshot).
func (t *Table) MetaRows(ctx context.Context, snapshotID int64) (sink.MetaRows, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return sink.MetaRows{}, err
	}
	snap := tbl.CurrentSnapshot()
	if snapshotID != 0 {
		snap = tbl.SnapshotByID(snapshotID)
		if snap == nil {
			return sink.MetaRows{}, fmt.Errorf("no snapshot %d in %s", snapshotID, strings.Join(t.ident, "."))
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return sink.MetaRows{}, err
	}
	return metaRows(fs, snap)
}

func metaRows(fs icebergio.IO, snap *table.Snapshot) (sink.MetaRows, error) {
	var m sink.MetaRows
	if snap == nil {
		return m, nil
	}
	m.SnapshotID = snap.SnapshotID
	data, dels, err := liveFiles(fs, snap)
	if err != nil {
		return m, err
	}
	live := map[string]bool{}
	for _, df := range data {
		m.DataFiles++
		m.DataRows += df.Count()
		live[df.FilePath()] = true
	}
	for _, df := range dels {
		m.DeleteFiles++
		m.DeleteRecords += df.Count()
		if ref, ok := fileScopedTarget(df); ok && !live[ref] {
			m.DanglingDeleteFiles++
		}
	}
	return m, nil
}

// fileScopedTarget is the one data file a position delete file applies
// to, when its metadata says so (referenced_data_file, or equal file_path
// bounds).
func fileScopedTarget(df iceberg.DataFile) (string, bool) {
	if df.ContentType() != iceberg.EntryContentPosDeletes {
		return "", false
	}
	if r := df.ReferencedDataFile(); r != nil && *r != "" {
		return *r, true
	}
	lo, hi := df.LowerBoundValues()[posDeleteFilePathID], df.UpperBoundValues()[posDeleteFilePathID]
	if len(lo) > 0 && bytes.Equal(lo, hi) {
		return string(lo), true
	}
	return "", false
}

// readPositionDeletes reads a position delete file: the deleted positions
// by data file path.
func readPositionDeletes(ctx context.Context, fs icebergio.IO, df iceberg.DataFile) (map[string][]int64, error) {
	f, err := fs.Open(df.FilePath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("position delete file %s: %w", df.FilePath(), err)
	}
	defer pr.Close()
	ar, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	rr, err := ar.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	pathCol, posCol := -1, -1
	for i, fl := range rr.Schema().Fields() {
		switch fl.Name {
		case "file_path":
			pathCol = i
		case "pos":
			posCol = i
		}
	}
	if pathCol < 0 || posCol < 0 {
		return nil, fmt.Errorf("position delete file %s has no file_path/pos columns", df.FilePath())
	}
	out := map[string][]int64{}
	for rr.Next() {
		rec := rr.RecordBatch()
		pos, ok := rec.Column(posCol).(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("position delete file %s: pos is %s", df.FilePath(), rec.Column(posCol).DataType())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			p := stringAt(rec.Column(pathCol), i)
			out[p] = append(out[p], pos.Value(i))
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func stringAt(a arrow.Array, i int) string {
	switch v := a.(type) {
	case *array.String:
		return v.Value(i)
	case *array.LargeString:
		return v.Value(i)
	case *array.Binary:
		return string(v.Value(i))
	}
	return a.ValueStr(i)
}

// keyText is a key value as text, the same for the key batches and the
// data files read back (both typed as the table's schema).
func keyText(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "\x01NULL"
	}
	switch v := a.(type) {
	case *array.Int32:
		return strconv.FormatInt(int64(v.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(v.Value(i), 10)
	case *array.Date32:
		return strconv.FormatInt(int64(v.Value(i)), 10)
	case *array.Timestamp:
		return strconv.FormatInt(int64(v.Value(i)), 10)
	case *array.String, *array.LargeString, *array.Binary:
		return stringAt(a, i)
	case *array.Float64:
		return strconv.FormatFloat(v.Value(i), 'g', -1, 64)
	}
	return a.ValueStr(i)
}

func rowKey(cols []arrow.Array, i int) string {
	var b strings.Builder
	for j, c := range cols {
		if j > 0 {
			b.WriteByte(0)
		}
		b.WriteString(keyText(c, i))
	}
	return b.String()
}

// positionDeletes finds, in the snapshot tbl is at, the live rows whose key
// is in del: positions already deleted are not deleted again. It returns
// the positions by data file. Only the data files and row groups whose
// key statistics can hold one of the keys are read (findkeys.go).
func (t *Table) positionDeletes(ctx context.Context, tbl *table.Table, del sink.Keys) ([]fileDeletes, error) {
	byFile := map[string]int{}
	var out []fileDeletes
	_, err := t.findKeys(ctx, tbl, tbl.CurrentSnapshot(), del, nil, func(df iceberg.DataFile, f sink.FoundRows) error {
		i, ok := byFile[f.File]
		if !ok {
			i = len(out)
			byFile[f.File] = i
			out = append(out, fileDeletes{file: df})
		}
		out[i].pos = append(out[i].pos, f.Pos...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find the rows to delete: %w", err)
	}
	return out, nil
}

// fileDeletes are the positions to delete in one data file.
type fileDeletes struct {
	file iceberg.DataFile
	pos  []int64 // ascending
}

// posDeleteSchema is the Arrow schema of a position delete file, with the
// spec's field ids.
func posDeleteSchema() (*arrow.Schema, error) {
	return table.SchemaToArrowSchema(iceberg.PositionalDeleteSchema, nil, true, false)
}

// writePositionDeletes writes one position delete file for one data file
// and describes it for the manifest: file-scoped (equal file_path bounds
// and referenced_data_file), so it is applied to that file only and known
// dead once the file is gone.
func writePositionDeletes(tbl *table.Table, fs icebergio.IO, fd fileDeletes, writeID string) (iceberg.DataFile, error) {
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return nil, errors.New("the table's file system cannot write")
	}
	sc, err := posDeleteSchema()
	if err != nil {
		return nil, err
	}
	pos := slices.Clone(fd.pos)
	slices.Sort(pos)
	path := fd.file.FilePath()
	pb := array.NewStringBuilder(memory.DefaultAllocator)
	defer pb.Release()
	xb := array.NewInt64Builder(memory.DefaultAllocator)
	defer xb.Release()
	for _, p := range pos {
		pb.Append(path)
		xb.Append(p)
	}
	pa, xa := pb.NewArray(), xb.NewArray()
	defer pa.Release()
	defer xa.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{pa, xa}, int64(len(pos)))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf,
		parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	lp, err := table.LoadLocationProvider(tbl.Location(), tbl.Properties())
	if err != nil {
		return nil, err
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	// The staging's write id names the file, so a killed run's delete
	// files are removed with its data files (stagings.go).
	loc := lp.NewDataLocation("lima-" + writeID + "-" + hex.EncodeToString(id[:]) + "-deletes.parquet")
	if err := wfs.WriteFile(loc, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("write %s: %w", loc, err)
	}
	spec := tbl.Metadata().PartitionSpecByID(int(fd.file.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s has unknown partition spec %d", path, fd.file.SpecID())
	}
	b, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentPosDeletes, loc, iceberg.ParquetFile,
		fd.file.Partition(), nil, nil, int64(len(pos)), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	lo, hi := make([]byte, 8), make([]byte, 8)
	binary.LittleEndian.PutUint64(lo, uint64(pos[0]))
	binary.LittleEndian.PutUint64(hi, uint64(pos[len(pos)-1]))
	b.LowerBoundValues(map[int][]byte{posDeleteFilePathID: []byte(path), posDeletePosID: lo}).
		UpperBoundValues(map[int][]byte{posDeleteFilePathID: []byte(path), posDeletePosID: hi}).
		ValueCounts(map[int]int64{posDeleteFilePathID: int64(len(pos)), posDeletePosID: int64(len(pos))}).
		NullValueCounts(map[int]int64{posDeleteFilePathID: 0, posDeletePosID: 0}).
		ReferencedDataFile(path)
	return b.Build(), nil
}

// DeleteTargets lists the data files a position delete file applies to:
// from its metadata when it is file-scoped, else by reading it.
func DeleteTargets(ctx context.Context, tbl *table.Table, df iceberg.DataFile) ([]string, error) {
	if r, ok := fileScopedTarget(df); ok {
		return []string{r}, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	byFile, err := readPositionDeletes(ctx, fs, df)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(byFile))
	for p := range byFile {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// DeadDeletes lists the live delete files of the snapshot that apply to
// no data file that stays live: every data file they point at is gone
// already or in removing. A delete file that does not say in its metadata
// which file it points at is read.
func DeadDeletes(ctx context.Context, tbl *table.Table, snap *table.Snapshot, removing map[string]struct{}) ([]iceberg.DataFile, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	data, dels, err := liveFiles(fs, snap)
	if err != nil {
		return nil, err
	}
	stays := map[string]bool{}
	for _, df := range data {
		if _, r := removing[df.FilePath()]; !r {
			stays[df.FilePath()] = true
		}
	}
	var dead []iceberg.DataFile
	for _, d := range dels {
		if d.ContentType() != iceberg.EntryContentPosDeletes {
			continue // equality deletes: Lima writes none; leave them to their writer
		}
		refs, err := DeleteTargets(ctx, tbl, d)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(refs, func(p string) bool { return stays[p] }) {
			dead = append(dead, d)
		}
	}
	return dead, nil
}
