package gates

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// Change files: a group of files whose columns are a table's columns plus
// an operation column (insert/update/delete) and an ordering column is
// that table's change capture (load.mode cdc), not a table of its own.

// changeModel is what gate 3 recognised of a group of change files.
type changeModel struct {
	op, ord    int // indexes in the change table's cols
	ops        plan.ChangeOps
	opsSeen    []string // the operation values read, as written
	ordKind    string   // "integers" or "ISO timestamps"
	files      []string // the change files' globs
	units      int
	rows       int64
	ordEmpties int64
}

// opColumnNames are the names of operation columns (lowercase, without
// leading or trailing underscores).
var opColumnNames = []string{"op", "operation", "change_type", "changetype", "cdc_op", "op_type", "optype", "operation_type",
	"change_op", "change_operation", "dml", "dml_type", "action_type", "cdc_operation"}

// orderingColumnNames are the names of ordering columns.
var orderingColumnNames = []string{"seq", "sequence", "seq_no", "seqno", "sequence_no", "sequence_number", "change_seq", "cdc_seq",
	"lsn", "scn", "cdc_lsn", "changed_at", "change_ts", "change_time", "changed_on", "commit_ts", "commit_time", "committed_at",
	"op_ts", "ts", "cdc_ts", "event_time", "change_seq_no", "txn_seq"}

func headerKey(h string) string { return strings.ToLower(strings.TrimSpace(h)) }

func bareName(h string) string { return strings.Trim(headerKey(h), "_ ") }

// opFamilies are the spellings of insert, update and delete, lowercase.
var opFamilies = [][3]string{{"i", "u", "d"}, {"insert", "update", "delete"}, {"c", "u", "d"}, {"ins", "upd", "del"}, {"create", "update", "delete"}}

// recognizeOps decides the operation values from the values read: every
// value one of a family's three (case-insensitive), one spelling per
// operation. The plan's ops are the spellings read (the loader compares
// them exactly); an operation not read is spelled in the same case.
func recognizeOps(values []string) (plan.ChangeOps, []string, string) {
	seen := map[string]bool{}
	var distinct []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v != "" && !seen[v] {
			seen[v] = true
			distinct = append(distinct, v)
		}
	}
	slices.Sort(distinct)
	if len(distinct) == 0 {
		return plan.ChangeOps{}, nil, "no operation value was read"
	}
	for _, fam := range opFamilies {
		var spell [3]string
		ok := true
		for _, v := range distinct {
			k := slices.Index(fam[:], strings.ToLower(v))
			if k < 0 || (spell[k] != "" && spell[k] != v) {
				ok = false
				break
			}
			spell[k] = v
		}
		if !ok {
			continue
		}
		upper := strings.ToUpper(distinct[0]) == distinct[0]
		for k := range spell {
			if spell[k] == "" {
				spell[k] = fam[k]
				if upper {
					spell[k] = strings.ToUpper(fam[k])
				}
			}
		}
		return plan.ChangeOps{Insert: spell[0], Update: spell[1], Delete: spell[2]}, distinct, ""
	}
	return plan.ChangeOps{}, distinct, fmt.Sprintf("its values %s are not insert/update/delete (I/U/D, insert/update/delete or c/u/d, one spelling each)", quoteList(distinct, 6))
}

func quoteList(vs []string, n int) string {
	var q []string
	for i, v := range vs {
		if i == n {
			q = append(q, fmt.Sprintf("and %d more", len(vs)-n))
			break
		}
		q = append(q, strconv.Quote(v))
	}
	return strings.Join(q, ", ")
}

var isoStamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$`)

// orderingKind says whether the values read order changes: all integers,
// or all ISO timestamps of one length (their text order is their time
// order), mostly distinct.
func orderingKind(c *colModel, rows int64) (string, string) {
	if len(c.ev.Values) == 0 {
		return "", "no value was read"
	}
	ints, stamps := true, true
	n := len(c.ev.Values[0])
	for _, v := range c.ev.Values {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			ints = false
		}
		if !isoStamp.MatchString(v) || len(v) != n {
			stamps = false
		}
	}
	if !ints && !stamps {
		return "", fmt.Sprintf("its values (%s) are neither integers nor ISO timestamps of one layout", quoteList(c.ev.Values, 3))
	}
	if c.ev.Dups*50 > rows {
		return "", fmt.Sprintf("%d of its %d values repeat one before", c.ev.Dups, rows)
	}
	if ints {
		return "integers", ""
	}
	return "ISO timestamps", ""
}

// findChange recognises a candidate table as change files: an operation
// column by name whose values are insert/update/delete, and an ordering
// column by name whose values order. For an operation column whose values
// are not recognisable it returns the finding that says why nothing
// special is proposed.
func findChange(tm *tableModel) (*changeModel, *Finding) {
	op, ord := -1, -1
	for i, c := range tm.cols {
		b := bareName(c.header)
		if op < 0 && slices.Contains(opColumnNames, b) {
			op = i
		}
		if ord < 0 && (slices.Contains(orderingColumnNames, b) || strings.HasSuffix(b, "_lsn") || strings.HasSuffix(b, "_seq")) {
			ord = i
		}
	}
	if op < 0 {
		return nil, nil
	}
	ops, seen, why := recognizeOps(tm.cols[op].ev.Values)
	if why == "" && ord < 0 {
		why = "no ordering column (seq, lsn, changed_at, _ts, …) is next to it"
	}
	var kind string
	if why == "" {
		var w string
		if kind, w = orderingKind(tm.cols[ord], tm.ev.Rows); w != "" {
			why = fmt.Sprintf("ordering column %s: %s", tm.cols[ord].header, w)
		}
	}
	if why != "" {
		return nil, &Finding{Name: tm.name + ": change files", Status: Warn,
			Detail: fmt.Sprintf("column %s looks like the operation of change files, but %s: proposed as a table of its own, not as change capture", tm.cols[op].header, why),
			Fix:    "if these are change files, declare load.mode cdc with changes: {operation, ordering, ops} by hand"}
	}
	return &changeModel{op: op, ord: ord, ops: ops, opsSeen: seen, ordKind: kind, files: tm.ev.Globs,
		units: len(tm.ev.Units), rows: tm.ev.Rows, ordEmpties: tm.cols[ord].ev.Empty}, nil
}

// dataHeaders are the change table's headers other than its operation and
// ordering columns, as the loader matches them (trimmed, any case).
func (ch *changeModel) dataHeaders(tm *tableModel) []string {
	var hs []string
	for i, c := range tm.cols {
		if i != ch.op && i != ch.ord {
			hs = append(hs, headerKey(c.header))
		}
	}
	slices.Sort(hs)
	return hs
}

func headersOf(tm *tableModel) []string {
	var hs []string
	for _, c := range tm.cols {
		hs = append(hs, headerKey(c.header))
	}
	slices.Sort(hs)
	return hs
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// baseFor is the table whose columns are exactly the change files' data
// columns; of several, the one whose name the change table's name begins
// with most.
func baseFor(tm *tableModel, ch *changeModel, tables []*tableModel, changes map[*tableModel]*changeModel) *tableModel {
	want := ch.dataHeaders(tm)
	var best *tableModel
	for _, b := range tables {
		if b == tm || changes[b] != nil || b.ev.Sheet != "" {
			continue
		}
		if !slices.Equal(headersOf(b), want) {
			continue
		}
		if best == nil || commonPrefix(b.name, tm.name) > commonPrefix(best.name, tm.name) {
			best = b
		}
	}
	return best
}

// changeKey picks a change table's own key: the identifier-named column
// (id, *_id first, then *_no, *_code, …) with no empty value, preferring
// one named after the table.
func changeKey(tm *tableModel, ch *changeModel) int {
	best, bestRank := -1, 2
	stem := changeStem(tm.name)
	for i, c := range tm.cols {
		if i == ch.op || i == ch.ord || !keyable(c.typ) || c.ev.Empty > 0 {
			continue
		}
		r := idRank(c.name)
		if r < 2 && strings.HasPrefix(c.name, stem) {
			r -= 1
		}
		if r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// changeStem is a change table's name without its change suffix, in the
// singular: orders_changes → order.
func changeStem(name string) string {
	for _, x := range []string{"_changes", "_change", "_cdc", "_deltas", "_delta"} {
		name = strings.TrimSuffix(name, x)
	}
	return singular(name)
}

// describe is the finding's account of what was recognised.
func (ch *changeModel) describe(tm *tableModel) string {
	d := fmt.Sprintf("%s (%s, %s) are change files: operation column %s with values %s (insert %s, update %s, delete %s), ordering column %s (%s, %d of %d distinct)",
		strings.Join(ch.files, ", "), countNoun(ch.units, "file", "files"), countNoun(int(ch.rows), "row read", "rows read"),
		tm.cols[ch.op].header, quoteList(ch.opsSeen, 6), ch.ops.Insert, ch.ops.Update, ch.ops.Delete,
		tm.cols[ch.ord].header, ch.ordKind, ch.rows-tm.cols[ch.ord].ev.Dups-ch.ordEmpties, ch.rows)
	if ch.ordEmpties > 0 {
		d += fmt.Sprintf("; %s without an ordering value will be held back (change_invalid)", countNoun(int(ch.ordEmpties), "row", "rows"))
	}
	return d
}

// applyChanges folds the recognised change files into the model: onto
// their base table as its change capture, or as a change-capture table on
// their own key, or, failing both, leaves them a plain table with a
// finding. It returns the tables that remain and the findings.
func applyChanges(tables []*tableModel, changes map[*tableModel]*changeModel, pr *Proposal) ([]*tableModel, []Finding) {
	var fs []Finding
	var kept []*tableModel
	for _, tm := range tables {
		ch := changes[tm]
		if ch == nil {
			kept = append(kept, tm)
			continue
		}
		name := tm.name + ": change files"
		if b := baseFor(tm, ch, tables, changes); b != nil {
			if len(b.keys) == 0 {
				fs = append(fs, Finding{Name: name, Status: Warn,
					Detail: ch.describe(tm) + fmt.Sprintf("; their other columns are %s's, but %s has no key, which change capture needs: proposed as a table of its own", b.name, b.name),
					Fix:    fmt.Sprintf("declare %s's key and load.mode cdc with these files by hand", b.name)})
				fs = append(fs, tm.proposeKey()...)
				kept = append(kept, tm)
				continue
			}
			if b.cdc != nil {
				fs = append(fs, Finding{Name: name, Status: Warn,
					Detail: ch.describe(tm) + fmt.Sprintf("; %s already takes the change files %s: proposed as a table of its own", b.name, strings.Join(b.cdc.files, ", ")),
					Fix:    "move the files into one group, or declare them by hand"})
				fs = append(fs, tm.proposeKey()...)
				kept = append(kept, tm)
				continue
			}
			b.cdc, b.cdcFrom = ch, tm
			delete(pr.Evidence, tm.name)
			if old := b.name; SnakeName(b.ev.Base, "t") == tm.name && old != tm.name {
				// The change files took the name the base export would
				// have had (changes/orders_001.csv → orders, orders.csv →
				// src_orders): the table gets it back.
				b.name = tm.name
				pr.Evidence[b.name] = b.ev
				delete(pr.Evidence, old)
				renameFindings(pr.Findings, old, b.name)
				renameFindings(fs, old, b.name)
			}
			fs = append(fs, Finding{Name: b.name + ": change capture", Status: Pass,
				Detail: ch.describe(tm) + fmt.Sprintf("; their other columns are exactly %s's (%s), so they are %s's change capture (load.mode cdc on key %s), not a table of their own: %s loads first, then the changes in ordering order",
					b.name, countNoun(len(b.cols), "column", "columns"), b.name, b.keyNames(), strings.Join(b.ev.Globs, ", ")),
				Fix: "if they are not, make them a table of their own by hand"})
			continue
		}
		k := changeKey(tm, ch)
		if k < 0 {
			fs = append(fs, Finding{Name: name, Status: Warn,
				Detail: ch.describe(tm) + "; no table has their other columns and none of them is an identifier without empty values: proposed as a plain table (every change a row)",
				Fix:    "declare the key and load.mode cdc by hand"})
			fs = append(fs, tm.proposeKey()...)
			kept = append(kept, tm)
			continue
		}
		tm.cdc, tm.cdcFrom = ch, nil
		tm.keys, tm.key = []int{k}, k
		keyName := tm.cols[k].name
		// The operation and ordering columns are the change files', not the table's.
		op, ord := tm.cols[ch.op], tm.cols[ch.ord]
		tm.cdcCols = [2]string{op.header, ord.header}
		tm.cols = slices.DeleteFunc(tm.cols, func(c *colModel) bool { return c == op || c == ord })
		tm.key = slices.IndexFunc(tm.cols, func(c *colModel) bool { return c.name == keyName })
		tm.keys = []int{tm.key}
		fs = append(fs, Finding{Name: tm.name + ": change capture", Status: Warn,
			Detail: ch.describe(tm) + fmt.Sprintf("; no table has their other columns, so they are proposed as a change-capture table of their own on key %s (an identifier with no empty value; it repeats across changes, as keys of change files do)", keyName),
			Fix:    "check the key; without the base export the table starts empty and holds only what the changes insert"})
		kept = append(kept, tm)
	}
	return kept, fs
}

func (tm *tableModel) keyNames() string {
	var ns []string
	for _, i := range tm.keys {
		ns = append(ns, tm.cols[i].name)
	}
	return strings.Join(ns, ", ")
}

// cdcLoad sets a table's change capture in the plan.
func (tm *tableModel) cdcLoad(t *plan.Table) {
	ch := tm.cdc
	if ch == nil {
		return
	}
	t.Load.Mode = plan.ModeCDC
	opH, ordH := tm.cdcCols[0], tm.cdcCols[1]
	if tm.cdcFrom != nil {
		opH, ordH = tm.cdcFrom.cols[ch.op].header, tm.cdcFrom.cols[ch.ord].header
		t.Source.Files = append(slices.Clone(t.Source.Files), ch.files...)
		t.Description += fmt.Sprintf(" and its change files (%s)", strings.Join(ch.files, ", "))
	}
	t.Load.Changes = &plan.Changes{Operation: opH, Ordering: ordH, Ops: ch.ops}
}

// renameFindings renames the findings of table old ("old: aspect",
// "old.column: aspect") to table name.
func renameFindings(fs []Finding, old, name string) {
	for i, f := range fs {
		if strings.HasPrefix(f.Name, old+":") || strings.HasPrefix(f.Name, old+".") {
			fs[i].Name = name + strings.TrimPrefix(f.Name, old)
			fs[i].Detail = strings.ReplaceAll(f.Detail, old, name)
		}
	}
}
