package reports

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/ui/textsafe"
)

// Migration statuses.
const (
	MigrationValidated   = "validated"    // validation passed, the entry was not switched
	MigrationSwitched    = "switched"     // validation passed and the Glue entry points at the Iceberg table
	MigrationFailed      = "failed"       // validation failed: nothing was switched
	MigrationNotSwitched = "not_switched" // validation passed, the switch was refused (not confirmed, files changed)
)

// MigrationReport is the report of one migrate run (report.json).
type MigrationReport struct {
	RunID      string              `json:"run_id"`
	Kind       string              `json:"kind"` // "migration"
	Status     string              `json:"status"`
	StartedAt  time.Time           `json:"started_at"`
	FinishedAt time.Time           `json:"finished_at"`
	Source     string              `json:"source"`
	Method     string              `json:"method"`
	Partition  []string            `json:"partition_spec,omitempty"`
	TradeOffs  []string            `json:"trade_offs"`
	RowsRead   int64               `json:"rows_read,omitempty"`
	RowsAdded  int64               `json:"rows_added"`
	Validation *migrate.Validation `json:"validation,omitempty"`
	Switch     *MigrationSwitch    `json:"switch,omitempty"`
	Notes      []string            `json:"notes,omitempty"`
}

// MigrationSwitch is what the switch did, or why it did not happen.
type MigrationSwitch struct {
	Done    bool   `json:"done"`
	Backup  string `json:"backup_table,omitempty"`
	Record  string `json:"side_record,omitempty"`
	Refusal string `json:"refusal,omitempty"`
}

// WriteMigration writes report.json and report.md under dir/<run-id>/
// atomically (0600 files in a 0700 folder) and returns the folder.
func WriteMigration(dir string, r *MigrationReport) (string, error) {
	d, err := RunDir(dir, r.RunID)
	if err != nil {
		return "", err
	}
	if err := fsx.MkdirPrivate(d); err != nil {
		return "", err
	}
	r.Kind = "migration"
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := fsx.WriteFileAtomic(filepath.Join(d, "report.json"), append(textsafe.EscapeJSON(b), '\n')); err != nil {
		return "", err
	}
	if err := fsx.WriteFileAtomic(filepath.Join(d, "report.md"), []byte(MigrationMarkdown(r))); err != nil {
		return "", err
	}
	return d, nil
}

// OKMark is ✓ or ✗ (the word beside it carries the meaning too).
func OKMark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// failedChecks names a partition's failed checks with both values.
func failedChecks(p migrate.PartResult) string {
	var out []string
	for _, c := range p.Checks {
		if !c.OK {
			out = append(out, fmt.Sprintf("%s: hive %s, iceberg %s", c.Name, c.Hive, c.Iceberg))
		}
	}
	if len(out) == 0 {
		return "all equal"
	}
	return strings.Join(out, "; ")
}

// MigrationMarkdown is report.md.
func MigrationMarkdown(r *MigrationReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lima migration %s\n\n", r.RunID)
	fmt.Fprintf(&b, "- **Status:** %s\n- **Source:** %s\n- **Method:** %s\n", r.Status, md(r.Source), r.Method)
	if len(r.Partition) > 0 {
		fmt.Fprintf(&b, "- **Partition spec:** %s\n", md(strings.Join(r.Partition, ", ")))
	}
	fmt.Fprintf(&b, "- **Started:** %s  \n- **Finished:** %s\n", r.StartedAt.Format("2006-01-02 15:04:05 MST"), r.FinishedAt.Format("2006-01-02 15:04:05 MST"))
	b.WriteString("\n## Trade-offs of the method\n\n")
	for _, t := range r.TradeOffs {
		fmt.Fprintf(&b, "- %s\n", md(t))
	}
	if v := r.Validation; v != nil {
		fmt.Fprintf(&b, "\n## Validation: %s\n\n", map[bool]string{true: "✓ passed", false: "✗ failed"}[v.OK])
		fmt.Fprintf(&b, "Iceberg table `%s`, snapshot %d; %d Hive files, listing fingerprint `%s`; rows: Hive %d, Iceberg %d.\n\n",
			strings.ReplaceAll(md(v.Iceberg), "`", ""), v.SnapshotID, v.Files, short(v.Fingerprint), v.HiveRows, v.IcebergRows)
		b.WriteString("| | partition | Hive rows | Iceberg rows | checks |\n|---|---|--:|--:|---|\n")
		for _, p := range v.Partitions {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", OKMark(p.OK), md(p.Partition), p.HiveRows, p.IcebergRows, md(failedChecks(p)))
		}
		if len(v.Missing) > 0 {
			fmt.Fprintf(&b, "\n✗ Missing from the Iceberg table: %s\n", md(strings.Join(v.Missing, ", ")))
		}
		if len(v.Extra) > 0 {
			fmt.Fprintf(&b, "\n✗ Only in the Iceberg table: %s\n", md(strings.Join(v.Extra, ", ")))
		}
		b.WriteString("\n**Checked:**\n\n")
		for _, c := range v.Checked {
			fmt.Fprintf(&b, "- %s\n", md(c))
		}
		b.WriteString("\n**Not checked:**\n\n")
		for _, c := range v.NotChecked {
			fmt.Fprintf(&b, "- %s\n", md(c))
		}
	}
	if s := r.Switch; s != nil {
		b.WriteString("\n## Switch\n\n")
		if s.Done {
			fmt.Fprintf(&b, "The Glue entry points at the Iceberg table. The original definition is kept as the table `%s` and in the side record `%s` until `lima-tui migrate --drop-backup`; `lima-tui migrate --rollback` restores it.\n",
				strings.ReplaceAll(md(s.Backup), "`", ""), strings.ReplaceAll(md(s.Record), "`", ""))
		} else {
			fmt.Fprintf(&b, "Not switched: %s\n", md(s.Refusal))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n> %s\n", md(n))
	}
	return b.String()
}

// MigrationTable is the validation as plain lines for a terminal, one per
// partition with ✓ or ✗ (the caller sanitizes).
func MigrationTable(v *migrate.Validation) []string {
	w := len("partition")
	for _, p := range v.Partitions {
		w = max(w, len(p.Partition))
	}
	out := []string{fmt.Sprintf("   %-*s  %12s  %12s  %s", w, "partition", "Hive rows", "Iceberg rows", "checks")}
	for _, p := range v.Partitions {
		out = append(out, fmt.Sprintf("%s  %-*s  %12d  %12d  %s", OKMark(p.OK), w, p.Partition, p.HiveRows, p.IcebergRows, failedChecks(p)))
	}
	return out
}
