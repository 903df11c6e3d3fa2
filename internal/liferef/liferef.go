// Package liferef is the reference model of the lifecycle property test
// (flow/lifecycle_test.go, issue 13): a seeded generator of CSV source
// folders and plans, and a plain-Go model of what the lake and the
// exception queue must hold after every operation on a table.
//
// It imports nothing from Lima: every expectation is computed here from
// the generated input alone.
//
// The model's rules (Lima's documented promises, DESIGN.md section 8):
//   - a load of a "full" table reads every file in name order; a row is
//     bad when a value does not parse as its plan type (long, int,
//     date yyyy-MM-dd), when a key is empty, or when its key was already
//     seen earlier in the same read (the first one wins);
//   - a bad row whose exception was resolved has its fix applied on every
//     later read of the same bytes in the same file ("fixed rows survive
//     reloads"); a fixed row that passes lands;
//   - an exception is identified by (table, file, raw bytes of the row):
//     one open exception per distinct bad row of the last read, none for
//     rows resolved, replayed or waived, none for rows that are gone;
//   - a replay lands each fixed row exactly once.
package liferef

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Roles of the generated columns. The CSV always carries all of them
// (under names chosen per sequence); the plan maps a subset.
const (
	RoleKey    = "key"    // long, the key when the table has one
	RoleText   = "text"   // string
	RoleQty    = "qty"    // int (widened to long by a plan change)
	RoleDay    = "day"    // date yyyy-MM-dd
	RoleRegion = "region" // string
	RoleNote   = "note"   // string, in the plan only after "add column"
)

// Roles in CSV order.
var Roles = []string{RoleKey, RoleText, RoleQty, RoleDay, RoleRegion, RoleNote}

var names = map[string][]string{
	RoleKey:    {"id", "order_id", "ref_no", "inspection_id"},
	RoleText:   {"name", "customer", "label", "supplier"},
	RoleQty:    {"qty", "units", "defect_qty", "pieces"},
	RoleDay:    {"day", "booked_on", "ship_date", "inspected_on"},
	RoleRegion: {"region", "zone", "area", "plant"},
	RoleNote:   {"note", "remark", "memo", "comment"},
}

// Col is one plan column.
type Col struct {
	Role string
	Name string // the column's name in the plan and the lake
	Src  string // the CSV header it reads
	Type string // long, int, string, date
}

// Plan is the model's view of the table's plan.
type Plan struct {
	Table     string
	Cols      []Col
	Keyed     bool     // the key role is the table's key
	Partition []string // e.g. month(day), identity column names
}

// Clone copies the plan.
func (p Plan) Clone() Plan {
	p.Cols = slices.Clone(p.Cols)
	p.Partition = slices.Clone(p.Partition)
	return p
}

// Col returns the plan column of a role.
func (p Plan) Col(role string) (Col, bool) {
	for _, c := range p.Cols {
		if c.Role == role {
			return c, true
		}
	}
	return Col{}, false
}

// YAML is the plan file (schema_version 1) for the source folder "in".
func (p Plan) YAML(prefix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema_version: 1\nplatform: {prefix: %s}\nsources:\n  in: {kind: files, path: in}\ntables:\n  %s:\n", prefix, p.Table)
	b.WriteString("    source: {name: in, files: [\"*.csv\"], format: csv, csv: {header: \"yes\"}}\n    columns:\n")
	for _, c := range p.Cols {
		fmt.Fprintf(&b, "      - {name: %s, type: %s", c.Name, c.Type)
		if c.Src != c.Name {
			fmt.Fprintf(&b, ", source_name: %s", c.Src)
		}
		if c.Type == "date" {
			b.WriteString(", formats: [yyyy-MM-dd]")
		}
		if p.Keyed && c.Role == RoleKey {
			b.WriteString(", required: true")
		}
		b.WriteString("}\n")
	}
	if len(p.Partition) > 0 {
		fmt.Fprintf(&b, "    partition: [%s]\n", strings.Join(quoteAll(p.Partition), ", "))
	}
	if p.Keyed {
		k, _ := p.Col(RoleKey)
		fmt.Fprintf(&b, "    load: {mode: full, keys: [%s]}\n", k.Name)
	} else {
		b.WriteString("    load: {mode: full}\n")
	}
	return b.String()
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

// Row is one generated CSV record (fields in Roles order).
type Row []string

// Line is the record as written (no quoting is ever needed).
func (r Row) Line() string { return strings.Join(r, ",") }

// Model is the generator, the source folder and the reference state of
// one sequence.
type Model struct {
	rng     *rand.Rand
	Header  []string // CSV header, in Roles order
	Files   map[string][]Row
	Plan    Plan
	nextKey int64
	nextTok int
	nextFil int

	// Loaded is the plan the last load read the files with; Lake is the
	// reference content of the table (row identity → count).
	Lake map[string]int
	// Ledger: identity → exception state of every bad row ever met.
	Ledger map[Ident]*Exc
	// lastBad are the identities the last load held back.
	lastBad map[Ident]bool
}

// Ident is an exception's identity in the model.
type Ident struct {
	File string
	Raw  string
}

// Exc is the model's exception.
type Exc struct {
	Status string            // open, fixed, replayed, waived
	Fix    map[string]string // plan column name → value
	FixRow Row               // the row with the fix applied
	Reason string            // which kind of bad row (for messages)
}

// New starts a sequence: column names, keyed or not, a first plan and
// one to three files.
func New(rng *rand.Rand, table string, keyed bool) *Model {
	m := &Model{rng: rng, Files: map[string][]Row{}, Lake: map[string]int{}, Ledger: map[Ident]*Exc{}, nextKey: 1000}
	for _, role := range Roles {
		n := names[role]
		m.Header = append(m.Header, n[rng.IntN(len(n))])
	}
	types := map[string]string{RoleKey: "long", RoleText: "string", RoleQty: "int", RoleDay: "date", RoleRegion: "string", RoleNote: "string"}
	p := Plan{Table: table, Keyed: keyed}
	for i, role := range Roles {
		if role == RoleNote {
			continue // added by a plan change
		}
		p.Cols = append(p.Cols, Col{Role: role, Name: m.Header[i], Src: m.Header[i], Type: types[role]})
	}
	if rng.IntN(2) == 0 {
		p.Partition = []string{"month(" + m.Header[3] + ")"}
	}
	m.Plan = p
	for n := 1 + rng.IntN(3); n > 0; n-- {
		m.AddFile()
	}
	return m
}

func (m *Model) roleIdx(role string) int { return slices.Index(Roles, role) }

// goodRow is a new valid row with a fresh key.
func (m *Model) goodRow() Row {
	m.nextKey++
	m.nextTok++
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, m.rng.IntN(400))
	r := Row{
		strconv.FormatInt(m.nextKey, 10),
		fmt.Sprintf("t%d", m.nextTok),
		strconv.Itoa(m.rng.IntN(5000)),
		day.Format("2006-01-02"),
		[]string{"north", "south", "east", "west"}[m.rng.IntN(4)],
		fmt.Sprintf("n%d", m.rng.IntN(50)),
	}
	if m.rng.IntN(10) == 0 {
		r[m.roleIdx(RoleQty)] = "" // a null
	}
	return r
}

// Bad kinds the generator writes.
var badKinds = []string{"bad_number", "bad_date", "int_overflow", "empty_key", "dup_key", "bad_key"}

// badRow is a new bad row of a random kind (unique bytes: a fresh token).
func (m *Model) badRow() Row {
	r := m.goodRow()
	switch badKinds[m.rng.IntN(len(badKinds))] {
	case "bad_number":
		r[m.roleIdx(RoleQty)] = []string{"12x", "x9", "1.5.2", "ten"}[m.rng.IntN(4)]
	case "bad_date":
		r[m.roleIdx(RoleDay)] = []string{"2024-02-30", "2024-13-01", "soon", "2024/1/5"}[m.rng.IntN(4)]
	case "int_overflow":
		r[m.roleIdx(RoleQty)] = strconv.FormatInt(3_000_000_000+m.rng.Int64N(1000), 10)
	case "empty_key":
		r[m.roleIdx(RoleKey)] = ""
	case "dup_key":
		if k := m.someKey(); k != "" {
			r[m.roleIdx(RoleKey)] = k
		} else {
			r[m.roleIdx(RoleKey)] = "7q"
		}
	case "bad_key":
		r[m.roleIdx(RoleKey)] = strconv.FormatInt(m.nextKey, 10) + "k"
	}
	return r
}

// someKey is the key of a random good-looking row already in a file.
func (m *Model) someKey() string {
	var keys []string
	for _, f := range m.fileNames() {
		for _, r := range m.Files[f] {
			if k := r[0]; k != "" && isInt(k, 64) {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return keys[m.rng.IntN(len(keys))]
}

func (m *Model) fileNames() []string {
	var out []string
	for f := range m.Files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// newRows is 3..12 rows, about one in five bad; keyless tables also get
// exact duplicate lines (a multiset, not a set).
func (m *Model) newRows() []Row {
	var rows, good []Row
	for n := 3 + m.rng.IntN(10); n > 0; n-- {
		switch {
		case m.rng.IntN(5) == 0:
			rows = append(rows, m.badRow())
		case !m.Plan.Keyed && len(good) > 0 && m.rng.IntN(6) == 0:
			rows = append(rows, slices.Clone(good[m.rng.IntN(len(good))]))
		default:
			r := m.goodRow()
			rows, good = append(rows, r), append(good, r)
		}
	}
	return rows
}

// AddFile writes a new file.
func (m *Model) AddFile() string {
	m.nextFil++
	name := fmt.Sprintf("part_%02d.csv", m.nextFil)
	if m.rng.IntN(3) == 0 {
		name = fmt.Sprintf("a_%02d.csv", m.nextFil) // sorts before the others
	}
	m.Files[name] = m.newRows()
	return name
}

// Change is one random change of the input: add a file, remove a file,
// add rows, modify a row, remove a row. It returns what it did.
func (m *Model) Change() string {
	files := m.fileNames()
	if len(files) == 0 {
		return "add file " + m.AddFile()
	}
	f := files[m.rng.IntN(len(files))]
	switch k := m.rng.IntN(6); {
	case k == 0:
		return "add file " + m.AddFile()
	case k == 1 && len(files) > 1:
		delete(m.Files, f)
		return "remove file " + f
	case k == 2 && len(m.Files[f]) > 0:
		i := m.rng.IntN(len(m.Files[f]))
		m.Files[f] = slices.Delete(m.Files[f], i, i+1)
		return fmt.Sprintf("remove row %d of %s", i+1, f)
	case k == 3 && len(m.Files[f]) > 0:
		i := m.rng.IntN(len(m.Files[f]))
		r := slices.Clone(m.Files[f][i])
		m.nextTok++
		r[m.roleIdx(RoleText)] = fmt.Sprintf("t%d", m.nextTok)
		r[m.roleIdx(RoleQty)] = strconv.Itoa(m.rng.IntN(5000))
		m.Files[f][i] = r
		return fmt.Sprintf("modify row %d of %s", i+1, f)
	default:
		m.Files[f] = append(m.Files[f], m.newRows()...)
		return "add rows to " + f
	}
}

// FileBytes is the CSV content of a file.
func (m *Model) FileBytes(name string) []byte {
	var b strings.Builder
	b.WriteString(strings.Join(m.Header, ",") + "\n")
	for _, r := range m.Files[name] {
		b.WriteString(r.Line() + "\n")
	}
	return []byte(b.String())
}

// FileList is the current file names, sorted.
func (m *Model) FileList() []string { return m.fileNames() }

// cell parses one field as a plan type: the canonical text, null, ok.
func cell(typ, v string) (string, bool) {
	if v == "" {
		return Null, true
	}
	switch typ {
	case "long":
		return v, isInt(v, 64)
	case "int":
		return v, isInt(v, 32)
	case "date":
		_, err := time.Parse("2006-01-02", v)
		return v, err == nil && len(v) == 10
	}
	return v, true
}

// Null is how the model (and the test's reader) spell a null cell.
const Null = "∅"

func isInt(v string, bits int) bool {
	if v == "" || (len(v) > 1 && v[0] == '0') {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(v, 10, bits)
	return err == nil
}

// check casts a row under the plan: its canonical text (columns sorted by
// name, "name=value" joined by "|"), its key, and why it is bad ("" when
// it passes the casts and null checks).
func (p Plan) check(r Row) (text, key, bad string) {
	var parts []string
	for _, c := range p.Cols {
		v, ok := cell(c.Type, r[slices.Index(Roles, c.Role)])
		if !ok && bad == "" {
			bad = "cast " + c.Name
		}
		if c.Role == RoleKey {
			key = v
			if p.Keyed && v == Null && bad == "" {
				bad = "null key"
			}
		}
		parts = append(parts, c.Name+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, "|"), key, bad
}

// RowText is the canonical text of a lake row given as column → value
// (Null for nulls): "name=value" sorted, joined by "|".
func RowText(row map[string]string) string {
	var parts []string
	for c, v := range row {
		parts = append(parts, c+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, "|")
}

// Load applies a full read of the files under the current plan: the lake
// is replaced, the ledger meets the bad rows of this read.
func (m *Model) Load() {
	m.Lake = map[string]int{}
	m.lastBad = map[Ident]bool{}
	seen := map[string]bool{}
	for _, f := range m.fileNames() {
		for _, r := range m.Files[f] {
			id := Ident{File: f, Raw: r.Line()}
			text, key, bad := m.Plan.check(r)
			if bad == "" && m.Plan.Keyed && seen[key] {
				bad = "duplicate key " + key
			}
			if e := m.Ledger[id]; bad != "" && e != nil && (e.Status == "fixed" || e.Status == "replayed") {
				// The recorded fix applies to the same bytes.
				fr := m.fixed(r, e.Fix)
				t2, k2, b2 := m.Plan.check(fr)
				if b2 == "" && !(m.Plan.Keyed && seen[k2]) {
					text, key, bad = t2, k2, ""
					e.Status = "replayed"
				}
			}
			if bad != "" {
				m.lastBad[id] = true
				if e := m.Ledger[id]; e == nil {
					m.Ledger[id] = &Exc{Status: "open", Reason: bad}
				} else if e.Status == "superseded" {
					e.Status, e.Reason = "open", bad
				}
				continue
			}
			if m.Plan.Keyed {
				seen[key] = true
				m.Lake[key+"\x00"+text]++
			} else {
				m.Lake[text]++
			}
		}
	}
	// Exceptions of rows this read did not hold back are closed
	// (superseded): gone from the source, or passing now.
	for id, e := range m.Ledger {
		if !m.lastBad[id] && e.Status == "open" {
			e.Status = "superseded"
		}
	}
}

// Counts are the rows the last load landed and held back.
func (m *Model) Counts() (loaded, heldBack int64) {
	for _, n := range m.Lake {
		loaded += int64(n)
	}
	return loaded, int64(len(m.lastBad))
}

// fixed is the row with fixed values (by plan column name) applied.
func (m *Model) fixed(r Row, fix map[string]string) Row {
	fr := slices.Clone(r)
	for _, c := range m.Plan.Cols {
		if v, ok := fix[c.Name]; ok {
			fr[slices.Index(Roles, c.Role)] = v
		}
	}
	return fr
}

// Open is the set of identities that must be open in the ledger.
func (m *Model) Open() map[Ident]bool {
	out := map[Ident]bool{}
	for id, e := range m.Ledger {
		if e.Status == "open" {
			out[id] = true
		}
	}
	return out
}

// FixFor proposes the fixed values (plan column → value) that make a bad
// row pass: every unparseable or empty value replaced, a fresh key when
// the key is empty, bad or taken. ok is false when the model cannot fix it.
func (m *Model) FixFor(id Ident) (map[string]string, bool) {
	var r Row
	for _, x := range m.Files[id.File] {
		if x.Line() == id.Raw {
			r = x
			break
		}
	}
	if r == nil {
		return nil, false
	}
	fix := map[string]string{}
	for _, c := range m.Plan.Cols {
		v := r[slices.Index(Roles, c.Role)]
		if _, ok := cell(c.Type, v); ok && !(c.Role == RoleKey && m.Plan.Keyed) {
			continue
		}
		// A keyed table's fix always gets a fresh key: the row's own may
		// be empty or taken.
		switch {
		case c.Role == RoleKey:
			m.nextKey++
			fix[c.Name] = strconv.FormatInt(m.nextKey, 10)
		case c.Type == "date":
			fix[c.Name] = "2024-06-15"
		default:
			fix[c.Name] = "7"
		}
	}
	return fix, len(fix) > 0
}

// Resolve records a fix for an open exception.
func (m *Model) Resolve(id Ident, fix map[string]string) {
	e := m.Ledger[id]
	e.Status, e.Fix = "fixed", fix
	for _, x := range m.Files[id.File] {
		if x.Line() == id.Raw {
			e.FixRow = m.fixed(x, fix)
		}
	}
}

// Waive waives an open exception.
func (m *Model) Waive(id Ident) { m.Ledger[id].Status = "waived" }

// Replay lands every fixed row once (the fixes always pass: fresh keys).
func (m *Model) Replay() int {
	n := 0
	for _, id := range m.sortedIdents() {
		e := m.Ledger[id]
		if e.Status != "fixed" {
			continue
		}
		text, key, bad := m.Plan.check(e.FixRow)
		if bad != "" {
			continue
		}
		if m.Plan.Keyed {
			m.Lake[key+"\x00"+text]++
		} else {
			m.Lake[text]++
		}
		e.Status = "replayed"
		n++
	}
	return n
}

func (m *Model) sortedIdents() []Ident {
	var ids []Ident
	for id := range m.Ledger {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].File != ids[j].File {
			return ids[i].File < ids[j].File
		}
		return ids[i].Raw < ids[j].Raw
	})
	return ids
}

// OpenIdents is Open, sorted (for picking at random reproducibly).
func (m *Model) OpenIdents() []Ident {
	var out []Ident
	for _, id := range m.sortedIdents() {
		if m.Ledger[id].Status == "open" {
			out = append(out, id)
		}
	}
	return out
}

// LakeKeyed is the lake reference of a keyed table: key → row text.
func (m *Model) LakeKeyed() map[string]string {
	out := map[string]string{}
	for k := range m.Lake {
		key, text, _ := strings.Cut(k, "\x00")
		out[key] = text
	}
	return out
}

// Plan changes. Each returns a description, or "" when it does not apply.

// AddColumn maps the note column.
func (m *Model) AddColumn() string {
	if _, ok := m.Plan.Col(RoleNote); ok {
		return ""
	}
	n := m.Header[m.roleIdx(RoleNote)]
	m.Plan.Cols = append(m.Plan.Cols, Col{Role: RoleNote, Name: n, Src: n, Type: "string"})
	return "add column " + n
}

// DropColumn drops a text column that is not partitioned on.
func (m *Model) DropColumn() string {
	for _, role := range []string{RoleNote, RoleRegion, RoleText} {
		c, ok := m.Plan.Col(role)
		if !ok || m.partitioned(c.Name) || len(m.Plan.Cols) <= 3 {
			continue
		}
		m.Plan.Cols = slices.DeleteFunc(m.Plan.Cols, func(x Col) bool { return x.Role == role })
		return "drop column " + c.Name
	}
	return ""
}

// RenameColumn renames a text column (source_name keeps the CSV header).
func (m *Model) RenameColumn() string {
	for _, role := range []string{RoleText, RoleRegion, RoleNote} {
		c, ok := m.Plan.Col(role)
		if !ok || m.partitioned(c.Name) {
			continue
		}
		i := slices.IndexFunc(m.Plan.Cols, func(x Col) bool { return x.Role == role })
		if c.Name == c.Src {
			m.Plan.Cols[i].Name = c.Src + "_x"
		} else {
			m.Plan.Cols[i].Name = c.Src
		}
		return fmt.Sprintf("rename column %s to %s", c.Name, m.Plan.Cols[i].Name)
	}
	return ""
}

// Widen widens the quantity int → long.
func (m *Model) Widen() string {
	i := slices.IndexFunc(m.Plan.Cols, func(x Col) bool { return x.Role == RoleQty })
	if i < 0 || m.Plan.Cols[i].Type != "int" {
		return ""
	}
	m.Plan.Cols[i].Type = "long"
	return "widen " + m.Plan.Cols[i].Name + " int to long"
}

// Repartition changes the partition spec: none ↔ month(day) ↔
// identity(region).
func (m *Model) Repartition() string {
	day, _ := m.Plan.Col(RoleDay)
	reg, hasReg := m.Plan.Col(RoleRegion)
	var next []string
	switch {
	case len(m.Plan.Partition) == 0:
		next = []string{"month(" + day.Name + ")"}
	case strings.HasPrefix(m.Plan.Partition[0], "month(") && hasReg:
		next = []string{reg.Name}
	default:
		next = nil
	}
	m.Plan.Partition = next
	return fmt.Sprintf("partition by %v", next)
}

func (m *Model) partitioned(col string) bool {
	for _, p := range m.Plan.Partition {
		if p == col || strings.Contains(p, "("+col+")") {
			return true
		}
	}
	return false
}
