package gates

// Gate 4 of a delta commit (an upsert that updated or deleted rows in
// place): instead of re-reading the whole table it proves the change and
// the table's invariants around it, each check named for what it read.
//
//   - the manifests: previous live rows + rows added − rows deleted = live
//     rows now, no data file of the previous snapshot removed or changed
//     (path, records, size), every new delete file pointing at a data file
//     of the previous snapshot;
//   - the rows added, re-read from the snapshot's new data files: count,
//     exact control sums, required nulls, duplicate keys among them and the
//     sample rows, against what the read path accepted;
//   - the rows removed, re-read at the positions the new delete files name:
//     as many as the load updated and deleted, each of a changed key;
//   - every changed key looked up in the whole snapshot (statistics-pruned,
//     sink.KeyFinder): a key the load wrote is live exactly once, as the row
//     it wrote; a deleted key is not live.
//
// What it does not read — the rows of the data files the change did not
// touch — is named in a "not checked" finding.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// DeltaExpect is what an upsert's read path expects its delta commit to
// have removed: the old rows of the keys it updated and the rows of the
// keys it deleted (detected or soft-deleted).
type DeltaExpect struct {
	Updated int64 `json:"updated"`
	Deleted int64 `json:"deleted"`
}

// deltaCheckable reports whether the snapshot r pins can be proved as a
// delta: an upsert's own snapshot (not a later one), with a parent, not a
// replace, on a sink that can read what it changed.
func deltaCheckable(ctx context.Context, sc sink.Scanner, e Expectation, snapshotID int64) (sink.SnapshotChange, bool) {
	if e.Mode != plan.ModeUpsert || e.Delta == nil || len(e.Keys) == 0 || snapshotID == 0 || snapshotID != e.SnapshotID {
		return sink.SnapshotChange{}, false
	}
	dr, ok := sc.(sink.DeltaReader)
	if _, kf := sc.(sink.KeyFinder); !ok || !kf {
		return sink.SnapshotChange{}, false
	}
	ch, err := dr.SnapshotChange(ctx, snapshotID)
	if err != nil || !ch.HasParent || ch.Replace {
		return sink.SnapshotChange{}, false
	}
	return ch, true
}

// reconcileDelta is gate 4 of a delta commit (see the top of this file).
func reconcileDelta(ctx context.Context, sc sink.Scanner, e Expectation, types []plan.Type, o options, r *Reconciliation, ch sink.SnapshotChange) error {
	dr, kf := sc.(sink.DeltaReader), sc.(sink.KeyFinder)
	r.LakeRows = ch.Current.Live()
	add := func(name string, ok bool, detail, fix string) {
		st := Pass
		if !ok {
			st = Fail
		}
		r.Checks = append(r.Checks, Finding{Name: name, Status: st, Detail: detail, Fix: fix})
	}

	// The manifests.
	var addedRecs, delRecs int64
	addedPaths := make([]string, 0, len(ch.AddedData))
	for _, f := range ch.AddedData {
		addedRecs += f.Records
		addedPaths = append(addedPaths, f.Path)
	}
	var delPaths []string
	var strayDeletes []string
	for _, f := range ch.AddedDeletes {
		delRecs += f.Records
		delPaths = append(delPaths, f.Path)
		if f.Target == "" || slices.Contains(addedPaths, f.Target) {
			strayDeletes = append(strayDeletes, f.Path)
		}
	}
	parentLive := ch.Parent.Live()
	manOK := len(ch.RemovedData) == 0 && len(ch.RemovedDeletes) == 0 && len(ch.ChangedData) == 0 && len(strayDeletes) == 0 &&
		ch.Current.DanglingDeleteFiles == 0 && ch.Current.Live() == parentLive+addedRecs-delRecs
	detail := fmt.Sprintf("manifests: previous snapshot %d live rows + %d added in %d new data file(s) − %d deleted by %d new delete file(s) = %d; the snapshot states %d live; %d data file(s) of the previous snapshot kept unchanged (path, records, size)",
		parentLive, addedRecs, len(ch.AddedData), delRecs, len(ch.AddedDeletes), parentLive+addedRecs-delRecs, ch.Current.Live(), ch.KeptData)
	if n := len(ch.RemovedData) + len(ch.RemovedDeletes) + len(ch.ChangedData); n > 0 {
		detail += fmt.Sprintf("; %d file(s) of the previous snapshot removed or changed", n)
	}
	if len(strayDeletes) > 0 {
		detail += fmt.Sprintf("; %d new delete file(s) do not point at one data file of the previous snapshot", len(strayDeletes))
	}
	if ch.Current.DanglingDeleteFiles > 0 {
		detail += fmt.Sprintf("; %d delete file(s) point at removed data files", ch.Current.DanglingDeleteFiles)
	}
	add("delta: live rows from the manifests", manOK, detail,
		"the snapshot changed more than this load's rows: inspect the table history, then reload with --full-refresh")

	// The rows added, re-read.
	lk := newLakeStats(e, types, o.keys)
	defer lk.keys.Close()
	keyIdx := make([]int, len(e.Keys))
	var keyBatches []arrow.RecordBatch
	defer func() {
		for _, b := range keyBatches {
			b.Release()
		}
	}()
	if len(addedPaths) > 0 {
		it, err := dr.ScanFiles(ctx, r.SnapshotID, addedPaths, nil)
		if err != nil {
			return fmt.Errorf("gate 4: read the rows this load added: %w", err)
		}
		for rec, err := range it {
			if err != nil {
				return fmt.Errorf("gate 4: read the rows this load added: %w", err)
			}
			if err := lk.add(rec); err != nil {
				rec.Release()
				return fmt.Errorf("gate 4: the duplicate check: %w", err)
			}
			kb, err := keyColumns(rec, e.Keys, keyIdx)
			rec.Release()
			if err != nil {
				return fmt.Errorf("gate 4: %w", err)
			}
			keyBatches = append(keyBatches, kb)
		}
	}
	add("row count", lk.rows == e.Rows,
		fmt.Sprintf("this load accepted %d rows; the snapshot's %d new data file(s) hold %d live rows (re-read)", e.Rows, len(addedPaths), lk.rows),
		"rows of this load are missing from the snapshot, or rows were added behind Lima's back")
	for _, c := range sortedKeys(e.Sums) {
		i := slices.Index(e.Columns, c)
		if i < 0 {
			continue
		}
		ct, ok := compareSum(types[i], e.Sums[c], lk.sum(i))
		r.ControlTotals[c] = ct
		add("sum("+c+") of the rows added", ok, fmt.Sprintf("accepted %s, re-read from the new data files %s, variance %s", ct.Source, ct.Target, ct.Variance),
			"a value changed between the source and the lake: compare the sample rows")
	}
	if e.SourceTotals != nil {
		r.Checks = append(r.Checks, SourceTotals(e.SourceTotals, e.Columns, types, e.Sums, false)...)
	}
	for i, c := range e.Columns {
		if e.Required[i] {
			add("no nulls in "+c+" (rows added)", lk.nulls[i] == 0, fmt.Sprintf("%d null(s) in required column %s among the %d rows added", lk.nulls[i], c, lk.rows),
				"required values are missing in the lake: the table was written outside Lima")
		}
	}

	// The rows removed, re-read at their positions.
	removed := map[string]int{}
	var removedRows, again int64
	if len(delPaths) > 0 {
		var err error
		again, err = dr.DeletedRows(ctx, r.SnapshotID, delPaths, e.Keys, func(f sink.FoundRows) error {
			cols := make([]arrow.Array, len(e.Keys))
			for j := range cols {
				cols[j] = f.Rec.Column(j)
			}
			for _, row := range f.Rows {
				removed[keyTextOf(cols, row)]++
				removedRows++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("gate 4: read the rows this load deleted: %w", err)
		}
	}
	wantRemoved := e.Delta.Updated + e.Delta.Deleted
	add("delta: rows removed", removedRows == wantRemoved && removedRows == delRecs && again == 0,
		fmt.Sprintf("the load updated %d and deleted %d key(s); the new delete files remove %d row(s) (re-read at their positions; the manifests state %d), %d of them deleted already by an earlier delete file", e.Delta.Updated, e.Delta.Deleted, removedRows, delRecs, again),
		"the commit removed other rows than the load's updates and deletes: inspect the table history")

	// Every changed key in the whole snapshot.
	added := map[string]bool{}
	for _, b := range keyBatches {
		cols := make([]arrow.Array, b.NumCols())
		for j := range cols {
			cols[j] = b.Column(j)
		}
		for row := 0; row < int(b.NumRows()); row++ {
			added[keyTextOf(cols, row)] = true
		}
	}
	var goneKeys []string
	removedTwice := 0
	for k, n := range removed {
		if n > 1 {
			removedTwice++
		}
		if !added[k] {
			goneKeys = append(goneKeys, k)
		}
	}
	deletedOnly := int64(len(goneKeys))
	updatedSeen := int64(len(removed)) - int64(len(goneKeys))
	lookup := sink.Keys{Columns: e.Keys, Batches: keyBatches}
	live := map[string]int{}
	inAdded := map[string]int{}
	var st sink.FindStats
	if lookup.Len() > 0 {
		s, err := kf.FindKeys(ctx, r.SnapshotID, lookup, nil, func(f sink.FoundRows) error {
			cols := make([]arrow.Array, len(e.Keys))
			for j := range cols {
				cols[j] = f.Rec.Column(j)
			}
			mine := slices.Contains(addedPaths, f.File)
			for _, row := range f.Rows {
				k := keyTextOf(cols, row)
				live[k]++
				if mine {
					inAdded[k]++
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("gate 4: look the changed keys up: %w", err)
		}
		st.Add(s)
	}
	var notOnce, notNew int
	for k := range added {
		if live[k] != 1 {
			notOnce++
		} else if inAdded[k] != 1 {
			notNew++
		}
	}
	// Deleted keys must be gone: looked up by their texts' rows (re-read
	// from the delete positions above, so typed like the table).
	stillLive := 0
	if len(goneKeys) > 0 {
		gk, err := keysFromRemoved(ctx, dr, r.SnapshotID, delPaths, e.Keys, goneKeys)
		if err != nil {
			return fmt.Errorf("gate 4: %w", err)
		}
		defer func() {
			for _, b := range gk.Batches {
				b.Release()
			}
		}()
		s, err := kf.FindKeys(ctx, r.SnapshotID, gk, nil, func(f sink.FoundRows) error {
			stillLive += len(f.Rows)
			return nil
		})
		if err != nil {
			return fmt.Errorf("gate 4: look the deleted keys up: %w", err)
		}
		st.Add(s)
	}
	name := "unique key (" + strings.Join(e.Keys, ", ") + ") of the changed keys"
	ok := lk.dups == 0 && notOnce == 0 && notNew == 0 && stillLive == 0
	add(name, ok, fmt.Sprintf("%d key(s) written, %d of them duplicated among the rows added; looked up in the whole snapshot (%d look-up(s): %d of the %d data file(s) considered opened, %d of their %d row group(s) read, by key statistics): %d not live exactly once, %d live but not as the row written; %d deleted key(s), %d still live",
		len(added), lk.dups, st.Calls, st.FilesOpened, st.DataFiles, st.RowGroupsRead, st.RowGroups, notOnce, notNew, len(goneKeys), stillLive),
		"a changed key has more than one row or lost its new row: check for a load applied twice or rows written outside Lima")
	add("delta: rows removed are the changed keys' old rows", deletedOnly == e.Delta.Deleted && updatedSeen == e.Delta.Updated && removedTwice == 0,
		fmt.Sprintf("of the %d distinct key(s) whose rows were removed (%d of them more than once), %d were rewritten by this load (it updated %d) and %d are deleted keys (it deleted %d)",
			len(removed), removedTwice, updatedSeen, e.Delta.Updated, deletedOnly, e.Delta.Deleted),
		"the commit removed rows of keys this load did not change: inspect the table history")

	matched := lk.pairSamples(e, r)
	if len(e.Samples) > 0 {
		add("sample rows side by side", matched == len(e.Samples), fmt.Sprintf("%d of %d sampled source rows found identical among the rows added", matched, len(e.Samples)),
			"open the sample pairs to see which value differs")
	}
	untouched := ch.Current.DataRows - addedRecs
	r.Checks = append(r.Checks, Finding{Name: NotChecked + "the rows the change did not touch", Status: Skip,
		Detail: fmt.Sprintf("mode upsert, delta commit: the %d data file(s) kept from the previous snapshot (%d rows stated) were not re-read — only their manifest entries, the key columns of the row groups that can hold a changed key, and the rows at the deleted positions; the whole table's sums, ranges, nulls and key uniqueness are not recomputed", ch.KeptData, untouched)})
	return nil
}

// keyColumns copies the key columns of rec into a batch of their own.
func keyColumns(rec arrow.RecordBatch, keys []string, idx []int) (arrow.RecordBatch, error) {
	fields := make([]arrow.Field, len(keys))
	cols := make([]arrow.Array, len(keys))
	for j, k := range keys {
		idx[j] = -1
		for c, f := range rec.Schema().Fields() {
			if f.Name == k {
				idx[j] = c
			}
		}
		if idx[j] < 0 {
			return nil, fmt.Errorf("the rows added have no key column %s", k)
		}
		fields[j] = rec.Schema().Field(idx[j])
		cols[j] = rec.Column(idx[j])
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows()), nil
}

// keysFromRemoved re-reads the removed rows' keys whose text is in want,
// as typed key batches for a look-up.
func keysFromRemoved(ctx context.Context, dr sink.DeltaReader, snapshotID int64, delPaths, keys, want []string) (sink.Keys, error) {
	out := sink.Keys{Columns: keys}
	set := map[string]bool{}
	for _, k := range want {
		set[k] = true
	}
	_, err := dr.DeletedRows(ctx, snapshotID, delPaths, keys, func(f sink.FoundRows) error {
		cols := make([]arrow.Array, len(keys))
		for j := range cols {
			cols[j] = f.Rec.Column(j)
		}
		var idx []int
		for _, row := range f.Rows {
			if set[keyTextOf(cols, row)] {
				idx = append(idx, row)
			}
		}
		if len(idx) == 0 {
			return nil
		}
		kb, err := takeRows(f.Rec, len(keys), idx)
		if err != nil {
			return err
		}
		out.Batches = append(out.Batches, kb)
		return nil
	})
	return out, err
}

// takeRows copies rows idx of the first n columns of rec (one-row slices
// concatenated).
func takeRows(rec arrow.RecordBatch, n int, idx []int) (arrow.RecordBatch, error) {
	fields := rec.Schema().Fields()[:n]
	cols := make([]arrow.Array, n)
	for c := range cols {
		parts := make([]arrow.Array, len(idx))
		for i, r := range idx {
			parts[i] = array.NewSlice(rec.Column(c), int64(r), int64(r+1))
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
		cols[c] = a
	}
	b := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(idx)))
	for _, c := range cols {
		c.Release()
	}
	return b, nil
}

// keyTextOf is a key tuple as gate 4's own text (FormatValue).
func keyTextOf(cols []arrow.Array, r int) string {
	var b strings.Builder
	for j, a := range cols {
		if j > 0 {
			b.WriteByte(0)
		}
		if a.IsNull(r) {
			b.WriteString("\x01NULL")
		} else {
			b.WriteString(FormatValue(a, r))
		}
	}
	return b.String()
}
