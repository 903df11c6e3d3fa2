package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// DuckDB variants, each run in its own child process.
const (
	// duckTyped is the yardstick: every field read as text, then cast to
	// the plan's column types in the SELECT (TRY_CAST: a value that does
	// not fit becomes NULL), the plan's two date formats and the
	// trailing-minus and thousands forms of cost included — typed parsing
	// work comparable to Lima's, without checks, exceptions or gate 4.
	duckTyped = "typed"
	// duckVarchar reads every field as text: no casting, so no row can fail.
	duckVarchar = "varchar"
	// duckAuto lets DuckDB sniff the types and skip rows that do not fit.
	duckAuto = "auto"
)

// duckResult is what the DuckDB child prints on stdout as JSON.
type duckResult struct {
	Version string `json:"version"`
	Rows    int64  `json:"rows"`  // rows written to Parquet
	Types   string `json:"types"` // column: type as DuckDB read them
}

// runDuck runs one DuckDB variant in a child process.
func runDuck(ctx context.Context, o options, self, root, variant, csv string) duckRun {
	d := duckRun{Variant: variant}
	dir := filepath.Join(root, "duckdb")
	if d.Err = os.MkdirAll(dir, 0o755); d.Err != nil {
		return d
	}
	logf("duckdb %s", variant)
	d.M, d.Err = runMeasured(ctx, o.tee, self, childFlag, variant, csv, filepath.Join(dir, variant+".parquet"))
	if d.Err != nil {
		return d
	}
	if d.M.ExitCode != 0 {
		d.Err = fmt.Errorf("exit %d: %s", d.M.ExitCode, tail(d.M.Stderr, 5))
		return d
	}
	if err := json.Unmarshal([]byte(lastLine(d.M.Stdout)), &d.Res); err != nil {
		d.Err = fmt.Errorf("no result from the DuckDB child: %v", err)
	}
	return d
}
