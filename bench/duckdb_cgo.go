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
	case duckTyped:
		return fmt.Sprintf("SELECT %s FROM read_csv(%s, header=true, all_varchar=true)", typedSelect, sqlString(csv)), nil
	case duckVarchar:
		return fmt.Sprintf("SELECT * FROM read_csv(%s, header=true, all_varchar=true)", sqlString(csv)), nil
	case duckAuto:
		return fmt.Sprintf("SELECT * FROM read_csv_auto(%s, header=true, ignore_errors=true)", sqlString(csv)), nil
	}
	return "", fmt.Errorf("unknown DuckDB variant %q", variant)
}

// typedSelect casts the bench CSV's columns to the types of the bench
// plan (benchPlan): long, int, date (yyyy-MM-dd or yyyy/M/d) and
// decimal(18,3) (SAP's trailing minus, thousands separators), the
// supplier id trimmed and zero-padded to 10 as the plan normalizes it.
const typedSelect = `TRY_CAST(inspection_id AS BIGINT) AS inspection_id,
  CASE WHEN regexp_full_match(trim(supplier_id), '[0-9]{1,9}') THEN lpad(trim(supplier_id), 10, '0') ELSE trim(supplier_id) END AS supplier_id,
  COALESCE(TRY_CAST(inspected_on AS DATE), TRY_STRPTIME(inspected_on, '%Y/%-m/%-d')::DATE) AS inspected_on,
  TRY_CAST(lot_qty AS BIGINT) AS lot_qty,
  TRY_CAST(defect_qty AS INTEGER) AS defect_qty,
  CASE WHEN suffix(cost, '-') THEN -TRY_CAST(replace(rtrim(cost, '-'), ',', '') AS DECIMAL(18,3))
       ELSE TRY_CAST(replace(cost, ',', '') AS DECIMAL(18,3)) END AS cost,
  result, inspector`

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
