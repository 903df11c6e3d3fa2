package run

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/keyset"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sqldb"
)

// SkipSoftDeleted is the skip reason of a row its source marks deleted
// (load.soft_delete): its key is deleted from the lake instead.
const SkipSoftDeleted = "soft_deleted"

// SkipSuperseded is the skip reason of a row that a later row of the same
// key in the same read replaces (latest wins within a batch).
const SkipSuperseded = "superseded_in_batch"

// PropDeletesChecked is the snapshot property recording when the source's
// keys were last compared with the lake's (delete detection).
const PropDeletesChecked = "lima.deletes-checked"

// UpsertResult is what an upsert did, for the report.
type UpsertResult struct {
	// ReadFrom is the lower bound of the read (previous watermark minus the
	// lookback, inclusive); empty when every row was read.
	ReadFrom string `json:"read_from,omitempty"`
	Lookback string `json:"lookback,omitempty"`
	// Inserted rows had a key new to the lake; Updated rows replaced the
	// lake's row of their key.
	Inserted int64 `json:"inserted"`
	Updated  int64 `json:"updated"`
	// LateRows are rows read in the lookback window (watermark at or below
	// the previous maximum) that the lake did not hold in that version.
	LateRows int64 `json:"late_rows"`
	// DeletesChecked: the source's keys were compared with the lake's this
	// run; Deleted keys were in the lake but no longer at the source.
	DeletesChecked bool  `json:"deletes_checked"`
	Deleted        int64 `json:"deleted"`
	// SoftDeleted are lake rows deleted because the source marked their
	// key deleted (load.soft_delete).
	SoftDeleted int64 `json:"soft_deleted,omitempty"`
	// SourceKeys is how many distinct keys the source held in the read
	// snapshot (when the keys were compared).
	SourceKeys int64  `json:"source_keys,omitempty"`
	DeleteNote string `json:"delete_note,omitempty"`
	// RowsRemoved are the lake rows the commit removed (old versions of
	// updated keys and deleted keys), as the sink counted them.
	RowsRemoved int64 `json:"rows_removed"`
	// LakeLookup is what finding the lake rows of the keys read touched
	// (sink.KeyFinder: only candidate files and row groups are read).
	LakeLookup *sink.FindStats `json:"lake_lookup,omitempty"`
}

// pendingRow is an accepted row of an upsert whose key has not yet been
// looked up in the lake: the look-up of every key read is made once,
// after the read, for those keys only (classifyUpsert).
type pendingRow struct {
	key    [2]uint64
	texts  []string
	wmText string
	soft   bool
	// old: at or below the previous watermark (a late row unless the lake
	// holds this version).
	old bool
}

// upsert is the state of one upsert load.
type upsert struct {
	res     *UpsertResult
	replace bool // a full refresh: replace the table, nothing to delete
	// pending are the accepted rows in read order, classified as insert,
	// update or late once their keys are looked up in the lake.
	pending []pendingRow
	// emptyLake: the table has no snapshot yet, so no key is in it.
	emptyLake bool
	prev      clean.Cell
	hasPrev   bool
	// updKeys are the key texts of accepted rows whose key the lake holds.
	updKeys [][]string
	// detect: compare keys this run; srcKeys are the source's key hashes.
	detect  bool
	srcKeys *keyset.Set
	delKeys [][]string
	keySpec []clean.ColumnSpec
	// softCol is the soft-delete column's index (-1: none); softDone the
	// keys this run deletes because the source marked them (a lake key
	// in softDone is no longer in the lake).
	softCol  int
	softDone map[[2]uint64]struct{}
}

// closeKeys releases the upsert's key sets.
func (up *upsert) closeKeys() {
	if up.srcKeys != nil {
		up.srcKeys.Close()
	}
}

// hashKey hashes key texts the way row() does.
func (l *loader) hashKey(texts []string) [2]uint64 {
	var h1, h2 maphash.Hash
	h1.SetSeed(l.seeds[0])
	h2.SetSeed(l.seeds[1])
	for _, s := range texts {
		h1.WriteString(s)
		h1.WriteByte(0)
		h2.WriteString(s)
		h2.WriteByte(0)
	}
	return [2]uint64{h1.Sum64(), h2.Sum64()}
}

func versionHash(seed maphash.Seed, s string) uint64 {
	return maphash.String(seed, s)
}

// prepareUpsert sets up an upsert load: the read range from the previous
// watermark minus the lookback (>=), key ordering for latest-wins, the
// lake's keys and versions, and whether keys are compared for deletes.
func (l *loader) prepareUpsert(ctx context.Context, src source.Source, tbl sink.Table) error {
	if l.tr.Mode != plan.ModeUpsert {
		return nil
	}
	d, ok := src.(*dbSource)
	if !ok {
		return errors.New("mode upsert reads a database table")
	}
	if _, ok := tbl.(sink.KeyDeleter); !ok {
		return errors.New("the sink cannot delete rows by key, which mode upsert needs (use the iceberg pattern)")
	}
	if len(l.t.Load.Keys) == 0 {
		return errors.New("mode upsert needs load.keys")
	}
	up := &upsert{res: &UpsertResult{Lookback: l.t.Load.Lookback}, replace: l.o.FullRefresh, softCol: -1}
	if sd := l.t.Load.SoftDelete; sd != "" {
		up.softCol = slices.Index(l.rs.cols, sd)
		if up.softCol < 0 || l.rs.types[up.softCol].Kind != plan.Boolean {
			return fmt.Errorf("load.soft_delete: %s is not a boolean column of the table", sd)
		}
	}
	l.up, l.tr.Upsert = up, up.res
	for _, i := range l.keyCols[:len(l.t.Load.Keys)] {
		sp := l.rs.specs[i]
		up.keySpec = append(up.keySpec, clean.ColumnSpec{Name: sp.Name, Type: sp.Type, Required: true, Normalize: sp.Normalize,
			NullTokens: []string{}, Formats: canonicalFormats(sp.Type), Location: sp.Location, AllowControl: sp.AllowControl, Currency: sp.Currency})
	}
	var keySrc []string
	for _, i := range l.keyCols[:len(l.t.Load.Keys)] {
		keySrc = append(keySrc, l.rs.srcNames[i])
	}
	rng := sqldb.ReadRange{OrderKeys: keySrc}
	if l.wmCol >= 0 && !up.replace {
		rng.Column = l.rs.srcNames[l.wmCol]
		if l.tr.WatermarkBefore != "" {
			prev, err := parseCanonical(l.rs.types[l.wmCol], l.tr.WatermarkBefore)
			if err != nil {
				return fmt.Errorf("previous watermark %q: %w", l.tr.WatermarkBefore, err)
			}
			up.prev, up.hasPrev = prev, true
			// The new watermark never falls below the previous one, even
			// when only the lookback window had rows.
			l.wm, l.wmSet = prev, true
			from, text, err := lowerBound(l.rs.types[l.wmCol], prev, l.tr.WatermarkBefore, l.t.Load.Lookback)
			if err != nil {
				return err
			}
			rng.From, up.res.ReadFrom = from, text
			if err := l.readLookbackWindow(ctx, tbl, from, text); err != nil {
				return err
			}
		}
	}
	if err := d.SetRange(d.unit, rng); err != nil {
		return err
	}
	if up.replace {
		return nil
	}
	on, period, err := l.t.Load.DeleteDetection()
	if err != nil {
		return err
	}
	if on {
		up.detect = true
		if period > 0 {
			if last, ok := lastDeleteCheck(ctx, tbl); ok && l.now.Sub(last) < period {
				up.detect = false
				up.res.DeleteNote = fmt.Sprintf("keys last compared %s; next comparison after %s", last.Format(time.RFC3339), last.Add(period).Format(time.RFC3339))
			}
		}
	}
	if up.detect {
		up.srcKeys = keyset.New(keySetOptions(l.o))
	}
	_, has, err := tbl.Current(ctx)
	up.emptyLake = !has
	return err
}

// lowerBound is the previous watermark minus the lookback, as the value
// bound to the query and as text for the report.
func lowerBound(t plan.Type, prev clean.Cell, prevText, lookback string) (any, string, error) {
	d, n, isCount, err := plan.ParseLookback(lookback)
	if err != nil {
		return nil, "", fmt.Errorf("load.lookback: %w", err)
	}
	switch t.Kind {
	case plan.Timestamp, plan.TimestampTZ:
		if isCount && n > 0 {
			return nil, "", fmt.Errorf("load.lookback %q: the watermark is a %s, give a duration (10m, 2h, 1d)", lookback, t)
		}
		v := time.UnixMicro(prev.I).UTC().Add(-d)
		return v, clean.FormatCell(t, clean.Cell{I: v.UnixMicro()}), nil
	case plan.Date:
		if isCount && n > 0 {
			return nil, "", fmt.Errorf("load.lookback %q: the watermark is a date, give a duration (1d, 1w)", lookback)
		}
		v := time.Unix(prev.I*86400, 0).UTC().Add(-d)
		v = time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, time.UTC)
		return v, v.Format("2006-01-02"), nil
	case plan.Int, plan.Long:
		if !isCount && d > 0 {
			return nil, "", fmt.Errorf("load.lookback %q: the watermark is a %s, give a count (1000)", lookback, t)
		}
		v := prev.I - n
		return v, fmt.Sprint(v), nil
	}
	if lookback != "" {
		return nil, "", fmt.Errorf("load.lookback: a %s watermark has no lookback; remove it", t)
	}
	return prevText, prevText, nil
}

// lastDeleteCheck finds when the keys were last compared.
func lastDeleteCheck(ctx context.Context, tbl sink.Table) (time.Time, bool) {
	h, ok := tbl.(sink.Historian)
	if !ok {
		return time.Time{}, false
	}
	hist, err := h.History(ctx)
	if err != nil {
		return time.Time{}, false
	}
	for _, c := range hist {
		if v := c.Props[PropDeletesChecked]; v != "" {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// scanKeys reads the key columns (and extra, if any) of the table's
// current snapshot and calls fn with the key texts and the extra text.
func (l *loader) scanKeys(ctx context.Context, tbl sink.Table, extra string, fn func(key []string, x string)) error {
	if _, ok, err := tbl.Current(ctx); err != nil || !ok {
		return err
	}
	sc, ok := tbl.(sink.Scanner)
	if !ok {
		return errors.New("the sink cannot read the table back")
	}
	names := slices.Clone(l.t.Load.Keys)
	if extra != "" && !slices.Contains(names, extra) {
		names = append(names, extra)
	}
	it, err := sc.Scan(ctx, 0, names)
	if err != nil {
		return err
	}
	key := make([]string, len(l.t.Load.Keys))
	for rec, err := range it {
		if err != nil {
			return err
		}
		byName := map[string]arrow.Array{}
		for ci, f := range rec.Schema().Fields() {
			byName[f.Name] = rec.Column(ci)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			for j, k := range l.t.Load.Keys {
				key[j] = "NULL"
				if a := byName[k]; a != nil {
					key[j] = formatArrow(a, r)
				}
			}
			x := ""
			if a := byName[extra]; extra != "" && a != nil {
				x = formatArrow(a, r)
			}
			fn(key, x)
		}
		rec.Release()
	}
	return nil
}

// lakeVersions finds the lake rows of the keys read (not every key of
// the lake: sink.KeyFinder reads only the data files and row groups whose
// key statistics can hold them) and maps each key's hash to the hash of
// its watermark text. A key twice in the lake (which gate 4 fails) keeps
// its first version here.
func (l *loader) lakeVersions(ctx context.Context, tbl sink.Table) (map[[2]uint64]uint64, error) {
	up := l.up
	out := map[[2]uint64]uint64{}
	if _, ok, err := tbl.Current(ctx); err != nil || !ok {
		return out, err
	}
	wm := ""
	if l.wmCol >= 0 {
		wm = l.rs.cols[l.wmCol]
	}
	nk := len(l.t.Load.Keys)
	key := make([]string, nk)
	add := func(key []string, x string) {
		h := l.hashKey(key)
		if _, seen := out[h]; !seen {
			out[h] = versionHash(l.seeds[0], x)
		}
	}
	kf, ok := tbl.(sink.KeyFinder)
	if !ok { // a sink without statistics: every key is read
		err := l.scanKeys(ctx, tbl, wm, add)
		return out, err
	}
	seen := map[[2]uint64]bool{}
	var texts [][]string
	for _, p := range up.pending {
		if !seen[p.key] {
			seen[p.key] = true
			texts = append(texts, p.texts)
		}
	}
	keys, err := l.keyBatches(texts)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range keys.Batches {
			b.Release()
		}
	}()
	var extra []string
	if wm != "" && !slices.Contains(l.t.Load.Keys, wm) {
		extra = []string{wm}
	}
	st, err := kf.FindKeys(ctx, 0, keys, extra, func(f sink.FoundRows) error {
		for _, r := range f.Rows {
			for j := range nk {
				key[j] = formatArrow(f.Rec.Column(j), r)
			}
			x := ""
			switch {
			case len(extra) > 0:
				x = formatArrow(f.Rec.Column(nk), r)
			case wm != "":
				x = formatArrow(f.Rec.Column(slices.Index(l.t.Load.Keys, wm)), r)
			}
			add(key, x)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	up.res.LakeLookup = &st
	return out, nil
}

// classifyUpsert looks the keys read up in the lake and counts each
// accepted row, in read order, as insert or update (and late), as
// acceptUpsert recorded them.
func (l *loader) classifyUpsert(ctx context.Context, tbl sink.Table) error {
	up := l.up
	if up == nil || up.replace || len(up.pending) == 0 {
		return nil
	}
	lake, err := l.lakeVersions(ctx, tbl)
	if err != nil {
		return fmt.Errorf("find the keys read in the table: %w", err)
	}
	for _, p := range up.pending {
		ver, inLake := lake[p.key]
		if _, gone := up.softDone[p.key]; gone {
			inLake = false // deleted by this run: a later version of the key is an insert again
		}
		if p.soft {
			if inLake {
				up.res.SoftDeleted++
				up.updKeys = append(up.updKeys, p.texts)
				if up.softDone == nil {
					up.softDone = map[[2]uint64]struct{}{}
				}
				up.softDone[p.key] = struct{}{}
			}
			continue
		}
		if inLake {
			up.res.Updated++
			up.updKeys = append(up.updKeys, p.texts)
		} else {
			up.res.Inserted++
		}
		if p.old && (!inLake || ver != versionHash(l.seeds[0], p.wmText)) {
			up.res.LateRows++
		}
	}
	up.pending = nil
	return nil
}

// readSourceKeys reads every key of the source table in the read snapshot
// (delete detection), cast as the rows are so the texts compare equal.
func (l *loader) readSourceKeys(ctx context.Context, r *sqldb.Reader) error {
	up := l.up
	if up == nil || !up.detect {
		return nil
	}
	kc, err := l.keyCaster(true)
	if err != nil {
		return err
	}
	defer kc.Release()
	var srcNames []string
	for _, i := range l.keyCols[:len(l.t.Load.Keys)] {
		srcNames = append(srcNames, l.rs.srcNames[i])
	}
	spec := make([]clean.ColumnSpec, len(up.keySpec))
	copy(spec, up.keySpec)
	texts := make([]string, len(spec))
	flag := ""
	if up.softCol >= 0 {
		flag = l.rs.srcNames[up.softCol]
	}
	return r.KeysExcept(ctx, srcNames, flag, func(vals []string, nulls []bool) error {
		if slices.Contains(nulls, true) {
			return nil // a null key identifies nothing; such rows are held back by the load
		}
		if errs := kc.Cast(vals, nil); errs != nil {
			return nil // an uncastable key is held back by the load too
		}
		for i, c := range kc.Cells() {
			texts[i] = clean.FormatCell(spec[i].Type, c)
		}
		_, err := up.srcKeys.Add(l.hashKey(texts))
		return err
	})
}

// keyCaster casts key texts into Arrow key columns typed as the table's:
// source texts with the key columns' normalizations (fromSource), or the
// canonical texts of cast keys without them.
func (l *loader) keyCaster(fromSource bool) (*clean.Caster, error) {
	var fields []arrow.Field
	sch := l.caster.Schema()
	specs := slices.Clone(l.up.keySpec)
	for i := range specs {
		if !fromSource {
			specs[i].Normalize = nil
		}
	}
	for _, sp := range specs {
		i := sch.FieldIndices(sp.Name)
		if len(i) == 0 {
			return nil, fmt.Errorf("key column %s is not in the table", sp.Name)
		}
		fields = append(fields, sch.Field(i[0]))
	}
	return clean.NewCaster(specs, arrow.NewSchema(fields, nil), l.o.Alloc)
}

// acceptUpsert records an accepted row for classifyUpsert (insert or
// update, late when it is at or below the previous watermark in a version
// the lake lacks). It returns true for a row its source marks deleted
// (load.soft_delete): the row is not loaded and its key is deleted from
// the lake.
func (l *loader) acceptUpsert(key [2]uint64, cells []clean.Cell) (drop bool, err error) {
	up := l.up
	soft := up.softCol >= 0 && !cells[up.softCol].Null && cells[up.softCol].I == 1
	if up.replace {
		if !soft {
			up.res.Inserted++
		}
		return soft, nil
	}
	old := !soft && l.wmCol >= 0 && up.hasPrev && !cells[l.wmCol].Null && compareCells(l.rs.types[l.wmCol], cells[l.wmCol], up.prev) <= 0
	if up.emptyLake { // nothing to look up: every row is an insert, and late when old
		if !soft {
			up.res.Inserted++
			if old {
				up.res.LateRows++
			}
		}
		return soft, nil
	}
	p := pendingRow{key: key, texts: l.keyTexts(cells), soft: soft, old: old}
	if !soft && l.wmCol >= 0 {
		p.wmText = clean.FormatCell(l.rs.types[l.wmCol], cells[l.wmCol])
	}
	up.pending = append(up.pending, p)
	return soft, nil
}

// keyTexts are the canonical texts of a row's key.
func (l *loader) keyTexts(cells []clean.Cell) []string {
	kt := make([]string, 0, len(l.t.Load.Keys))
	for _, i := range l.keyCols[:len(l.t.Load.Keys)] {
		kt = append(kt, clean.FormatCell(l.rs.types[i], cells[i]))
	}
	return kt
}

// supersededRow reports whether the row just read is replaced by a later
// row of the same key in this read.
func (l *loader) supersededRow(rd source.RowReader) bool {
	if l.up == nil {
		return false
	}
	r, ok := rd.(*sqldb.Reader)
	return ok && r.Superseded()
}

// finishUpsert finds the lake keys missing at the source (when the keys
// were compared and the whole snapshot was read).
func (l *loader) finishUpsert(ctx context.Context, tbl sink.Table) error {
	up := l.up
	if up == nil || !up.detect {
		return nil
	}
	for _, f := range l.tr.Files {
		if f.Status != "read" {
			up.detect = false
			up.res.DeleteNote = "keys not compared: the read of the source stopped early, so no row is deleted"
			return nil
		}
	}
	up.res.DeletesChecked = true
	up.res.SourceKeys = up.srcKeys.Len()
	var probeErr error
	err := l.scanKeys(ctx, tbl, "", func(key []string, _ string) {
		h := l.hashKey(key)
		atSource, err := up.srcKeys.Contains(h)
		if err != nil && probeErr == nil {
			probeErr = err
		}
		_, marked := up.softDone[h] // deleted already, counted as soft-deleted
		if !atSource && !marked && err == nil {
			up.delKeys = append(up.delKeys, slices.Clone(key))
		}
	})
	if err == nil {
		err = probeErr
	}
	if err != nil {
		return fmt.Errorf("compare keys with the lake: %w", err)
	}
	up.res.Deleted = int64(len(up.delKeys))
	return nil
}

// pendingDeletes reports whether the upsert has keys to delete.
func (l *loader) pendingDeletes() bool {
	return l.up != nil && (len(l.up.updKeys) > 0 || len(l.up.delKeys) > 0)
}

// commit commits the staged rows: an upsert deletes the lake rows of the
// updated and deleted keys and appends in one atomic commit; any other
// load commits as before.
func (l *loader) commit(ctx context.Context, tbl sink.Table, staged sink.Staged, p sink.CommitProps) (sink.Commit, error) {
	up := l.up
	if up == nil {
		return tbl.Commit(ctx, staged, p)
	}
	p.Replace = up.replace
	if up.replace {
		return tbl.Commit(ctx, staged, p)
	}
	if up.res.DeletesChecked {
		p.Extra = maps.Clone(p.Extra)
		if p.Extra == nil {
			p.Extra = map[string]string{}
		}
		p.Extra[PropDeletesChecked] = l.now.Format(time.RFC3339)
	}
	keys, err := l.keyBatches(append(slices.Clone(up.updKeys), up.delKeys...))
	if err != nil {
		return sink.Commit{}, err
	}
	defer func() {
		for _, b := range keys.Batches {
			b.Release()
		}
	}()
	c, err := tbl.(sink.KeyDeleter).CommitDelta(ctx, staged, p, keys)
	if err == nil {
		up.res.RowsRemoved = c.Deleted
	}
	return c, err
}

// keyBatches turns key texts into Arrow key batches.
func (l *loader) keyBatches(texts [][]string) (sink.Keys, error) {
	k := sink.Keys{Columns: slices.Clone(l.t.Load.Keys)}
	if len(texts) == 0 {
		return k, nil
	}
	kc, err := l.keyCaster(false)
	if err != nil {
		return k, err
	}
	defer kc.Release()
	for i, t := range texts {
		if errs := kc.Cast(t, nil); errs != nil {
			for _, b := range k.Batches {
				b.Release()
			}
			return sink.Keys{}, fmt.Errorf("key %v: %s", t, errs[0].Reason)
		}
		kc.Accept()
		if kc.Len() >= 8192 || i == len(texts)-1 {
			k.Batches = append(k.Batches, kc.NewBatch())
		}
	}
	return k, nil
}
