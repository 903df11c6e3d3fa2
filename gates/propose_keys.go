package gates

import (
	"fmt"
	"strings"
)

// Keys from dirty data: a column named like an identifier whose non-empty
// values are unique in 99% or more of the rows read is the key, even when
// some rows repeat a key or have none; those rows are held back at load
// (rule unique for a repeat, not_null for an empty key: a key value is
// required) and the finding says how many there are. Names decide between
// candidates before cleanliness does: the table's own identifier (id,
// supplier_id in suppliers, Cust# in customers) beats other *_id and #
// columns, which beat numbers and codes (*_no, *_code: business_no,
// country_code). When no single column qualifies, a pair of columns may.

// Thresholds of a key read from dirty data.
const (
	// keyMaxDupShare: at most 1% of the non-empty values repeat a key.
	keyMaxDupShare = 0.01
	// keyMaxEmptyShare: at most 5% of the rows have no key value.
	keyMaxEmptyShare = 0.05
)

// idRank of a column: as idRank of its name, and 0 for a header that ends
// in # or № (Cust#, Order №).
func (c *colModel) idRank() int {
	h := strings.TrimSpace(c.header)
	if strings.HasSuffix(h, "#") || strings.HasSuffix(h, "№") || strings.HasPrefix(h, "#") {
		return 0
	}
	return idRank(c.name)
}

// singular is a crude English singular of a table name's last word.
func singular(name string) string {
	if i := strings.LastIndexByte(name, '_'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	switch {
	case strings.HasSuffix(name, "ies") && len(name) > 4:
		return strings.TrimSuffix(name, "ies") + "y"
	case strings.HasSuffix(name, "sses"), strings.HasSuffix(name, "xes"), strings.HasSuffix(name, "ches"), strings.HasSuffix(name, "shes"):
		return strings.TrimSuffix(name, "es")
	case strings.HasSuffix(name, "s") && !strings.HasSuffix(name, "ss") && len(name) > 3:
		return strings.TrimSuffix(name, "s")
	}
	return name
}

// ownIdentifier reports whether a column's name says it identifies the
// rows of the table: id, or <entity>_id / <entity>_no / <entity># where
// the entity is the table's (supplier_id in suppliers, cust in customers).
func (tm *tableModel) ownIdentifier(c *colModel) bool {
	if c.name == "id" {
		return true
	}
	if c.idRank() > 1 {
		return false
	}
	stem := nameStem(c.name, append([]string{"_id", "id"}, keySuffixes...)...)
	ent := singular(tm.name)
	if stem == "" || ent == "" {
		return false
	}
	return stem == ent || (len(stem) >= 3 && strings.HasPrefix(ent, stem)) || strings.HasSuffix(stem, "_"+ent) || stem == tm.name
}

// keyTier orders key candidates by name: 0 the table's own identifier,
// 1 another *_id or # column, 2 numbers and codes; -1 no identifier.
func (tm *tableModel) keyTier(c *colModel) int {
	switch {
	case c.idRank() > 1:
		return -1
	case tm.ownIdentifier(c):
		return 0
	case c.idRank() == 0:
		return 1
	}
	return 2
}

// keyCandidate is a column (or pair) that may be the key.
type keyCandidate struct {
	cols     []int
	tier     int
	distinct int
	dups     int64
	empty    int64
	dupEx    string
	rows     int64 // rows the uniqueness was measured on
}

func (k keyCandidate) dirt() int64 { return k.dups + k.empty }

func (k keyCandidate) qualifies() bool {
	if k.rows == 0 {
		return false
	}
	nonEmpty := k.rows - k.empty
	return nonEmpty > 0 && float64(k.empty) <= keyMaxEmptyShare*float64(k.rows) &&
		(k.dups == 0 || float64(k.dups) <= max(1, keyMaxDupShare*float64(nonEmpty)))
}

func (k keyCandidate) better(o keyCandidate) bool {
	if k.tier != o.tier {
		return k.tier < o.tier
	}
	if k.dirt() != o.dirt() {
		return k.dirt() < o.dirt()
	}
	return k.cols[0] < o.cols[0]
}

// proposeKey chooses the table's key.
func (tm *tableModel) proposeKey() []Finding {
	ev := tm.ev
	name := tm.name + ": key"
	var best *keyCandidate
	for i, c := range tm.cols {
		tier := tm.keyTier(c)
		if !keyable(c.typ) || tier < 0 || c.ev.KeySet == nil || ev.Rows == 0 {
			continue
		}
		k := keyCandidate{cols: []int{i}, tier: tier, distinct: len(c.ev.KeySet), dups: c.ev.Dups, empty: c.ev.Empty, dupEx: c.ev.DupExample, rows: ev.Rows}
		if k.qualifies() && (best == nil || k.better(*best)) {
			best = &k
		}
	}
	if best == nil {
		best = tm.pairKey()
	}
	scope := "all rows read"
	if ev.Sampled {
		scope = fmt.Sprintf("the first %d rows read; the files hold more, so uniqueness is only observed on this sample", ev.Rows)
	}
	if best == nil {
		return []Finding{{Name: name, Status: Warn,
			Detail: "no column named like an identifier (id, *_id, *_no, *_code, #, …), nor a pair of them, has a value in 95% of the rows, unique in 99% of them",
			Fix:    "declare load.keys by hand if the source has a key (several columns are allowed); without one gate 4 cannot check for duplicate rows"}}
	}
	k := *best
	tm.keys = k.cols
	if len(k.cols) == 1 {
		tm.key = k.cols[0] // a pair is no key other tables refer to
	}
	var names []string
	for _, i := range k.cols {
		names = append(names, tm.cols[i].name)
	}
	what := strings.Join(names, " + ")
	if len(k.cols) > 1 {
		scope = fmt.Sprintf("the pair is unique where no single column is; measured on the first %d rows read", k.rows)
	}
	why := ""
	if c := tm.cols[k.cols[0]]; len(k.cols) == 1 && k.tier == 0 && c.name != "id" {
		why = fmt.Sprintf("named for the rows of %s; ", tm.name)
	}
	if k.dirt() == 0 {
		st, fix := Pass, ""
		if ev.Sampled {
			st, fix = Warn, "confirm the key with the source's owner; duplicates in the rest are held back at load (rule unique)"
		}
		return []Finding{{Name: name, Status: st, Fix: fix,
			Detail: fmt.Sprintf("%s: %s%d distinct values = %d non-null = %d rows (%s)", what, why, k.distinct, k.rows, k.rows, scope)}}
	}
	var dirt, rules []string
	if k.dups > 0 {
		dirt = append(dirt, fmt.Sprintf("%s a key seen before (%s)", countNoun(int(k.dups), "row repeats", "rows repeat"), k.dupEx))
		rules = append(rules, "unique for the repeats")
	}
	if k.empty > 0 {
		dirt = append(dirt, fmt.Sprintf("%s no %s", countNoun(int(k.empty), "row has", "rows have"), what))
		rules = append(rules, "not_null for the empty keys (a key value is required)")
	}
	return []Finding{{Name: name, Status: Warn,
		Detail: fmt.Sprintf("%s: %s%d distinct values in %d rows; %s: they will be held back at load (rule %s) (%s)",
			what, why, k.distinct, k.rows, strings.Join(dirt, "; "), strings.Join(rules, ", "), scope),
		Fix: "the rows held back wait in the exception queue for their owner to resolve; choose another key if this one is wrong"}}
}

// pairKey finds a pair of columns, at least one named like an identifier
// and the other an identifier or a whole number (a line or sequence
// number), whose values together are unique where no single column is,
// on the rows kept aligned (the first SampleValues).
func (tm *tableModel) pairKey() *keyCandidate {
	var best *keyCandidate
	for i, a := range tm.cols {
		ta := tm.keyTier(a)
		if !keyable(a.typ) || ta < 0 {
			continue
		}
		for j, b := range tm.cols {
			if j == i || !keyable(b.typ) {
				continue
			}
			tb := tm.keyTier(b)
			if tb < 0 && !b.typ.IsIntegral() || (tb >= 0 && j < i) {
				continue // each pair of identifiers once
			}
			n := min(len(a.ev.Rows), len(b.ev.Rows))
			if n == 0 {
				continue
			}
			k := keyCandidate{cols: []int{i, j}, tier: max(ta, tb), rows: int64(n)}
			if tb < 0 {
				k.tier = 3
			}
			seen := map[string]struct{}{}
			for r := 0; r < n; r++ {
				va, vb := a.ev.Rows[r], b.ev.Rows[r]
				if isNullToken(va) || isNullToken(vb) {
					k.empty++
					continue
				}
				f := KeyForm(va) + "\x00" + KeyForm(vb)
				if _, dup := seen[f]; dup {
					k.dups++
					if k.dupEx == "" {
						k.dupEx = strings.TrimSpace(va) + " + " + strings.TrimSpace(vb)
					}
					continue
				}
				seen[f] = struct{}{}
			}
			k.distinct = len(seen)
			if k.qualifies() && (best == nil || k.better(*best)) {
				best = &k
			}
		}
	}
	return best
}
