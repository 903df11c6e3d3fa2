// Package mart builds the marts of a plan from its committed base tables:
// the rows of the mart's first table (the fact), joined many to one to the
// others, grouped by the declared dimensions, with the declared aggregates.
// Integer and decimal aggregates are exact (math/big), never floats. The
// result is written as the Iceberg table mart_<name> through the sink, in
// one commit that replaces the table, with a load id derived from the
// inputs: rebuilding from the same inputs adds nothing.
//
// Memory is bounded by the number of groups (plus, for a pre-aggregated
// measure, the rows of its table seen per group) and by the joined tables,
// which are held as lookups; the fact table streams.
package mart

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// Statuses of a build.
const (
	StatusBuilt        = "built"
	StatusAlreadyBuilt = "already_built"
	// StatusEmpty: the fact table has no rows and the mart was never
	// built; nothing is committed (an empty snapshot cannot be made).
	StatusEmpty = "empty"
)

// PropInputs is the snapshot property listing the inputs of a mart build:
// "table=load-id@snapshot-id" joined by ",", tables sorted.
const PropInputs = "lima.mart.inputs"

// ErrNotBuilt marks a plan table that is not a mart Lima builds.
var ErrNotBuilt = errors.New("not a mart Lima builds")

// TableName is the lake table of a mart: mart_<name>.
func TableName(name string) string { return "mart_" + name }

// Input is a committed base table a mart reads.
type Input struct {
	// LoadID is the load id of the table's last load
	// (run.TableResult.LoadID).
	LoadID string
	// Table is an open handle of the lake table (run.TableResult.Table).
	// When nil it is opened from the plan's declared columns, which must
	// all have a type.
	Table sink.Table
}

// Options of a build.
type Options struct {
	RunID string
	// BatchRows per written Arrow batch (default 8192).
	BatchRows int
	Alloc     memory.Allocator
}

// InputSnapshot is what a build read of one input.
type InputSnapshot struct {
	LoadID     string `json:"load_id"`
	SnapshotID int64  `json:"snapshot_id"`
}

// Result of a build.
type Result struct {
	// Name is the mart's plan name; Table its lake table (mart_<name>).
	Name, Table string
	LoadID      string
	Status      string
	Commit      sink.Commit
	// Rows is the number of mart rows (groups) written; FactRows the rows
	// of the fact table read.
	Rows, FactRows int64
	Inputs         map[string]InputSnapshot
	// Columns and Types are the mart's schema.
	Columns []string
	Types   []plan.Type
	// Handle is the open mart table (a sink.Scanner for gate 4).
	Handle sink.Table
}

// Build computes the mart name of the plan from its inputs (by table name:
// every From table) and commits it as mart_<name>, replacing the table's
// previous contents. When the table's last load already carries the load
// id of these inputs, nothing is written (StatusAlreadyBuilt).
func Build(ctx context.Context, p *plan.Plan, sk sink.Sink, name string, inputs map[string]Input, o Options) (*Result, error) {
	t := p.Tables[name]
	if t == nil || !t.Built() {
		return nil, fmt.Errorf("mart %s: %w (type: mart with from, dimensions and measures)", name, ErrNotBuilt)
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 8192
	}
	if o.Alloc == nil {
		o.Alloc = memory.DefaultAllocator
	}
	res := &Result{Name: name, Table: TableName(name), Inputs: map[string]InputSnapshot{}}
	b := &builder{p: p, t: t, name: name, o: o, tables: map[string]*input{}}
	for _, tn := range t.From {
		in, ok := inputs[tn]
		if !ok {
			return nil, fmt.Errorf("mart %s: input table %s was not given; load it first", name, tn)
		}
		tbl := in.Table
		if tbl == nil {
			var err error
			if tbl, err = openBase(ctx, p, sk, tn); err != nil {
				return nil, fmt.Errorf("mart %s: %w", name, err)
			}
		}
		cur, ok, err := tbl.Current(ctx)
		if err != nil {
			return nil, fmt.Errorf("mart %s: read %s: %w", name, tn, err)
		}
		if !ok {
			return nil, fmt.Errorf("mart %s: table %s has no data yet; load it first", name, tn)
		}
		sc, ok := tbl.(sink.Scanner)
		if !ok {
			return nil, fmt.Errorf("mart %s: the sink cannot read %s back", name, tn)
		}
		b.tables[tn] = &input{name: tn, scan: sc, snapshot: cur.SnapshotID, schema: tbl.Schema()}
		res.Inputs[tn] = InputSnapshot{LoadID: in.LoadID, SnapshotID: cur.SnapshotID}
	}
	if err := b.resolve(); err != nil {
		return nil, fmt.Errorf("mart %s: %w", name, err)
	}
	res.Columns, res.Types = b.outCols, b.outTypes
	res.LoadID = loadID(name, t, res.Inputs)
	spec := sink.TableSpec{Name: res.Table, Namespace: p.Namespace(), Types: b.outTypes, Required: make([]bool, len(b.outCols))}
	for i, c := range b.outCols {
		spec.Columns = append(spec.Columns, plan.Column{Name: c, Type: b.outTypes[i].String(), Description: b.describe(c)})
	}
	tbl, err := sk.OpenTable(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("mart %s: %w", name, err)
	}
	res.Handle = tbl
	if last, ok, err := tbl.LastLoad(ctx); err != nil {
		return nil, fmt.Errorf("mart %s: %w", name, err)
	} else if ok && last.LoadID == res.LoadID {
		last.AlreadyCommitted = true
		res.Commit, res.Status = last, StatusAlreadyBuilt
		if n, err := fmt.Sscan(last.Props[sink.PropRows], &res.Rows); n != 1 || err != nil {
			res.Rows = -1
		}
		return res, nil
	}
	if err := b.lookups(ctx); err != nil {
		return nil, fmt.Errorf("mart %s: %w", name, err)
	}
	if err := b.group(ctx); err != nil {
		return nil, fmt.Errorf("mart %s: %w", name, err)
	}
	res.FactRows = b.factRows
	if len(b.groups) == 0 {
		if _, ok, err := tbl.Current(ctx); err != nil {
			return nil, fmt.Errorf("mart %s: %w", name, err)
		} else if !ok {
			res.Status = StatusEmpty
			return res, nil
		}
	}
	staged, err := tbl.Stage(ctx, b.batches(tbl.Schema()))
	if err != nil {
		return nil, fmt.Errorf("mart %s: write: %w", name, err)
	}
	if b.err != nil {
		_ = staged.Discard(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("mart %s: %w", name, b.err)
	}
	var ins []string
	for _, tn := range slices.Sorted(mapsKeys(res.Inputs)) {
		in := res.Inputs[tn]
		ins = append(ins, fmt.Sprintf("%s=%s@%d", tn, in.LoadID, in.SnapshotID))
	}
	c, err := tbl.Commit(ctx, staged, sink.CommitProps{LoadID: res.LoadID, RunID: o.RunID, Replace: true,
		Extra: map[string]string{PropInputs: strings.Join(ins, ",")}})
	if err != nil {
		_ = staged.Discard(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("mart %s: %w", name, err)
	}
	res.Commit, res.Status, res.Rows = c, StatusBuilt, int64(len(b.groups))
	return res, nil
}

func mapsKeys[V any](m map[string]V) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// loadID fingerprints the mart's definition and the snapshots it reads.
func loadID(name string, t *plan.Table, inputs map[string]InputSnapshot) string {
	def, err := json.Marshal(struct {
		From       []string
		Joins      []plan.JoinKey
		Dimensions []plan.Dimension
		Measures   []plan.Measure
		Columns    []plan.Column
	}{t.From, t.Joins, t.Dimensions, t.Measures, t.Columns})
	if err != nil {
		panic(err) // plain data always marshals
	}
	h := sha256.New()
	fmt.Fprintf(h, "mart=%s\ndef=%s\n", name, def)
	for _, tn := range slices.Sorted(mapsKeys(inputs)) {
		fmt.Fprintf(h, "%s=%s@%d\n", tn, inputs[tn].LoadID, inputs[tn].SnapshotID)
	}
	return "ld-" + hex.EncodeToString(h.Sum(nil))[:20]
}

// openBase opens a base table from the plan's declared columns.
func openBase(ctx context.Context, p *plan.Plan, sk sink.Sink, name string) (sink.Table, error) {
	if p.Tables[name] == nil {
		return nil, fmt.Errorf("no table %s in the plan", name)
	}
	spec, err := Spec(p, name)
	if err != nil {
		return nil, err
	}
	return sk.OpenTable(ctx, spec)
}

// Spec is the sink spec of a base table from its declared columns, which
// must all have a type.
func Spec(p *plan.Plan, name string) (sink.TableSpec, error) {
	bt := p.Tables[name]
	spec := sink.TableSpec{Name: name, Namespace: p.Namespace()}
	if bt == nil || len(bt.Columns) == 0 {
		return spec, fmt.Errorf("table %s declares no columns; pass its open handle (run.TableResult.Table) instead", name)
	}
	for _, c := range bt.Columns {
		typ, err := c.ParsedType()
		if err != nil || typ.Kind == plan.Unknown {
			return spec, fmt.Errorf("column %s.%s has no declared type; pass the table's open handle (run.TableResult.Table) instead", name, c.Name)
		}
		spec.Columns = append(spec.Columns, c)
		spec.Types = append(spec.Types, typ)
		spec.Required = append(spec.Required, bt.IsRequired(c.Name))
	}
	var err error
	spec.Partition, err = bt.PartitionFields()
	return spec, err
}

// PlanType is the plan type of an Arrow type as Lima writes it.
func PlanType(dt arrow.DataType) (plan.Type, error) {
	switch t := dt.(type) {
	case *arrow.Int32Type:
		return plan.Type{Kind: plan.Int}, nil
	case *arrow.Int64Type:
		return plan.Type{Kind: plan.Long}, nil
	case *arrow.Float64Type:
		return plan.Type{Kind: plan.Double}, nil
	case *arrow.Decimal128Type:
		return plan.Type{Kind: plan.Decimal, Precision: int(t.Precision), Scale: int(t.Scale)}, nil
	case *arrow.Date32Type:
		return plan.Type{Kind: plan.Date}, nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return plan.Type{Kind: plan.TimestampTZ}, nil
		}
		return plan.Type{Kind: plan.Timestamp}, nil
	case *arrow.BooleanType:
		return plan.Type{Kind: plan.Boolean}, nil
	case *arrow.StringType, *arrow.LargeStringType:
		return plan.Type{Kind: plan.String}, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return plan.Type{Kind: plan.Binary}, nil
	}
	return plan.Type{}, fmt.Errorf("the Arrow type %s has no plan type", dt)
}

// input is one From table.
type input struct {
	name     string
	scan     sink.Scanner
	snapshot int64
	schema   *arrow.Schema
	// cols are the columns the build reads of it, in order; types theirs.
	cols  []string
	types []plan.Type
	// via: the join that reaches it (nil for the fact): the left column
	// (table, index in that table's cols) and its own key column index.
	via *join
	// rows of a joined table by the key form of its join column.
	rows map[string][]val
}

type join struct {
	left    *input
	leftCol int
	right   *input
	keyCol  int
}

func (in *input) need(col string) (int, error) {
	if i := slices.Index(in.cols, col); i >= 0 {
		return i, nil
	}
	idx := in.schema.FieldIndices(col)
	if len(idx) == 0 {
		return 0, fmt.Errorf("table %s has no column %s", in.name, col)
	}
	typ, err := PlanType(in.schema.Field(idx[0]).Type)
	if err != nil {
		return 0, fmt.Errorf("%s.%s: %w", in.name, col, err)
	}
	in.cols = append(in.cols, col)
	in.types = append(in.types, typ)
	return len(in.cols) - 1, nil
}

// ref is a resolved column: its table and index in that table's cols.
type ref struct {
	in  *input
	col int
}

type dimension struct {
	d   plan.Dimension
	src ref
	typ plan.Type
}

type measure struct {
	m   plan.Measure
	src *ref // nil for count(*)
	in  plan.Type
	typ plan.Type
	// pre-aggregated: the key of the source table's rows.
	pre bool
}

type builder struct {
	p        *plan.Plan
	t        *plan.Table
	name     string
	o        Options
	tables   map[string]*input
	fact     *input
	order    []*input // joined tables, in join order
	dims     []dimension
	measures []measure
	outCols  []string
	outTypes []plan.Type
	// outSrc maps an output column to its dimension (≥ 0) or measure (-1-i).
	outSrc   []int
	groups   map[string]*group
	factRows int64
	err      error
}

func (b *builder) describe(col string) string {
	for _, d := range b.dims {
		if d.d.Name == col {
			if d.d.Transform != "" {
				return fmt.Sprintf("dimension: %s(%s.%s)", d.d.Transform, d.src.in.name, d.src.in.cols[d.src.col])
			}
			return fmt.Sprintf("dimension: %s.%s", d.src.in.name, d.src.in.cols[d.src.col])
		}
	}
	for _, m := range b.measures {
		if m.m.Name == col {
			if m.src == nil {
				return "measure: count of rows of " + b.fact.name
			}
			return fmt.Sprintf("measure: %s(%s.%s)", m.m.Agg, m.src.in.name, m.src.in.cols[m.src.col])
		}
	}
	return ""
}

// resolve checks the definition against the inputs' schemas and derives
// the mart's columns and types.
func (b *builder) resolve() error {
	t := b.t
	b.fact = b.tables[t.From[0]]
	resolveRef := func(s string) (ref, error) {
		r, err := t.Ref(s)
		if err != nil {
			return ref{}, err
		}
		in := b.tables[r.Table]
		i, err := in.need(r.Column)
		if err != nil {
			return ref{}, err
		}
		return ref{in: in, col: i}, nil
	}
	joined := map[string]bool{b.fact.name: true}
	for _, j := range t.Joins {
		l, err := resolveRef(j.Column)
		if err != nil {
			return fmt.Errorf("join %s: %w", j.Column, err)
		}
		if !joined[l.in.name] {
			return fmt.Errorf("join %s → %s: %s is not joined yet; list the joins from %s outwards", j.Column, j.References, l.in.name, b.fact.name)
		}
		r, err := resolveRef(j.References)
		if err != nil {
			return fmt.Errorf("join %s: %w", j.References, err)
		}
		if r.in == b.fact || joined[r.in.name] {
			return fmt.Errorf("join %s → %s: %s is already part of the rows", j.Column, j.References, r.in.name)
		}
		joined[r.in.name] = true
		r.in.via = &join{left: l.in, leftCol: l.col, right: r.in, keyCol: r.col}
		b.order = append(b.order, r.in)
	}
	for _, tn := range t.From[1:] {
		if !joined[tn] {
			return fmt.Errorf("%s is in from but not joined", tn)
		}
	}
	for _, d := range t.Dimensions {
		r, err := resolveRef(d.Column)
		if err != nil {
			return fmt.Errorf("dimension %s: %w", d.Name, err)
		}
		in := r.in.types[r.col]
		if d.Transform != "" && !in.IsTemporal() {
			return fmt.Errorf("dimension %s: %s(%s) needs a date or timestamp, not %s", d.Name, d.Transform, d.Column, in)
		}
		switch d.Transform {
		case "", plan.TransformYear, plan.TransformMonth, plan.TransformDay:
		default:
			return fmt.Errorf("dimension %s: transform %q is not year, month or day", d.Name, d.Transform)
		}
		b.dims = append(b.dims, dimension{d: d, src: r, typ: plan.DimensionType(d.Transform, in)})
	}
	if len(b.dims) == 0 {
		return errors.New("no dimensions: declare the grain as dimensions")
	}
	for _, m := range t.Measures {
		ms := measure{m: m}
		if m.Column != "" {
			r, err := resolveRef(m.Column)
			if err != nil {
				return fmt.Errorf("measure %s: %w", m.Name, err)
			}
			ms.src, ms.in = &r, r.in.types[r.col]
			if m.PreAggregated {
				if r.in == b.fact {
					return fmt.Errorf("measure %s: pre_aggregated applies to a column of a joined table", m.Name)
				}
				ms.pre = true
			}
		} else if m.Agg != plan.AggCount {
			return fmt.Errorf("measure %s: %s needs a column", m.Name, m.Agg)
		}
		typ, err := plan.MeasureType(m.Agg, ms.in)
		if err != nil {
			return fmt.Errorf("measure %s: %w", m.Name, err)
		}
		ms.typ = typ
		b.measures = append(b.measures, ms)
	}
	// The mart's columns: the declared order, each declared type checked.
	derived := map[string]int{}
	for i, d := range b.dims {
		derived[d.d.Name] = i
	}
	for i, m := range b.measures {
		if _, dup := derived[m.m.Name]; dup {
			return fmt.Errorf("%s is both a dimension and a measure", m.m.Name)
		}
		derived[m.m.Name] = -1 - i
	}
	typeOf := func(src int) plan.Type {
		if src >= 0 {
			return b.dims[src].typ
		}
		return b.measures[-1-src].typ
	}
	if len(t.Columns) == 0 {
		for _, d := range b.dims {
			b.outCols, b.outTypes, b.outSrc = append(b.outCols, d.d.Name), append(b.outTypes, d.typ), append(b.outSrc, derived[d.d.Name])
		}
		for _, m := range b.measures {
			b.outCols, b.outTypes, b.outSrc = append(b.outCols, m.m.Name), append(b.outTypes, m.typ), append(b.outSrc, derived[m.m.Name])
		}
		return nil
	}
	seen := map[string]bool{}
	for _, c := range t.Columns {
		src, ok := derived[c.Name]
		if !ok {
			return fmt.Errorf("column %s is neither a dimension nor a measure", c.Name)
		}
		seen[c.Name] = true
		typ := typeOf(src)
		if c.Type != "" {
			declared, err := plan.ParseType(c.Type)
			if err != nil {
				return fmt.Errorf("column %s: %w", c.Name, err)
			}
			if declared != typ {
				return fmt.Errorf("column %s is declared %s but the mart computes %s; declare type %s", c.Name, declared, typ, typ)
			}
		}
		b.outCols, b.outTypes, b.outSrc = append(b.outCols, c.Name), append(b.outTypes, typ), append(b.outSrc, src)
	}
	for n := range derived {
		if !seen[n] {
			return fmt.Errorf("%s is not among the mart's columns; declare it", n)
		}
	}
	return nil
}

// val is one typed value.
type val struct {
	null bool
	i    int64 // int, long, date (days), timestamp (µs), boolean (0/1)
	f    float64
	d    decimal128.Num // unscaled at the column's scale
	s    string         // string, binary
}

// owned copies values so that their text does not share the memory of a
// batch that is released.
func owned(vs []val) []val {
	out := make([]val, len(vs))
	for i, v := range vs {
		v.s = strings.Clone(v.s)
		out[i] = v
	}
	return out
}

// key is the text that identifies a value in a group key or a lookup.
func (v val) key(t plan.Type) string {
	if v.null {
		return "\x00"
	}
	switch t.Kind {
	case plan.Double:
		return fmt.Sprintf("f%v", v.f)
	case plan.Decimal:
		return "d" + v.d.BigInt().String()
	case plan.String, plan.Binary:
		return "s" + v.s
	}
	return fmt.Sprintf("i%d", v.i)
}

func compareVal(t plan.Type, a, b val) int {
	switch {
	case a.null && b.null:
		return 0
	case a.null:
		return -1
	case b.null:
		return 1
	}
	switch t.Kind {
	case plan.Double:
		return cmp.Compare(a.f, b.f)
	case plan.Decimal:
		return a.d.Cmp(b.d)
	case plan.String, plan.Binary:
		return strings.Compare(a.s, b.s)
	}
	return cmp.Compare(a.i, b.i)
}

// reader returns a function reading row r of a column.
func reader(a arrow.Array) (func(r int) val, error) {
	null := func(r int) bool { return a.IsNull(r) }
	switch c := a.(type) {
	case *array.Int32:
		return func(r int) val { return val{null: null(r), i: int64(c.Value(r))} }, nil
	case *array.Int64:
		return func(r int) val { return val{null: null(r), i: c.Value(r)} }, nil
	case *array.Float64:
		return func(r int) val { return val{null: null(r), f: c.Value(r)} }, nil
	case *array.Decimal128:
		return func(r int) val { return val{null: null(r), d: c.Value(r)} }, nil
	case *array.Date32:
		return func(r int) val { return val{null: null(r), i: int64(c.Value(r))} }, nil
	case *array.Timestamp:
		unit := c.DataType().(*arrow.TimestampType).Unit
		return func(r int) val {
			v := int64(c.Value(r))
			switch unit {
			case arrow.Second:
				v *= 1_000_000
			case arrow.Millisecond:
				v *= 1000
			case arrow.Nanosecond:
				v /= 1000
			}
			return val{null: null(r), i: v}
		}, nil
	case *array.Boolean:
		return func(r int) val {
			v := val{null: null(r)}
			if !v.null && c.Value(r) {
				v.i = 1
			}
			return v
		}, nil
	case *array.String:
		return func(r int) val { return val{null: null(r), s: c.Value(r)} }, nil
	case *array.LargeString:
		return func(r int) val { return val{null: null(r), s: c.Value(r)} }, nil
	case *array.Binary:
		return func(r int) val { return val{null: null(r), s: string(c.Value(r))} }, nil
	case *array.LargeBinary:
		return func(r int) val { return val{null: null(r), s: string(c.Value(r))} }, nil
	}
	return nil, fmt.Errorf("cannot read Arrow type %s", a.DataType())
}

// scan reads the given table's columns row by row.
func (b *builder) scan(ctx context.Context, in *input, each func(row []val) error) error {
	it, err := in.scan.Scan(ctx, in.snapshot, in.cols)
	if err != nil {
		return fmt.Errorf("read %s: %w", in.name, err)
	}
	row := make([]val, len(in.cols))
	for rec, err := range it {
		if err != nil {
			return fmt.Errorf("read %s: %w", in.name, err)
		}
		readers := make([]func(int) val, len(in.cols))
		for i, c := range in.cols {
			idx := rec.Schema().FieldIndices(c)
			if len(idx) == 0 {
				rec.Release()
				return fmt.Errorf("read %s: column %s is missing", in.name, c)
			}
			if readers[i], err = reader(rec.Column(idx[0])); err != nil {
				rec.Release()
				return fmt.Errorf("read %s.%s: %w", in.name, c, err)
			}
		}
		n := int(rec.NumRows())
		for r := 0; r < n; r++ {
			if r&1023 == 0 && ctx.Err() != nil {
				rec.Release()
				return ctx.Err()
			}
			for i, rd := range readers {
				row[i] = rd(r)
			}
			if err := each(row); err != nil {
				rec.Release()
				return err
			}
		}
		rec.Release()
	}
	return nil
}

// lookups reads the joined tables into maps by their join key.
func (b *builder) lookups(ctx context.Context) error {
	for _, in := range b.order {
		in.rows = map[string][]val{}
		kt := in.types[in.via.keyCol]
		err := b.scan(ctx, in, func(row []val) error {
			k := row[in.via.keyCol]
			if k.null {
				return nil
			}
			ks := k.key(kt)
			if _, dup := in.rows[ks]; dup {
				return fmt.Errorf("%s.%s is not unique in %s (a value appears twice): the join would multiply the rows of %s; join on the key of %s",
					in.name, in.cols[in.via.keyCol], in.name, b.fact.name, in.name)
			}
			in.rows[ks] = owned(row)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// group state of one mart row.
type group struct {
	dims []val
	aggs []agg
}

type agg struct {
	n    int64   // rows counted (count, avg)
	sum  big.Int // exact sum, unscaled
	f    float64 // float sum
	set  bool    // a value was seen (sum, min, max, avg)
	ext  val     // min or max
	seen map[string]struct{}
}

// group streams the fact table and aggregates.
func (b *builder) group(ctx context.Context) error {
	b.groups = map[string]*group{}
	var kb strings.Builder
	rows := map[*input][]val{}
	nulls := map[*input][]val{}
	for _, in := range b.order {
		nulls[in] = make([]val, len(in.cols))
		for i := range nulls[in] {
			nulls[in][i].null = true
		}
	}
	var tmp big.Int
	return b.scan(ctx, b.fact, func(row []val) error {
		b.factRows++
		rows[b.fact] = row
		for _, in := range b.order {
			lv := rows[in.via.left][in.via.leftCol]
			r, ok := in.rows[lv.key(in.via.left.types[in.via.leftCol])]
			if lv.null || !ok {
				r = nulls[in]
			}
			rows[in] = r
		}
		kb.Reset()
		dims := make([]val, len(b.dims))
		for i, d := range b.dims {
			v := rows[d.src.in][d.src.col]
			if d.d.Transform != "" && !v.null {
				v = val{i: truncate(d.d.Transform, d.src.in.types[d.src.col], v.i)}
			}
			dims[i] = v
			kb.WriteString(v.key(d.typ))
			kb.WriteByte(0)
		}
		g := b.groups[kb.String()]
		if g == nil {
			g = &group{dims: owned(dims), aggs: make([]agg, len(b.measures))}
			b.groups[kb.String()] = g
		}
		for i, m := range b.measures {
			a := &g.aggs[i]
			if m.src == nil {
				a.n++
				continue
			}
			v := rows[m.src.in][m.src.col]
			if v.null {
				continue
			}
			if m.pre {
				kv := rows[m.src.in][m.src.in.via.keyCol]
				if a.seen == nil {
					a.seen = map[string]struct{}{}
				}
				k := kv.key(m.src.in.types[m.src.in.via.keyCol])
				if _, dup := a.seen[k]; dup {
					continue
				}
				a.seen[k] = struct{}{}
			}
			switch m.m.Agg {
			case plan.AggCount:
				a.n++
			case plan.AggSum, plan.AggAvg:
				a.n++
				a.set = true
				switch m.in.Kind {
				case plan.Double:
					a.f += v.f
				case plan.Decimal:
					a.sum.Add(&a.sum, v.d.BigInt())
				default:
					tmp.SetInt64(v.i)
					a.sum.Add(&a.sum, &tmp)
				}
			case plan.AggMin, plan.AggMax:
				c := compareVal(m.in, v, a.ext)
				if !a.set || (m.m.Agg == plan.AggMin && c < 0) || (m.m.Agg == plan.AggMax && c > 0) {
					a.ext, a.set = v, true
					a.ext.s = strings.Clone(v.s)
				}
			}
		}
		return nil
	})
}

// truncate applies year, month or day to a date (days) or timestamp (µs,
// UTC) and returns the first day of the period in days since the epoch.
func truncate(tr string, t plan.Type, v int64) int64 {
	var tm time.Time
	if t.Kind == plan.Date {
		tm = time.Unix(v*86400, 0).UTC()
	} else {
		tm = time.UnixMicro(v).UTC()
	}
	switch tr {
	case plan.TransformYear:
		tm = time.Date(tm.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case plan.TransformMonth:
		tm = time.Date(tm.Year(), tm.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		tm = time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC)
	}
	return tm.Unix() / 86400
}

var maxDecimal = new(big.Int).Exp(big.NewInt(10), big.NewInt(plan.MaxDecimalPrecision), nil)

// result is the value of an aggregate.
func (b *builder) result(m measure, a *agg) (val, error) {
	switch m.m.Agg {
	case plan.AggCount:
		return val{i: a.n}, nil
	case plan.AggMin, plan.AggMax:
		if !a.set {
			return val{null: true}, nil
		}
		return a.ext, nil
	}
	if !a.set {
		return val{null: true}, nil
	}
	if m.in.Kind == plan.Double {
		if m.m.Agg == plan.AggAvg {
			return val{f: a.f / float64(a.n)}, nil
		}
		return val{f: a.f}, nil
	}
	v := new(big.Int).Set(&a.sum)
	if m.m.Agg == plan.AggAvg {
		// Scale the sum to the result's scale, then divide, rounding half
		// away from zero.
		if up := m.typ.Scale - scaleOf(m.in); up > 0 {
			v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(up)), nil))
		}
		v = divRound(v, big.NewInt(a.n))
	}
	if m.typ.Kind == plan.Long {
		if !v.IsInt64() {
			return val{}, fmt.Errorf("measure %s: %s does not fit a long", m.m.Name, v)
		}
		return val{i: v.Int64()}, nil
	}
	if new(big.Int).Abs(v).Cmp(maxDecimal) >= 0 {
		return val{}, fmt.Errorf("measure %s: %s does not fit %s", m.m.Name, v, m.typ)
	}
	return val{d: decimal128.FromBigInt(v)}, nil
}

func scaleOf(t plan.Type) int {
	if t.Kind == plan.Decimal {
		return t.Scale
	}
	return 0
}

// divRound divides, rounding half away from zero (den > 0).
func divRound(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// batches writes the groups in the order of their dimensions.
func (b *builder) batches(schema *arrow.Schema) iter.Seq2[arrow.RecordBatch, error] {
	gs := make([]*group, 0, len(b.groups))
	for _, g := range b.groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool {
		for k, d := range b.dims {
			if c := compareVal(d.typ, gs[i].dims[k], gs[j].dims[k]); c != 0 {
				return c < 0
			}
		}
		return false
	})
	return func(yield func(arrow.RecordBatch, error) bool) {
		rb := array.NewRecordBuilder(b.o.Alloc, schema)
		defer rb.Release()
		for start := 0; start < len(gs); start += b.o.BatchRows {
			for _, g := range gs[start:min(start+b.o.BatchRows, len(gs))] {
				for ci, src := range b.outSrc {
					var v val
					if src >= 0 {
						v = g.dims[src]
					} else {
						var err error
						if v, err = b.result(b.measures[-1-src], &g.aggs[-1-src]); err != nil {
							b.err = err
							return
						}
					}
					appendVal(rb.Field(ci), b.outTypes[ci], v)
				}
			}
			if !yield(rb.NewRecordBatch(), nil) {
				return
			}
		}
	}
}

func appendVal(fb array.Builder, t plan.Type, v val) {
	if v.null {
		fb.AppendNull()
		return
	}
	switch bld := fb.(type) {
	case *array.Int32Builder:
		bld.Append(int32(v.i))
	case *array.Int64Builder:
		bld.Append(v.i)
	case *array.Float64Builder:
		bld.Append(v.f)
	case *array.Decimal128Builder:
		bld.Append(v.d)
	case *array.Date32Builder:
		bld.Append(arrow.Date32(v.i))
	case *array.TimestampBuilder:
		bld.Append(arrow.Timestamp(v.i))
	case *array.BooleanBuilder:
		bld.Append(v.i == 1)
	case *array.StringBuilder:
		bld.Append(v.s)
	case *array.BinaryBuilder:
		bld.Append([]byte(v.s))
	default:
		fb.AppendNull()
	}
}
