package gates

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// References from value overlap: a column whose values, compared as keys
// (trimmed, NFC, without leading zeros, ignoring case), are found in
// another table's key in 90% or more of the rows that have one refers to
// that table: the proposal joins on it and adds a references check, so the
// rows whose value is in no row of the other table (the would-be orphans)
// are held back at load instead of finding nothing when joined. The
// referring column is given the key's type and normalizations, so that the
// check compares like with like (0000010003 and 10003, s-00010 and
// S-00010).

// refMinRowShare is the share of a column's rows with a value that must
// be found in the other table's key for a reference by value.
const refMinRowShare = 0.90

// comparesLikeKey reports whether the referring column's values, loaded
// with its proposed type and normalizations, are found among the key's
// loaded values as often as they are as keys (matches, of the rows read):
// a references check compares loaded values, so it is proposed only then.
// unlike counts the rows that match only as keys.
func comparesLikeKey(c, k *colModel, matches int) (bool, int) {
	if len(k.ev.Values) < len(k.ev.KeySet) {
		return true, 0 // the key's values were not all kept: trust the key forms
	}
	set := map[string]struct{}{}
	for _, f := range k.castForms() {
		if f != "" {
			set[f] = struct{}{}
		}
	}
	found := 0
	for _, f := range c.castForms() {
		if _, ok := set[f]; ok && f != "" {
			found++
		}
	}
	if found >= matches {
		return true, 0
	}
	return false, matches - found
}

// joinForm is the form in which gate 3 compares a value with another
// table's key: its KeyForm, in lower case.
func joinForm(v string) string { return strings.ToLower(KeyForm(v)) }

// joinForms are the join forms of the key values read (of a key column).
func (c *colModel) joinForms() map[string]struct{} {
	if c.jforms == nil {
		c.jforms = make(map[string]struct{}, len(c.ev.KeySet))
		for k := range c.ev.KeySet {
			c.jforms[strings.ToLower(k)] = struct{}{}
		}
	}
	return c.jforms
}

// overlap measures how a column's values are found in a key.
func overlap(c, k *colModel) joinModel {
	set := k.joinForms()
	seen := map[string]bool{}
	var j joinModel
	var missing []string
	for _, v := range c.ev.Values {
		if isNullToken(v) {
			continue
		}
		f := joinForm(v)
		_, ok := set[f]
		j.rows++
		if !ok {
			j.orphans++
		}
		if _, done := seen[f]; done {
			continue
		}
		seen[f] = ok
		j.total++
		if ok {
			j.found++
		} else {
			missing = append(missing, strings.TrimSpace(v))
		}
	}
	sort.Strings(missing)
	j.missing = missing
	return j
}

// proposeJoins finds the join keys and references between tables.
func proposeJoins(tables []*tableModel) []Finding {
	var fs []Finding
	for _, a := range tables {
		for ci, c := range a.cols {
			if !keyable(c.typ) {
				continue
			}
			var best *joinModel
			share := func(j *joinModel) float64 {
				if j.rows == 0 {
					return 0
				}
				return float64(j.rows-j.orphans) / float64(j.rows)
			}
			for _, b := range tables {
				if b == a || b.key < 0 {
					continue
				}
				k := b.cols[b.key]
				sameName := c.name == k.name && c.name != "id"
				if ci == a.key && (!sameName || a.ev.Rows < b.ev.Rows || (a.ev.Rows == b.ev.Rows && a.name < b.name)) {
					continue // a key refers to another table only 1:1, by name, from the bigger table
				}
				if slices.Contains(a.keys, ci) && len(a.keys) > 1 && !sameName {
					continue // part of a composite key: by name only
				}
				j := overlap(c, k)
				j.col, j.to, j.byName = ci, b, sameName
				sh := share(&j)
				byValue := !sameName && sh >= refMinRowShare && j.found >= 2 && (c.idRank() <= 1 || c.typ.Kind == plan.String)
				if !(sameName && sh >= 0.5) && !byValue {
					continue
				}
				if best == nil || (j.byName && !best.byName) || (j.byName == best.byName && sh > share(best)) {
					best = &j
				}
			}
			if best == nil {
				continue
			}
			best.check = share(best) >= refMinRowShare
			if best.check {
				k := best.to.cols[best.to.key]
				best.aligned = alignToKey(c, k)
				best.check, best.unlike = comparesLikeKey(c, k, best.rows-best.orphans)
			}
			a.joins = append(a.joins, *best)
			if !slices.Contains(best.to.referenced, a.name) {
				best.to.referenced = append(best.to.referenced, a.name)
			}
			fs = append(fs, a.joinFinding(*best))
		}
	}
	return fs
}

// alignToKey gives a referring column the type and normalizations of the
// key it refers to, so that the references check compares the values as
// loaded; it says what it changed ("" for nothing).
func alignToKey(c, k *colModel) string {
	var did []string
	dropPad := func() {
		c.normalize = slices.DeleteFunc(c.normalize, func(n string) bool { return strings.HasPrefix(n, "zero_pad:") })
	}
	addNorm := func(n string) {
		if !slices.Contains(c.normalize, n) {
			c.normalize = append(c.normalize, n)
			did = append(did, n)
		}
	}
	switch {
	case k.typ.IsIntegral() && c.typ.Kind == plan.String:
		for _, v := range c.ev.Values {
			t := strings.TrimSpace(v)
			if isNullToken(v) {
				continue
			}
			for i := 0; i < len(t); i++ {
				if t[i] < '0' || t[i] > '9' {
					return "" // values that are no numbers stay text; they are the orphans
				}
			}
		}
		dropPad()
		c.typ = k.typ
		did = append(did, "type "+k.typ.String()+" like the key (leading zeros dropped)")
	case k.typ.Kind == plan.String && c.typ.IsIntegral():
		c.typ = k.typ
		did = append(did, "type string like the key")
		fallthrough
	case k.typ.Kind == plan.String && c.typ.Kind == plan.String:
		for _, n := range k.normalize {
			if strings.HasPrefix(n, "zero_pad:") && !slices.Contains(c.normalize, n) {
				dropPad()
				addNorm(n)
			}
		}
		kUpper, kLower, cMixed := true, true, false
		for f := range k.ev.KeySet {
			kUpper = kUpper && f == strings.ToUpper(f)
			kLower = kLower && f == strings.ToLower(f)
		}
		for _, v := range c.ev.Values {
			if kf := KeyForm(v); kf != strings.ToUpper(kf) && kUpper || kf != strings.ToLower(kf) && kLower {
				cMixed = true
				break
			}
		}
		if cMixed && kUpper && !kLower {
			addNorm("upper")
		} else if cMixed && kLower && !kUpper {
			addNorm("lower")
		}
		if slices.ContainsFunc(c.ev.Values, func(v string) bool { return strings.TrimSpace(v) != v }) {
			addNorm("trim")
		}
	}
	return strings.Join(did, ", ")
}

func (a *tableModel) joinFinding(j joinModel) Finding {
	c, k := a.cols[j.col], j.to.cols[j.to.key]
	ref := j.to.name + "." + k.name
	how := fmt.Sprintf("same column name; %s is the key of %s", k.name, j.to.name)
	if !j.byName {
		how = fmt.Sprintf("found by value: %s is the key of %s", k.name, j.to.name)
	}
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	detail := fmt.Sprintf("%s; compared as keys (trimmed, NFC, without leading zeros, ignoring case): %d of %d rows with a value (%.1f%%), %d of %d distinct values of %s.%s are in %s",
		how, j.rows-j.orphans, j.rows, pct(j.rows-j.orphans, j.rows), j.found, j.total, a.name, c.name, ref)
	if len(c.ev.Values) < int(a.ev.Rows) || a.ev.Sampled {
		detail += fmt.Sprintf(" (in the first %d values read)", len(c.ev.Values))
	}
	if j.to.ev.Sampled {
		detail += fmt.Sprintf("; %s was read only in part, so the overlap is a lower bound", j.to.name)
	}
	st, fix := Pass, ""
	if j.orphans > 0 {
		detail += fmt.Sprintf("; %s whose %s is not in %s (%s)", countNoun(j.orphans, "row", "rows"), c.name, ref, listFirst(j.missing, 3))
		st = Warn
		if j.check {
			detail += ": held back at load by the references check"
			fix = fmt.Sprintf("the rows of %s held back wait in the exception queue; fix them at the source, or drop the check if %s may name what %s does not hold", a.name, c.name, j.to.name)
		} else {
			fix = fmt.Sprintf("rows of %s whose %s is not in %s find nothing when joined; add a references check to hold them back, or fix the source", a.name, c.name, ref)
		}
	} else if j.check {
		detail += "; a references check holds back a row whose value is not there"
	}
	if j.unlike > 0 {
		st = Warn
		detail += fmt.Sprintf("; no references check: loaded as proposed, %s match the key only as keys (their text differs, e.g. leading zeros)", countNoun(j.unlike, "value", "values"))
		fix = strings.TrimPrefix(fix+"; ", "; ") + fmt.Sprintf("give %s.%s and %s the same type and normalizations (zero_pad, upper), then add a references check", a.name, c.name, ref)
	}
	if j.aligned != "" {
		detail += fmt.Sprintf("; %s proposed with %s, to compare like %s", c.name, j.aligned, ref)
	}
	if c.typ.Kind != k.typ.Kind {
		st = Warn
		fix = strings.TrimPrefix(fix+"; ", "; ") + fmt.Sprintf("the types differ (%s is %s, %s is %s): give both the same type", c.name, c.typ, ref, k.typ)
	}
	return Finding{Name: fmt.Sprintf("%s.%s → %s: join", a.name, c.name, ref), Status: st, Detail: detail, Fix: fix}
}
