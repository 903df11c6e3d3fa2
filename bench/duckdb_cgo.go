//go:build cgo

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// duckAvailable: this build links DuckDB (cgo).
const duckAvailable = true

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// duckQuery is the SELECT each variant copies to Parquet.
func duckQuery(variant, csv string) (string, error) {
	switch variant {
	case duckVarchar:
		return fmt.Sprintf("SELECT * FROM read_csv(%s, header=true, all_varchar=true)", sqlString(csv)), nil
	case duckAuto:
		return fmt.Sprintf("SELECT * FROM read_csv_auto(%s, header=true, ignore_errors=true)", sqlString(csv)), nil
	}
	return "", fmt.Errorf("unknown DuckDB variant %q", variant)
}

// duckChild is the body of the hidden -duckdb-child mode: copy csv to a
// zstd Parquet file at out with DuckDB and print a duckResult.
func duckChild(variant, csv, out string) error {
	q, err := duckQuery(variant, csv)
	if err != nil {
		return err
	}
	os.Remove(out)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	var r duckResult
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&r.Version); err != nil {
		return err
	}
	res, err := db.ExecContext(ctx, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION zstd)", q, sqlString(out)))
	if err != nil {
		return err
	}
	if r.Rows, err = res.RowsAffected(); err != nil {
		return err
	}
	// The types DuckDB gave the columns, from the Parquet footer (cheap).
	rows, err := db.QueryContext(ctx, "DESCRIBE SELECT * FROM read_parquet("+sqlString(out)+")")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var types []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		types = append(types, vals[0].String+" "+vals[1].String)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	r.Types = strings.Join(types, ", ")
	return json.NewEncoder(os.Stdout).Encode(r)
}
