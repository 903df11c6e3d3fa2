package gates

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/internal/s3x"
)

// ProposeOptions configure gate 3's proposal.
type ProposeOptions struct {
	// Workspace is the folder holding platform.yaml; relative source paths
	// resolve against it.
	Workspace string
	// MaxRows is how many data rows of each table are read (default
	// 100,000), spread over its files: the first, last and random rows of
	// each, at least three per file however many files there are (see
	// sample.go). Uniqueness, spans and profiles cover these rows; when a
	// table has more, the findings say so.
	MaxRows int64
	// Questions are the business questions recorded in gate 1; marts are
	// proposed to answer them. Without questions, one mart per fact table.
	Questions []string
	// Partitioning is gate 1's preference: auto (default: per table, from
	// the data), date (a date column of every table that has one) or none.
	// ProposeDataModel takes it from the plan's scope when empty.
	Partitioning string
	// Sensitive lists column names or globs (*_email) to mark sensitive;
	// ProposeDataModel takes them from the plan's scope when empty.
	Sensitive []string
	// partMinRows and partMinBytes replace partitionMinRows and
	// partitionMinBytes when set (tests, with inputs of a few MiB).
	partMinRows, partMinBytes int64
}

// DefaultProposeRows is ProposeOptions.MaxRows when it is 0.
const DefaultProposeRows = 100_000

// SampleValues is how many non-null values per column gate 3 keeps from
// the first rows it reads, to refine types and measure join overlap.
const SampleValues = 10_000

// ProposeDataModel is gate 3's proposal for a plan: it discovers the files
// of every files source, groups them into tables, profiles each table and
// proposes columns, types, keys, partitions, join keys and marts. Nothing
// is written. The proposal's plan is a fragment: its Tables only.
func ProposeDataModel(ctx context.Context, p *plan.Plan, o ProposeOptions) (*Proposal, error) {
	ev, found, err := Gather(ctx, p, o)
	if err != nil {
		return nil, err
	}
	if p.Scope != nil {
		if o.Partitioning == "" {
			o.Partitioning = p.Scope.Partitioning
		}
		if o.Sensitive == nil {
			o.Sensitive = p.Scope.SensitiveColumns
		}
	}
	prop := Propose(ev, o)
	prop.Findings = append(append([]Finding{}, found...), prop.Findings...) // never nil: findings are always printed
	// Database sources: one table per base table (discover_db.go).
	taken := map[string]bool{}
	for n := range prop.Plan.Tables {
		taken[n] = true
	}
	n := len(prop.Findings)
	proposeDatabases(ctx, p, o, taken, prop)
	proposeDynamoDB(ctx, p, o, taken, prop) // discover_dynamodb.go
	for _, f := range prop.Findings[n:] {
		if q, ok := issueOf(prop.Plan, f); ok {
			prop.Issues = append(prop.Issues, q)
		}
	}
	return prop, nil
}

// Gather discovers and reads the candidate tables of every files source of
// the plan: the evidence Propose works from. Findings report files that
// were left out and why.
func Gather(ctx context.Context, p *plan.Plan, o ProposeOptions) ([]*TableEvidence, []Finding, error) {
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultProposeRows
	}
	var out []*TableEvidence
	var findings []Finding
	for _, sname := range p.SourceNames() {
		s := p.Sources[sname]
		if s == nil {
			continue
		}
		if s.IsDatabase() || s.IsDynamoDB() {
			continue // proposed from its catalog (or DescribeTable) by ProposeDataModel
		}
		if s.Kind != plan.SourceFiles {
			findings = append(findings, Finding{Name: "source " + sname, Status: Skip,
				Detail: fmt.Sprintf("kind %s cannot be discovered yet; declare its tables by hand", s.Kind)})
			continue
		}
		root := s.Path
		if !filepath.IsAbs(root) {
			root = filepath.Join(o.Workspace, root)
		}
		var src source.Source = files.New(root)
		if s3x.IsURI(s.Path) { // objects below an S3 prefix
			s3s, err := s3src.Open(ctx, s.Path)
			if err != nil {
				return nil, nil, fmt.Errorf("gate 3: source %s: %w", sname, err)
			}
			src = s3s
		}
		cands, fs, err := discover(ctx, src, sname)
		if err != nil {
			return nil, nil, fmt.Errorf("gate 3: source %s: %w", sname, err)
		}
		findings = append(findings, fs...)
		for _, c := range cands {
			units, err := src.List(ctx, c.Files)
			if err != nil {
				return nil, nil, fmt.Errorf("gate 3: source %s: list %s: %w", sname, strings.Join(c.Files, ", "), err)
			}
			so := source.Options{Encoding: s.Encoding}
			ev, err := ReadEvidence(ctx, src, units, so, o.MaxRows)
			if err != nil {
				return nil, nil, err
			}
			ev.Name, ev.Source, ev.Globs, ev.Sheet, ev.Base = c.Name, sname, c.Files, c.Sheet, c.Base
			out = append(out, ev)
		}
	}
	return out, findings, nil
}

// candidate is a table found by discovery, before it is read.
type candidate struct {
	Name  string
	Base  string // the name before a sheet suffix
	Sheet string
	Files []string
}

// dataExts are the file extensions discovery proposes tables for.
var dataExts = map[string]bool{".csv": true, ".tsv": true, ".ndjson": true, ".jsonl": true, ".json": true, ".parquet": true, ".avro": true, ".xlsx": true, ".xlsm": true}

// suffixRE splits a file stem into a base and a period or sequence suffix:
// inspections_2026-01, shipments_2026Q1, sales-20260105, part_3.
var suffixRE = regexp.MustCompile(`^(.*?[^_\-. ])([_\-. ]+)((?:19|20)\d{2}(?:[-_.]?\d{2}){0,2}(?:[-_.]?[Qq][1-4])?|[Qq][1-4][-_.]?(?:19|20)\d{2}|\d+)$`)

var yearRE = regexp.MustCompile(`^(?:(?:19|20)\d{2}|[Qq][1-4])`)

// discover lists the files of a source and groups them into tables.
func discover(ctx context.Context, src source.Source, sname string) ([]candidate, []Finding, error) {
	units, err := src.List(ctx, []string{"**"})
	if err != nil {
		return nil, nil, err
	}
	var linkFindings []Finding
	if fsrc, ok := src.(*files.Source); ok {
		if out := fsrc.LinksOutside(); len(out) > 0 {
			linkFindings = append(linkFindings, Finding{Name: "source " + sname + ": links left out", Status: Warn,
				Detail: fmt.Sprintf("%d symbolic link(s) lead outside the source folder or to nothing, and are not read: %s", len(out), listFirst(out, 5)),
				Fix:    "copy or move the files they point to into the source folder (links inside it are followed), or point the source at a folder that holds them"})
		}
		if irr := fsrc.NotRegular(); len(irr) > 0 {
			linkFindings = append(linkFindings, Finding{Name: "source " + sname + ": not regular files", Status: Warn,
				Detail: fmt.Sprintf("%d file(s) are not regular (named pipes, devices, sockets) and are not read: %s", len(irr), listFirst(irr, 5)),
				Fix:    "write the data to a regular file in the source folder; a pipe or a device is never read, since reading it could wait forever"})
		}
	}
	type member struct {
		u           source.Unit
		dir, ext    string
		base, sep   string
		stem        string
		dated, numb bool
		seq         bool // numb, zero-padded
	}
	type group struct {
		key     string
		members []member
	}
	var findings []Finding
	groups := map[string]*group{}
	var order []string
	var skipped, hidden []string
	for _, u := range units {
		dir, file := path.Split(u.Name)
		if strings.HasPrefix(file, "~$") {
			continue // Excel lock files
		}
		if strings.HasPrefix(file, ".") {
			if dataExts[strings.ToLower(path.Ext(file))] {
				hidden = append(hidden, u.Name) // "..csv", ".orders.csv": named below
			}
			continue // hidden files
		}
		ext := strings.ToLower(path.Ext(file))
		if !dataExts[ext] {
			skipped = append(skipped, u.Name)
			continue
		}
		m := member{u: u, dir: dir, ext: ext, stem: file[:len(file)-len(ext)]}
		m.base = m.stem
		if sm := suffixRE.FindStringSubmatch(m.stem); sm != nil {
			m.base, m.sep = sm[1], sm[2]
			if yearRE.MatchString(sm[3]) {
				m.dated = true
			} else {
				m.numb = true
				// A zero-padded number is a sequence (sales_001: the next
				// drop is sales_002); a bare one is part of the name (part_1).
				m.seq = len(sm[3]) >= 2 && sm[3][0] == '0'
			}
		}
		key := strings.Join([]string{dir, m.base, m.sep, ext}, "\x00")
		if m.sep == "" {
			key = strings.Join([]string{dir, m.stem, "", ext, u.Name}, "\x00")
		}
		g := groups[key]
		if g == nil {
			g = &group{key: key}
			groups[key] = g
			order = append(order, key)
		}
		g.members = append(g.members, m)
	}
	findings = append(findings, linkFindings...)
	if len(hidden) > 0 {
		findings = append(findings, Finding{Name: "source " + sname + ": hidden files left out", Status: Warn,
			Detail: fmt.Sprintf("%d hidden file(s) (a name starting with a dot) of a data format are not proposed: %s", len(hidden), listFirst(hidden, 5)),
			Fix:    "rename them without the leading dot if they hold data, or add a table whose files glob names them"})
	}
	if len(skipped) > 0 {
		findings = append(findings, Finding{Name: "source " + sname + ": files left out", Status: Warn,
			Detail: fmt.Sprintf("%d file(s) of no data format Lima reads (csv, tsv, ndjson, json, parquet, avro, xlsx): %s", len(skipped), listFirst(skipped, 5)),
			Fix:    "if one of them holds data, add a table for it by hand with source.format set"})
	}
	all := make([]string, 0, len(units))
	for _, u := range units {
		all = append(all, u.Name)
	}
	if len(order) == 0 {
		findings = append(findings, Finding{Name: "source " + sname + ": no data files", Status: Warn,
			Detail: fmt.Sprintf("%s listed, none of a data format Lima reads (csv, tsv, ndjson, json, parquet, avro, xlsx)", countNoun(len(units), "file", "files")),
			Fix:    "check the source path, or add tables by hand"})
	}
	var out []candidate
	for _, key := range order {
		g := groups[key]
		ms := g.members
		// One file named with a date or a zero-padded sequence is the first
		// of a series: its table reads base_*.ext, so the next drop
		// (sales_002.csv, orders_2024-02.csv) is picked up by the next run.
		grouped := ms[0].sep != "" && (len(ms) > 1 || ms[0].dated || ms[0].seq)
		var globs []string
		name := ms[0].stem
		if grouped {
			name = ms[0].base
			want := make([]string, len(ms))
			for i, m := range ms {
				want[i] = m.u.Name
			}
			glob := ms[0].dir + globEscape(ms[0].base) + ms[0].sep + "*" + ms[0].ext
			if slices.Equal(matching(glob, all), want) {
				globs = []string{glob}
			}
		}
		if globs == nil {
			for _, m := range ms {
				g := m.dir + globEscape(m.stem) + m.ext
				if got := matching(g, all); len(got) != 1 || got[0] != m.u.Name {
					findings = append(findings, Finding{Name: "file " + m.u.Name, Status: Warn,
						Detail: "its name cannot be written as a glob that matches only it (it holds *, ? or [ ); it is proposed with a glob that matches more files",
						Fix:    "rename the file, or check the table's files before approving"})
				}
				globs = append(globs, g)
			}
		}
		if ms[0].ext != ".xlsx" && ms[0].ext != ".xlsm" {
			out = append(out, candidate{Name: name, Base: name, Files: globs})
			continue
		}
		// A workbook gives one table per visible sheet; grouped workbooks
		// give one table per sheet name.
		var sheets []string
		for _, m := range ms {
			var ss []string
			var err error
			if sl, ok := src.(sheetLister); ok { // an S3 object: spooled to read its sheets
				ss, err = sl.Sheets(ctx, m.u)
			} else {
				ss, err = files.Sheets(m.u.Path)
			}
			if err != nil {
				findings = append(findings, Finding{Name: "file " + m.u.Name, Status: Warn, Detail: fmt.Sprintf("not proposed: %v", err),
					Fix: "save it again as .xlsx (without a password), or leave it out"})
				continue
			}
			for _, s := range ss {
				if !slices.Contains(sheets, s) {
					sheets = append(sheets, s)
				}
			}
		}
		for _, s := range sheets {
			var sg []string
			for _, g := range globs {
				sg = append(sg, g+"#"+s)
			}
			out = append(out, candidate{Name: name, Base: name, Sheet: s, Files: sg})
		}
	}
	return out, findings, nil
}

// sheetLister is a source that lists a workbook unit's sheets itself
// (s3src: the object is not a local file).
type sheetLister interface {
	Sheets(ctx context.Context, u source.Unit) ([]string, error)
}

// matching lists the names a glob matches, as the files source matches
// (segment by segment, in NFC).
func matching(glob string, names []string) []string {
	pat := strings.Split(norm.NFC.String(glob), "/")
	var out []string
	for _, n := range names {
		segs := strings.Split(n, "/")
		if len(segs) != len(pat) {
			continue
		}
		ok := true
		for i := range segs {
			if m, _ := path.Match(pat[i], segs[i]); !m {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, n)
		}
	}
	return out
}

// globEscape makes a file name usable in a plan glob: the plan allows no
// backslash escapes, so glob characters become '?' (which matches them).
func globEscape(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '*', '?', '[', ']', '\\':
			return '?'
		}
		return r
	}, s)
}

func listFirst(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// ReadEvidence reads about maxRows data rows of a table's units and
// collects what gate 3 decides from: each column's profile (clean's
// profiler), its first SampleValues non-null values, the exact set of its
// key forms while it can still be a key, and the span of its dates. The
// rows are spread over every unit: each reads an equal share of what is
// left of maxRows (at least sampleMinPerFile), and the units of a files or
// S3 source give their first, last and seeded-random rows (sample.go), so
// that twelve monthly files show twelve months and a file's later rows
// are seen too. A database table gives its first rows.
func ReadEvidence(ctx context.Context, src source.Source, units []source.Unit, so source.Options, maxRows int64) (*TableEvidence, error) {
	var cols []*collector
	var header []string
	var prof *clean.Profiler
	ev := &TableEvidence{}
	for _, u := range units {
		ev.Units = append(ev.Units, u.Name)
	}
	spread := spreadSource(src)
	var rows int64
	budget := int64(readThroughTableBytes)
	for i, u := range units {
		share := (maxRows - rows) / int64(len(units)-i)
		var unitCols []string
		var buf [][2][]string // this unit's rows: values, nulls ("1")
		if spread {
			share = max(share, sampleMinPerFile)
			us, err := sampleUnit(ctx, src, u, so, share, min(budget, readThroughFileBytes))
			if err != nil {
				return nil, err
			}
			budget -= us.read
			ev.Files = append(ev.Files, us.fr)
			how := us.how
			if us.fr.Status != "read" && len(us.rows) == 0 {
				how = SampledNone
			}
			ev.Sampling = append(ev.Sampling, how)
			ev.EstRows += us.est
			if us.fr.Status == "read" && us.how != SampledWhole {
				ev.Sampled = true // the file holds rows not read
			}
			if us.fr.Status != "read" && len(us.cols) == 0 {
				continue
			}
			unitCols, buf = us.cols, us.rows
		} else {
			if share <= 0 {
				ev.Sampled = true
				break
			}
			tp, err := run.ProfileUnits(ctx, src, []source.Unit{u}, so, nil, share, func(vals []string, declaredNull []bool, seen int64) {
				nv := make([]string, len(vals))
				nn := make([]string, len(vals))
				copy(nv, vals)
				for k, d := range declaredNull {
					if d {
						nn[k] = "1"
					}
				}
				buf = append(buf, [2][]string{nv, nn})
			})
			if err != nil {
				return nil, err
			}
			ev.Files = append(ev.Files, tp.Files...)
			if tp.Sampled {
				ev.Sampled = true
			}
			if len(tp.Columns) == 0 {
				continue // unreadable
			}
			for _, c := range tp.Columns {
				unitCols = append(unitCols, c.Name)
			}
		}
		if len(unitCols) == 0 {
			continue
		}
		if header == nil {
			header = unitCols
			prof = clean.NewProfiler(header, nil)
			for range header {
				cols = append(cols, newCollector())
			}
		}
		// This unit's columns by the first unit's header.
		idx := make([]int, len(header))
		for k, h := range header {
			idx[k] = slices.Index(unitCols, h)
		}
		vals := make([]string, len(header))
		nulls := make([]bool, len(header))
		for _, r := range buf {
			for k, j := range idx {
				vals[k], nulls[k] = "", true
				if j >= 0 && j < len(r[0]) {
					vals[k], nulls[k] = r[0][j], r[1][j] == "1"
				}
			}
			prof.Add(vals)
			ev.RowBytes += int64(len(vals))
			for _, v := range vals {
				ev.RowBytes += int64(len(v))
			}
			for k, c := range cols {
				c.add(vals[k], nulls[k] || isNullToken(vals[k]), rows)
			}
			rows++
		}
	}
	ev.Rows = rows
	if prof == nil {
		return ev, nil
	}
	for i, cp := range prof.Profile() {
		c := cols[i]
		ce := ColumnEvidence{Profile: cp, Values: c.values, Dups: c.dups, DupExample: c.dupEx, Empty: c.empty, Rows: c.rows}
		if c.tracking {
			ce.KeySet = c.keys
		}
		ce.TimeMin, ce.TimeMax = c.span(cp.DateOrder)
		ev.Columns = append(ev.Columns, ce)
	}
	return ev, nil
}

func isNullToken(v string) bool {
	if slices.Contains(clean.DefaultNullTokens, v) {
		return true
	}
	return strings.TrimSpace(v) == ""
}

// collector gathers one column's evidence beyond clean's profile.
type collector struct {
	values   []string
	rows     []string // the first SampleValues rows' values, "" for null
	empty    int64
	keys     map[string]struct{}
	tracking bool
	dups     int64
	dupEx    string
	// extremes of the values read as dates or timestamps, by shape: iso
	// (yyyy-MM-dd…), ymd (yyyy/M/d), dm and md (d/M/yyyy read either way),
	// dot (dd.MM.yyyy).
	ext map[string]*[2]time.Time
}

func newCollector() *collector {
	return &collector{keys: map[string]struct{}{}, tracking: true, ext: map[string]*[2]time.Time{}}
}

func (c *collector) add(v string, null bool, seen int64) {
	if len(c.rows) < SampleValues {
		if null {
			c.rows = append(c.rows, "")
		} else {
			c.rows = append(c.rows, v)
		}
	}
	if null {
		// Empty values do not rule a key out: they are counted, and held
		// back at load (a key value is required).
		c.empty++
		if c.tracking && c.empty > 10 && c.empty*20 > seen {
			c.tracking, c.keys = false, nil // too many to be a key's
		}
		return
	}
	if len(c.values) < SampleValues {
		c.values = append(c.values, v)
	}
	if c.tracking {
		k := KeyForm(v)
		if _, dup := c.keys[k]; dup {
			c.dups++
			if c.dupEx == "" {
				c.dupEx = k
			}
			// Clearly not a key: stop tracking to bound memory.
			if c.dups > 10 && c.dups*50 > seen {
				c.tracking, c.keys = false, nil
			}
		} else {
			c.keys[k] = struct{}{}
		}
	}
	c.time(strings.TrimSpace(v))
}

// time records v when it reads as a date or timestamp.
func (c *collector) time(v string) {
	if len(v) < 8 || len(v) > 40 || v[0] < '0' || v[0] > '9' {
		return
	}
	rec := func(shape string, t time.Time) {
		e := c.ext[shape]
		if e == nil {
			c.ext[shape] = &[2]time.Time{t, t}
			return
		}
		if t.Before(e[0]) {
			e[0] = t
		}
		if t.After(e[1]) {
			e[1] = t
		}
	}
	switch {
	case len(v) >= 10 && v[4] == '-':
		for _, l := range []string{"2006-01-02", time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04:05.999999", "2006-01-02T15:04:05.999999"} {
			if t, err := time.Parse(l, v); err == nil {
				rec("iso", t.UTC())
				return
			}
		}
	case v[4] == '/':
		if t, err := time.Parse("2006/1/2", v); err == nil {
			rec("ymd", t)
		}
	default:
		a, b, y, sep, ok := dayMonthShape(v)
		if !ok {
			return
		}
		valid := func(yy, mm, dd int) (time.Time, bool) {
			t := time.Date(yy, time.Month(mm), dd, 0, 0, 0, 0, time.UTC)
			return t, mm >= 1 && mm <= 12 && t.Day() == dd
		}
		if sep == '.' {
			if t, ok := valid(y, b, a); ok {
				rec("dot", t)
			}
			return
		}
		if t, ok := valid(y, b, a); ok {
			rec("dm", t)
		}
		if t, ok := valid(y, a, b); ok {
			rec("md", t)
		}
	}
}

// dayMonthShape reads d{1,2} sep d{1,2} sep yyyy (sep / . -).
func dayMonthShape(v string) (a, b, y int, sep byte, ok bool) {
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '.' || r == '-' })
	if len(parts) != 3 || len(parts[0]) > 2 || len(parts[1]) > 2 || len(parts[2]) != 4 {
		return 0, 0, 0, 0, false
	}
	sep = v[len(parts[0])]
	if v[len(parts[0])+1+len(parts[1])] != sep {
		return 0, 0, 0, 0, false
	}
	var err error
	if a, err = strconv.Atoi(parts[0]); err != nil {
		return 0, 0, 0, 0, false
	}
	if b, err = strconv.Atoi(parts[1]); err != nil {
		return 0, 0, 0, 0, false
	}
	if y, err = strconv.Atoi(parts[2]); err != nil {
		return 0, 0, 0, 0, false
	}
	return a, b, y, sep, true
}

// span is the earliest and latest date or timestamp read, using the d/M or
// M/d order the profile decided for the values of that shape.
func (c *collector) span(d clean.DateDecision) (time.Time, time.Time) {
	shapes := []string{"iso", "ymd", "dot"}
	switch d.Order {
	case clean.OrderDayMonth:
		shapes = append(shapes, "dm")
	case clean.OrderMonthDay:
		shapes = append(shapes, "md")
	}
	var lo, hi time.Time
	for _, s := range shapes {
		e := c.ext[s]
		if e == nil {
			continue
		}
		if lo.IsZero() || e[0].Before(lo) {
			lo = e[0]
		}
		if hi.IsZero() || e[1].After(hi) {
			hi = e[1]
		}
	}
	return lo, hi
}

// KeyForm is the form in which gate 3 compares key values: trimmed, in
// Unicode NFC, and for a number its integer value, so that zero- and
// space-padded identifiers (0010010015, " 10010017") and grouped numbers
// (1,200) compare as the keys they become once loaded with trim and
// zero_pad.
func KeyForm(v string) string {
	t := norm.NFC.String(strings.TrimSpace(v))
	if t == "" {
		return t
	}
	digits := true
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		if s := strings.TrimLeft(t, "0"); s != "" {
			return s
		}
		return "0"
	}
	if n, _, err := clean.ParseInt(t, -1<<63, 1<<63-1, clean.NumberStyle{}); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return t
}
