package gates

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// Partitions that suit archive and queries: a partition is worth having
// only when each of its parts holds a file of a useful size. A table is
// not partitioned when it is small (under about a million rows, or less
// than partitionMinBytes of input in all); otherwise the business date
// most likely queried (never an audit column such as created_at,
// updated_at, etl_* or a record-keeping *_ts, while a business date
// exists) is partitioned by the finest of day, month and year whose parts
// would each hold partitionMinBytes or more, judged on the span of the
// sample spread over every file.

const (
	partitionMinRows  = 1_000_000
	partitionMinBytes = 32 << 20
)

// auditWords are the verbs of record-keeping timestamps.
var auditWords = []string{"created", "create", "updated", "update", "modified", "modify", "inserted", "insert", "loaded", "load",
	"deleted", "ingested", "ingest", "extracted", "extract", "synced", "sync", "changed", "change", "processed", "batch"}

// isAuditColumn reports whether a column's name says it records when the
// row was written rather than when the business event happened.
func isAuditColumn(name string) bool {
	words := strings.Split(name, "_")
	if slices.Contains([]string{"etl", "dw", "audit", "record", "sys", "meta", "lima"}, words[0]) {
		return true
	}
	if len(words) >= 2 && words[0] == "last" && slices.Contains(auditWords, words[1]) {
		return true
	}
	for _, w := range words {
		if slices.Contains(auditWords, w) {
			return true
		}
	}
	return slices.Contains([]string{"ts", "timestamp", "modified", "updated", "created"}, name)
}

// dateRank orders date columns: 0 business dates named like the row's date
// (*_on, *_date, ordered_at, …), 1 other dates, 2 audit columns.
func dateRank(name string) int {
	if isAuditColumn(name) {
		return 2
	}
	for _, s := range []string{"_on", "_at", "_date", "_dt", "_ts", "_time", "ilja", "ilsi"} {
		if strings.HasSuffix(name, s) {
			return 0
		}
	}
	if strings.Contains(name, "date") || strings.Contains(name, "time") || name == "day" {
		return 0
	}
	return 1
}

// inputSize is the table's input in bytes and its estimated rows.
func (tm *tableModel) inputSize() (bytes, rows int64) {
	ev := tm.ev
	for _, f := range ev.Files {
		bytes += f.Bytes
	}
	rows = ev.Rows
	if ev.EstRows > 0 { // counted or estimated per file (sample.go)
		return bytes, max(rows, ev.EstRows)
	}
	if ev.Sampled && ev.RowBytes > 0 && bytes > ev.RowBytes {
		rows = int64(float64(ev.Rows) * float64(bytes) / float64(ev.RowBytes))
	}
	return bytes, rows
}

func mib(b int64) string {
	switch {
	case b < 1<<10:
		return fmt.Sprintf("%d bytes", b)
	case b < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// proposePartition chooses the table's partition.
func (tm *tableModel) proposePartition(o ProposeOptions) Finding {
	mode := o.Partitioning
	minRows, minBytes := int64(partitionMinRows), int64(partitionMinBytes)
	if o.partMinRows > 0 { // tests: the thresholds scaled down
		minRows, minBytes = o.partMinRows, o.partMinBytes
	}
	name := tm.name + ": partition"
	if mode == "none" {
		return Finding{Name: name, Status: Pass, Detail: "none: gate 1 chose no partitions (scope.partitioning: none)"}
	}
	if len(tm.referenced) > 0 && mode != "date" {
		return Finding{Name: name, Status: Pass, Detail: fmt.Sprintf("none: %s is a dimension (%s join to it), read whole in joins", tm.name, strings.Join(tm.referenced, ", "))}
	}
	bytes, rows := tm.inputSize()
	size := fmt.Sprintf("%s of input, about %d rows", mib(bytes), rows)
	if rows < minRows || bytes < minBytes {
		return Finding{Name: name, Status: Pass, Detail: fmt.Sprintf("none: a small table (%s; partitions pay off from about %d rows and %s): partitioning it would only write many tiny files",
			size, minRows, mib(minBytes))}
	}
	if i := tm.dateColumn(); i >= 0 {
		c := tm.cols[i]
		lo, hi := c.ev.TimeMin, c.ev.TimeMax
		days := math.Max(1, math.Ceil(hi.Sub(lo).Hours()/24)+1)
		for _, g := range []struct {
			tr    string
			parts float64
		}{{"day", days}, {"month", math.Max(1, days/30.4)}, {"year", math.Max(1, days/365.25)}} {
			if float64(bytes)/g.parts < float64(minBytes) {
				continue
			}
			tm.partition = fmt.Sprintf("%s(%s)", g.tr, c.name)
			why := fmt.Sprintf("%s is the date most likely queried", c.name)
			if isAuditColumn(c.name) {
				why = fmt.Sprintf("%s records when rows were written (no business date was found)", c.name)
			}
			return Finding{Name: name, Status: Pass, Detail: fmt.Sprintf("%s: %s; its values span %s … %s, about %.0f %s(s) of %s each (%s)", tm.partition, why,
				lo.Format(time.DateOnly), hi.Format(time.DateOnly), g.parts, g.tr, mib(int64(float64(bytes)/g.parts)), size)}
		}
		return Finding{Name: name, Status: Pass, Detail: fmt.Sprintf("none: even by year(%s) each part would hold less than %s (%s)", c.name, mib(minBytes), size)}
	}
	if mode == "date" {
		return Finding{Name: name, Status: Warn, Detail: "none: gate 1 chose partitions by date (scope.partitioning: date), but the table has no date column",
			Fix: "partition it by hand, or leave it unpartitioned"}
	}
	best := -1
	for i, c := range tm.cols {
		p := c.ev.Profile
		// A dimension: text or boolean, 2 to 50 values each seen twice on
		// average, hardly ever null, no dates of an undecided order, not
		// an identifier, and parts of a useful size.
		if i == tm.key || slices.Contains(tm.keys, i) || c.idRank() <= 1 || (c.typ.Kind != plan.String && c.typ.Kind != plan.Boolean) || p.Distinct < 2 || p.Distinct > 50 ||
			int(p.Distinct)*2 > p.NonNull || p.NonNull*10 < p.Count*9 || p.DateOrder.Dates > 0 || bytes/int64(p.Distinct) < minBytes {
			continue
		}
		if best < 0 || p.Distinct < tm.cols[best].ev.Profile.Distinct {
			best = i
		}
	}
	if best >= 0 {
		c := tm.cols[best]
		tm.partition = c.name
		return Finding{Name: name, Status: Pass, Detail: fmt.Sprintf("%s (identity): no date column; %s has %d distinct values, a dimension queries filter on (%s)",
			c.name, c.name, c.ev.Profile.Distinct, size)}
	}
	return Finding{Name: name, Status: Pass, Detail: "none: no date column, and no text column with 2 to 50 values that repeat"}
}
