package migrate

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
)

// Check is one comparison of a partition.
type Check struct {
	Name    string `json:"name"`
	Hive    string `json:"hive"`
	Iceberg string `json:"iceberg"`
	OK      bool   `json:"ok"`
}

// PartResult is one partition's comparison.
type PartResult struct {
	Partition   string  `json:"partition"`
	HiveRows    int64   `json:"hive_rows"`
	IcebergRows int64   `json:"iceberg_rows"`
	Checks      []Check `json:"checks"`
	OK          bool    `json:"ok"`
}

// Validation compares the Hive table (its files read with the partition
// values of their folders, as Hive readers do) with the Iceberg table
// (read back through iceberg-go's scan of the committed snapshot).
type Validation struct {
	Source      string       `json:"source"`
	Method      string       `json:"method"`
	Iceberg     string       `json:"iceberg_table"`
	Metadata    string       `json:"metadata_location"`
	SnapshotID  int64        `json:"snapshot_id"`
	Files       int          `json:"hive_files"`
	Fingerprint string       `json:"hive_listing_fingerprint"`
	HiveRows    int64        `json:"hive_rows"`
	IcebergRows int64        `json:"iceberg_rows"`
	Partitions  []PartResult `json:"partitions"`
	// Missing: partitions with Hive rows the Iceberg table lacks; Extra:
	// partitions only the Iceberg table has.
	Missing    []string `json:"missing_partitions"`
	Extra      []string `json:"extra_partitions"`
	Checked    []string `json:"checked"`
	NotChecked []string `json:"not_checked"`
	OK         bool     `json:"ok"`
	// GlueVersion is the Glue entry's version read at validation.
	GlueVersion string `json:"glue_version_id,omitempty"`
}

// stats are one partition's measures on one path.
type stats struct {
	rows  int64
	sums  map[string]*big.Int
	nulls map[string]int64
	hash  rowHasher
}

type column struct {
	name  string
	sum   bool
	scale int32
}

type accumulator struct {
	cols  []column // in name order
	parts map[string]*stats
}

func newAccumulator(l *Layout) *accumulator {
	a := &accumulator{parts: map[string]*stats{}}
	for _, d := range l.Data {
		sc, ok := summable(d.Arrow)
		a.cols = append(a.cols, column{name: strings.ToLower(d.Name), sum: ok, scale: sc})
	}
	for i, k := range l.Keys {
		if l.KeyInFiles[i] {
			continue
		}
		sc, ok := summableType(k.Type)
		a.cols = append(a.cols, column{name: strings.ToLower(k.Name), sum: ok, scale: sc})
	}
	sort.Slice(a.cols, func(i, j int) bool { return a.cols[i].name < a.cols[j].name })
	return a
}

func (a *accumulator) part(key string) *stats {
	st := a.parts[key]
	if st == nil {
		st = &stats{sums: map[string]*big.Int{}, nulls: map[string]int64{}}
		for _, c := range a.cols {
			if c.sum {
				st.sums[c.name] = new(big.Int)
			}
		}
		a.parts[key] = st
	}
	return st
}

// cellSource gives a row's cell of a column: from an array, or a constant
// (the partition value of the file's folder).
type cellSource struct {
	arr     arrow.Array
	konst   string
	present bool
	kbig    *big.Int // the constant, unscaled, for sums
}

func (a *accumulator) addRows(key string, n int, cells []cellSource) {
	st := a.part(key)
	text := make([]string, len(cells))
	present := make([]bool, len(cells))
	for r := 0; r < n; r++ {
		for i, c := range cells {
			if c.arr != nil {
				text[i], present[i] = cellText(c.arr, r)
				if present[i] && a.cols[i].sum {
					addCell(st.sums[a.cols[i].name], c.arr, r)
				}
			} else {
				text[i], present[i] = c.konst, c.present
				if present[i] && a.cols[i].sum && c.kbig != nil {
					st.sums[a.cols[i].name].Add(st.sums[a.cols[i].name], c.kbig)
				}
			}
			if !present[i] {
				st.nulls[a.cols[i].name]++
			}
		}
		st.hash.add(text, present)
		st.rows++
	}
}

func unscaledOf(text string, scale int32) *big.Int {
	neg := strings.HasPrefix(text, "-")
	t := strings.TrimPrefix(text, "-")
	ip, fp, _ := strings.Cut(t, ".")
	for int32(len(fp)) < scale {
		fp += "0"
	}
	n, ok := new(big.Int).SetString(ip+fp[:scale], 10)
	if !ok {
		return nil
	}
	if neg {
		n.Neg(n)
	}
	return n
}

// readHive measures the Hive path: every file read with its folder's
// partition values.
func readHive(ctx context.Context, src *Source, l *Layout, files []File, mem memory.Allocator) (*accumulator, error) {
	a := newAccumulator(l)
	pos := map[string]int{}
	for i, c := range a.cols {
		pos[c.name] = i
	}
	for _, f := range files {
		p := src.Partitions[f.Part]
		key := partKey(src.PartitionKeys, p)
		consts := map[string]cellSource{}
		for i, k := range l.Keys {
			v, err := canonPartValue(k.Type, p.Values[i], p.Null[i])
			if err != nil {
				return nil, fmt.Errorf("partition %s: key %s: %w", key, k.Name, err)
			}
			cs := cellSource{konst: v, present: !p.Null[i]}
			if sc, ok := summableType(k.Type); ok && cs.present {
				cs.kbig = unscaledOf(v, sc)
			}
			consts[strings.ToLower(k.Name)] = cs
		}
		a.part(key)
		for rec, err := range readFile(ctx, src, l, f, mem) {
			if err != nil {
				return nil, err
			}
			cells := make([]cellSource, len(a.cols))
			for i, d := range l.Data {
				name := strings.ToLower(d.Name)
				if cs, isKey := consts[name]; isKey {
					cells[pos[name]] = cs // Hive readers take the folder's value
				} else {
					cells[pos[name]] = cellSource{arr: rec.Column(i)}
				}
			}
			for name, cs := range consts {
				cells[pos[name]] = cs
			}
			a.addRows(key, int(rec.NumRows()), cells)
			rec.Release()
		}
	}
	return a, nil
}

// readIceberg measures the Iceberg path: the table's current snapshot
// read through iceberg-go's scan, rows grouped by their partition key
// columns' values.
func readIceberg(ctx context.Context, tbl *table.Table, l *Layout) (*accumulator, error) {
	a := newAccumulator(l)
	sc, recs, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	colIdx := make([]int, len(a.cols))
	for i, c := range a.cols {
		colIdx[i] = -1
		for j, f := range sc.Fields() {
			if strings.EqualFold(f.Name, c.name) {
				colIdx[i] = j
			}
		}
		if colIdx[i] < 0 {
			return nil, fmt.Errorf("the Iceberg table %s has no column %s", strings.Join(tbl.Identifier(), "."), c.name)
		}
	}
	keyIdx := make([]int, len(l.Keys))
	for i, k := range l.Keys {
		for j, c := range a.cols {
			if c.name == strings.ToLower(k.Name) {
				keyIdx[i] = j
			}
		}
	}
	for rec, err := range recs {
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", strings.Join(tbl.Identifier(), "."), err)
		}
		cells := make([]cellSource, len(a.cols))
		for i := range a.cols {
			cells[i] = cellSource{arr: rec.Column(colIdx[i])}
		}
		// Group the rows by partition: runs of equal keys at a time.
		n := int(rec.NumRows())
		for r := 0; r < n; {
			key := icebergKey(l, cells, keyIdx, r)
			end := r + 1
			for end < n && icebergKey(l, cells, keyIdx, end) == key {
				end++
			}
			sl := make([]cellSource, len(cells))
			for i, c := range cells {
				sl[i] = cellSource{arr: sliceOf(c.arr, r, end)}
			}
			a.addRows(key, end-r, sl)
			for _, c := range sl {
				c.arr.Release()
			}
			r = end
		}
		rec.Release()
	}
	return a, nil
}

func icebergKey(l *Layout, cells []cellSource, keyIdx []int, r int) string {
	if len(l.Keys) == 0 {
		return "(table)"
	}
	var parts []string
	for i, k := range l.Keys {
		v, ok := cellText(cells[keyIdx[i]].arr, r)
		if !ok {
			v = "__HIVE_DEFAULT_PARTITION__"
		}
		parts = append(parts, k.Name+"="+v)
	}
	return strings.Join(parts, "/")
}

// Compare builds the per-partition comparison of the two paths.
func compare(l *Layout, hive, ice *accumulator) ([]PartResult, []string, []string) {
	keys := map[string]bool{}
	for k := range hive.parts {
		keys[k] = true
	}
	for k := range ice.parts {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []PartResult
	var missing, extra []string
	empty := &stats{sums: map[string]*big.Int{}, nulls: map[string]int64{}}
	for _, k := range sorted {
		h, hok := hive.parts[k]
		i, iok := ice.parts[k]
		if !hok {
			h = empty
			extra = append(extra, k)
		}
		if !iok {
			i = empty
			if h.rows > 0 {
				missing = append(missing, k)
			}
		}
		pr := PartResult{Partition: k, HiveRows: h.rows, IcebergRows: i.rows, OK: true}
		add := func(name, hv, iv string) {
			ok := hv == iv
			pr.Checks = append(pr.Checks, Check{Name: name, Hive: hv, Iceberg: iv, OK: ok})
			pr.OK = pr.OK && ok
		}
		add("rows", strconv.FormatInt(h.rows, 10), strconv.FormatInt(i.rows, 10))
		for _, c := range hive.cols {
			if c.sum {
				add("sum("+c.name+")", sumText(h, c), sumText(i, c))
			}
		}
		for _, c := range hive.cols {
			add("nulls("+c.name+")", strconv.FormatInt(h.nulls[c.name], 10), strconv.FormatInt(i.nulls[c.name], 10))
		}
		add("row content hash", strconv.FormatUint(h.hash.sum, 16), strconv.FormatUint(i.hash.sum, 16))
		if !hok || (!iok && h.rows > 0) {
			pr.OK = false
		}
		out = append(out, pr)
	}
	return out, missing, extra
}

func sumText(s *stats, c column) string {
	n := s.sums[c.name]
	if n == nil {
		n = new(big.Int)
	}
	return scaled(n, c.scale)
}

// Validate reads both paths and compares them partition by partition.
// files and fingerprint are the listing the Iceberg table was built from.
func Validate(ctx context.Context, src *Source, l *Layout, files []File, fingerprint string, tbl *table.Table, mem memory.Allocator) (*Validation, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	v := &Validation{Source: src.Name(), Iceberg: strings.Join(tbl.Identifier(), "."), Metadata: tbl.MetadataLocation(), Files: len(files), Fingerprint: fingerprint}
	if s := tbl.CurrentSnapshot(); s != nil {
		v.SnapshotID = s.SnapshotID
	}
	if src.Glue != nil {
		v.GlueVersion = deref(src.Glue.VersionId)
	}
	hive, err := readHive(ctx, src, l, files, mem)
	if err != nil {
		return nil, fmt.Errorf("read the Hive path: %w", err)
	}
	ice, err := readIceberg(ctx, tbl, l)
	if err != nil {
		return nil, fmt.Errorf("read the Iceberg path: %w", err)
	}
	// Every partition the catalog lists is accounted for, even an empty
	// one (no files): it must not hold Iceberg rows either.
	for _, p := range src.Partitions {
		hive.part(partKey(src.PartitionKeys, p))
	}
	v.Partitions, v.Missing, v.Extra = compare(l, hive, ice)
	v.OK = len(v.Missing) == 0 && len(v.Extra) == 0
	for _, p := range v.Partitions {
		v.HiveRows += p.HiveRows
		v.IcebergRows += p.IcebergRows
		v.OK = v.OK && p.OK
	}
	var sums, floats []string
	for _, c := range hive.cols {
		if c.sum {
			sums = append(sums, c.name)
		}
	}
	for _, d := range l.Data {
		if _, ok := summable(d.Arrow); !ok && d.Type.Kind == plan.Double {
			floats = append(floats, strings.ToLower(d.Name))
		}
	}
	v.Checked = []string{
		fmt.Sprintf("every partition of both paths accounted for (%d partitions; none missing, none extra)", len(v.Partitions)),
		"row count per partition",
		"exact sums per partition of the integer and decimal columns: " + listOr(sums),
		"null count per partition of every column",
		"every row's values per partition (an order-free hash of each row's canonical text; it stands for sample rows — all rows are compared, not 3–5)",
		"Hive path: each file of the listing read with its folder's partition values; Iceberg path: iceberg-go's scan of snapshot " + strconv.FormatInt(v.SnapshotID, 10),
	}
	v.NotChecked = []string{"files added to the Hive folders after the listing (the switch re-lists and refuses if the listing changed)"}
	if len(floats) > 0 {
		v.NotChecked = append(v.NotChecked, "sums of the floating-point columns ("+strings.Join(floats, ", ")+"): their values are compared in the row hash, not summed")
	}
	return v, nil
}

func listOr(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sliceOf(a arrow.Array, from, to int) arrow.Array {
	return array.NewSlice(a, int64(from), int64(to))
}
