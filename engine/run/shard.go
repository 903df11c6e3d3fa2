package run

// A distributed load: the table's input split into shards, each staged by
// a worker process (Options.StageOnly) that commits nothing, then one
// commit of every shard's files (CommitShards). Both halves run the one
// lifecycle (lifecycle.go): a shard is a stage-only life of the ordinary
// file load; the commit is a life whose stage adopts the workers' files
// and holds their exceptions, then checks, commits and settles as every
// load does. The JSON the processes exchange is flow's (flow/shard.go).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// ErrShardUnsupported marks a table a distributed load cannot take.
var ErrShardUnsupported = errors.New("not supported by a distributed load")

// ShardSupported says why a table cannot be loaded in shards (nil: it
// can): files or objects in mode full, without a history table.
func ShardSupported(p *plan.Plan, t *plan.Table) error {
	if t.Source == nil {
		return fmt.Errorf("%w: the table has no source", ErrShardUnsupported)
	}
	if s := p.Sources[t.Source.Name]; s == nil || s.Kind != plan.SourceFiles {
		return fmt.Errorf("%w: only file and object sources are sharded (source %q)", ErrShardUnsupported, t.Source.Name)
	}
	if t.Mode() != plan.ModeFull {
		return fmt.Errorf("%w: only mode full is sharded (mode %s)", ErrShardUnsupported, t.Mode())
	}
	if t.History {
		return fmt.Errorf("%w: a table with a history table is not sharded", ErrShardUnsupported)
	}
	return nil
}

// castingOf fingerprints the cleaning and casting of the columns.
func castingOf(specs []clean.ColumnSpec) string {
	h := sha256.New()
	for _, c := range specs {
		loc := ""
		if c.Location != nil {
			loc = c.Location.String()
		}
		fmt.Fprintf(h, "%q %s %v %q %q %q %q %v %q\n", c.Name, c.Type, c.Required, c.Formats, c.Normalize, c.NullTokens, loc, c.AllowControl, c.Currency)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// stageShard is one shard's life: the file load, stage only.
func stageShard(ctx context.Context, o Options, name string, t *plan.Table) *TableResult {
	lc := newLifecycle(name, t.Mode(), o.Progress.table(name))
	if err := ShardSupported(o.Plan, t); err != nil {
		lc.tr.Err, lc.tr.Status = err, StatusFailed
		return lc.tr
	}
	if o.LoadID == "" {
		lc.tr.Err, lc.tr.Status = errors.New("run: a shard needs the load id of its load"), StatusFailed
		return lc.tr
	}
	lc.stageOnly = true
	return lc.live(ctx, &fileLoad{lifecycle: lc, pendingLoad: pendingLoad{o: &o, res: lc.tr}, o: o, name: name, t: t})
}

// CollectQuarantine keeps held rows in memory: a worker's shard has no
// ledger; its exceptions travel in its manifest to the commit.
type CollectQuarantine struct {
	Held []Exception
}

// Hold keeps the exceptions.
func (q *CollectQuarantine) Hold(_ context.Context, ex []Exception) error {
	q.Held = append(q.Held, ex...)
	return nil
}

// Publish does nothing: the commit publishes.
func (q *CollectQuarantine) Publish(context.Context, string, string) error { return nil }

// Discard drops what was held.
func (q *CollectQuarantine) Discard(context.Context, string, string) error {
	q.Held = nil
	return nil
}

// Totals are a shard's control figures in a form that travels as JSON and
// adds up exactly over shards: sums as decimal text (exact for integers and
// decimals), min and max as canonical text.
type Totals struct {
	Rows          int64             `json:"rows"`
	Sums          map[string]string `json:"sums,omitempty"`
	Min           map[string]string `json:"min,omitempty"`
	Max           map[string]string `json:"max,omitempty"`
	Samples       []Sample          `json:"samples,omitempty"`
	DuplicateRows *int64            `json:"duplicate_rows,omitempty"`
}

// TotalsOf is the travelling form of a shard's stats.
func TotalsOf(s Stats) Totals {
	t := Totals{Rows: s.Rows, Min: s.Min, Max: s.Max, Samples: s.Samples, DuplicateRows: s.DuplicateRows, Sums: map[string]string{}}
	for c, v := range s.Sums {
		t.Sums[c] = v.String()
	}
	return t
}

// Part is one shard's staged outcome, as its worker reported it.
type Part struct {
	Shard, Attempt string
	Files          []sink.DataFile
	RowsRead       int64
	RowsLoaded     int64
	RowsHeld       int64
	RowsSkipped    int64
	SkippedBy      map[string]int64
	HeldBy         map[string]int64
	HeldByOwner    map[string]int64
	Inputs         []FileResult
	Exceptions     []Exception
	Normalizations []clean.Normalization
	Totals         Totals
	Findings       []string
	// Casting is the shard's TableResult.Casting.
	Casting string
	// Columns, Types and Required are the schema the shard staged under.
	Columns  []string
	Types    []string
	Required []bool
}

// Balanced: the shard's rows read are loaded, held or skipped, and its
// files hold exactly the rows it loaded.
func (p Part) Balanced() error {
	var files int64
	for _, f := range p.Files {
		files += f.Records
	}
	if p.RowsRead != p.RowsLoaded+p.RowsHeld+p.RowsSkipped || files != p.RowsLoaded || p.Totals.Rows != p.RowsLoaded || int64(len(p.Exceptions)) != p.RowsHeld {
		return fmt.Errorf("shard %s attempt %s does not balance: read %d ≠ loaded %d + held back %d + skipped %d (its files hold %d rows, its totals count %d, it reports %d exceptions)",
			p.Shard, p.Attempt, p.RowsRead, p.RowsLoaded, p.RowsHeld, p.RowsSkipped, files, p.Totals.Rows, len(p.Exceptions))
	}
	return nil
}

// CommitShards commits the chosen attempt of every shard of a load
// (o.LoadID) of table name in one snapshot, through the one lifecycle:
// open the table and look for the load, adopt the parts' files and hold
// their exceptions, the conservation guard, the error budget, the commit,
// the ledger. A load already in the table changes nothing.
func CommitShards(ctx context.Context, o Options, name string, parts []Part) (*TableResult, error) {
	t, ok := o.Plan.Tables[name]
	if !ok {
		return nil, fmt.Errorf("run: no table %q in the plan", name)
	}
	if err := ShardSupported(o.Plan, t); err != nil {
		return nil, err
	}
	if o.LoadID == "" || o.Sink == nil || o.Quarantine == nil {
		return nil, errors.New("run: a commit of shards needs the load id, the sink and the quarantine")
	}
	if len(parts) == 0 {
		return nil, errors.New("run: a commit of shards needs at least one shard")
	}
	lc := newLifecycle(name, t.Mode(), o.Progress.table(name))
	return lc.live(ctx, &shardCommit{lifecycle: lc, pendingLoad: pendingLoad{o: &o, res: lc.tr}, o: o, name: name, t: t, parts: parts}), nil
}

// shardCommit is the life of a load whose rows workers staged.
type shardCommit struct {
	*lifecycle
	pendingLoad
	o     Options
	name  string
	t     *plan.Table
	parts []Part
	tbl   sink.Table
}

func (s *shardCommit) open(ctx context.Context) (bool, error) {
	tr, first := s.tr, s.parts[0]
	rs := &resolved{cols: first.Columns, required: first.Required}
	for _, ts := range first.Types {
		typ, err := plan.ParseType(ts)
		if err != nil {
			return false, fmt.Errorf("shard %s: column type %q: %w", first.Shard, ts, err)
		}
		rs.types = append(rs.types, typ)
	}
	for _, p := range s.parts[1:] {
		if p.Casting != first.Casting {
			return false, fmt.Errorf("shards %s and %s cleaned their rows under different rules (a date format or number convention is chosen from each shard's sample); pin them in the plan (the column's formats, normalize: [decimal_comma]), approve and load again; nothing committed",
				first.Shard, p.Shard)
		}
		if !slices.Equal(p.Columns, first.Columns) || !slices.Equal(p.Types, first.Types) || !slices.Equal(p.Required, first.Required) {
			return false, fmt.Errorf("shards %s and %s were staged under different columns (%s: %s; %s: %s); nothing committed",
				first.Shard, p.Shard, first.Shard, strings.Join(first.Types, ","), p.Shard, strings.Join(p.Types, ","))
		}
	}
	if len(rs.cols) != len(rs.types) || len(rs.cols) != len(rs.required) {
		return false, fmt.Errorf("shard %s reports %d columns, %d types and %d required flags", first.Shard, len(rs.cols), len(rs.types), len(rs.required))
	}
	for _, p := range s.parts {
		rs.findings = appendNew(rs.findings, p.Findings...)
	}
	for _, p := range s.t.Partition {
		if pf, err := plan.ParsePartition(p); err == nil {
			tr.PartitionColumns = append(tr.PartitionColumns, pf.Column)
		}
	}
	tbl, err := openTable(ctx, s.o, s.name, s.t, rs, tr, s.prog)
	if err != nil {
		return false, err
	}
	s.tbl = tbl
	tr.LoadID = s.o.LoadID
	if s.cur, s.hasCur, err = tbl.Current(ctx); err != nil {
		return false, err
	}
	if s.hasCur {
		tr.WatermarkBefore = s.cur.Watermark
	}
	// A full table's last load (replays of fixed exceptions skipped), as
	// the file load looks for it.
	last, found, err := tbl.LastLoad(ctx)
	if err != nil || !found || last.LoadID != tr.LoadID {
		return false, err
	}
	last.AlreadyCommitted = true
	tr.Commit, tr.Status, tr.WatermarkAfter = last, StatusAlreadyLoaded, last.Watermark
	for _, p := range s.parts {
		for _, f := range p.Inputs {
			f.Status = "already loaded"
			tr.Files = append(tr.Files, f)
		}
	}
	return true, nil
}

func appendNew(to []string, xs ...string) []string {
	for _, x := range xs {
		if !slices.Contains(to, x) {
			to = append(to, x)
		}
	}
	return to
}

func (s *shardCommit) stage(ctx context.Context) error {
	tr := s.tr
	ad, ok := s.tbl.(sink.Adopter)
	if !ok {
		return fmt.Errorf("%w: the sink of %s cannot adopt staged files", ErrShardUnsupported, s.name)
	}
	var files []sink.DataFile
	norm := map[[2]string]int64{}
	for _, p := range s.parts {
		if err := p.Balanced(); err != nil {
			return err
		}
		files = append(files, p.Files...)
		tr.RowsRead += p.RowsRead
		tr.RowsLoaded += p.RowsLoaded
		tr.RowsSkipped += p.RowsSkipped
		addCounts(tr.SkippedBy, p.SkippedBy)
		addCounts(tr.QuarantinedBy, p.HeldBy)
		addCounts(tr.HeldByOwner, p.HeldByOwner)
		tr.Files = append(tr.Files, p.Inputs...)
		for _, f := range p.Inputs {
			tr.InputBytes += f.Bytes
		}
		for _, n := range p.Normalizations {
			norm[[2]string{n.Column, n.Fix}] += n.Count
		}
		// The shard's exceptions are this load's: held pending under its
		// load id, published with the commit, dropped by an abort.
		ex := make([]Exception, len(p.Exceptions))
		for i, e := range p.Exceptions {
			e.LoadID, e.RunID, e.Table = s.o.LoadID, s.o.RunID, s.name
			ex[i] = e
			if e.Level == "file" {
				tr.FileExceptions = append(tr.FileExceptions, e)
			}
			if len(tr.Exceptions) < 100 {
				tr.Exceptions = append(tr.Exceptions, e)
			}
		}
		if err := s.o.Quarantine.Hold(ctx, ex); err != nil {
			return fmt.Errorf("hold the exceptions of shard %s: %w", p.Shard, err)
		}
		tr.RowsQuarantined += int64(len(ex))
	}
	keys := slices.SortedFunc(maps.Keys(norm), func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	for _, k := range keys {
		tr.Normalizations = append(tr.Normalizations, clean.Normalization{Column: k[0], Fix: k[1], Count: norm[k]})
	}
	src, err := mergeTotals(tr.Columns, tr.Types, s.parts)
	if err != nil {
		return err
	}
	tr.Source = src
	staged, err := ad.Adopt(ctx, files)
	if err != nil {
		return err
	}
	s.staged, s.want = staged, src.Rows
	tr.StagedFiles, tr.StagedBytes = staged.Files(), staged.Bytes()
	tr.WatermarkAfter = tr.WatermarkBefore
	return nil
}

func addCounts(to, from map[string]int64) {
	for k, v := range from {
		to[k] += v
	}
}

// mergeTotals adds the shards' totals: counts and exact sums add, min and
// max are compared by type, the samples are the first five.
func mergeTotals(cols []string, types []plan.Type, parts []Part) (Stats, error) {
	st := Stats{Sums: map[string]*Sum{}, Min: map[string]string{}, Max: map[string]string{}}
	typeOf := map[string]plan.Type{}
	for i, c := range cols {
		typeOf[c] = types[i]
	}
	for _, p := range parts {
		st.Rows += p.Totals.Rows
		for c, v := range p.Totals.Sums {
			t, ok := typeOf[c]
			if !ok {
				return st, fmt.Errorf("shard %s sums column %s, which the table does not have", p.Shard, c)
			}
			s := st.Sums[c]
			if s == nil {
				s = &Sum{Type: t, IsFloat: t.Kind == plan.Double}
				st.Sums[c] = s
			}
			if err := s.addText(v); err != nil {
				return st, fmt.Errorf("shard %s: sum of %s: %w", p.Shard, c, err)
			}
		}
		for _, side := range []struct {
			in, out map[string]string
			sign    int
		}{{p.Totals.Min, st.Min, -1}, {p.Totals.Max, st.Max, 1}} {
			for c, v := range side.in {
				t, ok := typeOf[c]
				if !ok {
					return st, fmt.Errorf("shard %s bounds column %s, which the table does not have", p.Shard, c)
				}
				cur, had := side.out[c]
				if !had {
					side.out[c] = v
					continue
				}
				a, errA := parseCanonical(t, v)
				b, errB := parseCanonical(t, cur)
				if errA != nil || errB != nil {
					return st, fmt.Errorf("shard %s: bounds of %s: %w", p.Shard, c, errors.Join(errA, errB))
				}
				if compareCells(t, a, b)*side.sign > 0 {
					side.out[c] = v
				}
			}
		}
		for _, smp := range p.Totals.Samples {
			if len(st.Samples) < 5 {
				st.Samples = append(st.Samples, smp)
			}
		}
		if d := p.Totals.DuplicateRows; d != nil {
			// Whole-row duplicates within each shard; a row repeated in
			// two shards is not counted (gate 4 then reports more).
			if st.DuplicateRows == nil {
				st.DuplicateRows = new(int64)
			}
			*st.DuplicateRows += *d
		}
	}
	return st, nil
}

// addText adds a sum written by String.
func (s *Sum) addText(v string) error {
	if s.IsFloat {
		f, _, err := big.ParseFloat(v, 10, 64, big.ToNearestEven)
		if err != nil {
			return err
		}
		x, _ := f.Float64()
		s.Float += x
		return nil
	}
	neg := strings.HasPrefix(v, "-")
	digits := strings.TrimPrefix(v, "-")
	intPart, frac, _ := strings.Cut(digits, ".")
	if len(frac) != s.Type.Scale {
		return fmt.Errorf("%q does not have the column's scale %d", v, s.Type.Scale)
	}
	n, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return fmt.Errorf("%q is not a decimal", v)
	}
	if neg {
		n.Neg(n)
	}
	s.exact.Add(&s.exact, n)
	return nil
}

func (s *shardCommit) check(context.Context) (verdict, error) {
	if s.staged.Rows() == 0 && !s.hasCur {
		return verdict{noSnapshot: StatusNothingToLoad}, nil
	}
	return budgetVerdict(s.o.Plan, s.t, s.tr, s.name)
}

func (s *shardCommit) commit(ctx context.Context) (sink.Commit, error) {
	tr := s.tr
	return s.tbl.Commit(ctx, s.staged, sink.CommitProps{LoadID: tr.LoadID, RunID: s.o.RunID, Watermark: tr.WatermarkAfter, Replace: true,
		Extra: map[string]string{"lima.shards": fmt.Sprint(len(s.parts))}})
}

func (s *shardCommit) settle(ctx context.Context, committed bool) error {
	err := s.publish(ctx)
	if err != nil && committed {
		return fmt.Errorf("committed snapshot %d but publishing its exceptions failed: %w", s.tr.Commit.SnapshotID, err)
	}
	return err
}
