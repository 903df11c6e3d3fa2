package rawland

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// ExtractName is the landed file of a database extract.
const ExtractName = "extract.csv.gz"

// Extract describes a database extract: the rows of one table exactly as
// the reader yielded them (before any cleaning or casting), as gzip'd CSV
// (RFC 4180, CRLF, a header of the column names). Every non-null value is
// quoted; SQL NULL is an empty unquoted field, so "" (quoted) is the empty
// string — the convention of PostgreSQL's COPY … (FORMAT csv).
type Extract struct {
	Kind    string   `json:"kind"` // "database"
	Format  string   `json:"format"`
	Unit    string   `json:"unit"`
	Columns []string `json:"columns"`
	Rows    int64    `json:"rows"`
	// Query is the SELECT the rows came from, with its bind parameters
	// as text (the read range), and the snapshot it ran in.
	Query     string   `json:"query"`
	Args      []string `json:"args,omitempty"`
	Isolation string   `json:"isolation,omitempty"`
	Snapshot  string   `json:"snapshot,omitempty"`
	// WatermarkBefore is the table's watermark when the read started (the
	// lower bound of an incremental read).
	WatermarkBefore string `json:"watermark_before,omitempty"`
}

// ExtractFormat names the format of ExtractName.
const ExtractFormat = "csv+gzip; rfc4180; header; null=unquoted empty field"

// LandExtract lands the extract file at path (written by the run during
// the read) as ExtractName and verifies it like any landed file; the
// manifest records the extract.
func (t Target) LandExtract(ctx context.Context, sourceName, table, loadID string, day time.Time, path string, ex Extract) (*Manifest, error) {
	prefix, err := Prefix(sourceName, table, loadID, day)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rawland: open extract: %w", err)
	}
	lf, err := t.put(ctx, prefix+"/"+ExtractName, f, "")
	f.Close()
	if err != nil {
		return nil, err
	}
	lf.Name = ExtractName
	ex.Kind, ex.Format = "database", ExtractFormat
	m := &Manifest{Source: sourceName, Table: table, LoadID: loadID, LoadDate: day.UTC().Format("2006-01-02"), Landed: time.Now().UTC(),
		Files: []File{lf}, Extract: &ex}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := t.put(ctx, prefix+"/"+ManifestName, bytes.NewReader(b), ""); err != nil {
		return nil, err
	}
	return m, nil
}
