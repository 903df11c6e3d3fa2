package sqldb

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// hostileReader is a reader of dialect d over a table whose schema, table
// and column names are hostile: quotes of every dialect, a semicolon with
// a statement after it, comment markers, reserved words, non-ASCII and
// the longest name the dialect allows. No server is needed: the generated
// SQL is compared with SQL written by hand.
func hostileReader(d Dialect, schema, table string) *Reader {
	long := strings.Repeat("가", 128) // 128 characters: the SQL Server and Oracle limit
	return &Reader{d: d, unit: "t", info: TableInfo{Schema: schema, Name: table, PrimaryKey: []string{"id"}},
		cols: []ColumnInfo{
			{Name: "id", DBType: "bigint", PlanType: "long"},
			{Name: `we"ird]`, DBType: "decimal(18,3)", PlanType: "decimal(18,3)"},
			{Name: "日本語", DBType: map[Dialect]string{SQLServer: "datetimeoffset(7)", Oracle: "timestamp(6) with time zone"}[d], PlanType: "timestamptz"},
			{Name: "x; DROP TABLE t; --", DBType: "nvarchar", PlanType: "string"},
			{Name: "/* c */", DBType: "number", PlanType: "string"},
			{Name: long, DBType: "int", PlanType: "int"},
			{Name: "order", DBType: "datetime2", PlanType: "timestamp"},
		},
		rng: &ReadRange{Column: "order", From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}
}

func TestSQLServerGeneratedSQL(t *testing.T) {
	r := hostileReader(SQLServer, "a]b; --", "select")
	long := "[" + strings.Repeat("가", 128) + "]"
	from := ` FROM [a]]b; --].[select] WHERE [order] >= @p1`
	q, args, err := r.Query()
	want := `SELECT [id], [we"ird]]], CONVERT(VARCHAR(40), SWITCHOFFSET([日本語], 0), 127), [x; DROP TABLE t; --], [/* c */], ` + long + `, [order]` +
		from + ` ORDER BY [order], [id]`
	if err != nil || q != want || !reflect.DeepEqual(args, []any{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}) {
		t.Fatalf("Query:\n got %s %v %v\nwant %s", q, args, err, want)
	}
	tq, _, err := r.TotalsQuery([]string{"id", `we"ird]`, strings.Repeat("가", 128)})
	wantT := `SELECT COUNT_BIG(*), CAST(SUM(CAST([id] AS DECIMAL(38,0))) AS VARCHAR(50)), CAST(SUM(CAST([we"ird]]] AS DECIMAL(38,3))) AS VARCHAR(50)), ` +
		`CAST(SUM(CAST(` + long + ` AS DECIMAL(38,0))) AS VARCHAR(50))` + from
	if err != nil || tq != wantT {
		t.Fatalf("TotalsQuery:\n got %s %v\nwant %s", tq, err, wantT)
	}
	if p := probeQuery(SQLServer, "[id]", "[a]]b; --].[select]"); p != "SELECT TOP 1 [id] FROM [a]]b; --].[select]" {
		t.Fatalf("probe: %s", p)
	}
	// An identifier one character too long is refused, never truncated.
	r.cols[5].Name = strings.Repeat("가", 129)
	if _, _, err := r.Query(); !errors.Is(err, ErrIdentifier) {
		t.Fatalf("a 129-character name: %v", err)
	}
}

func TestOracleGeneratedSQL(t *testing.T) {
	r := hostileReader(Oracle, `A"B`, "SELECT")
	long := `"` + strings.Repeat("가", 128) + `"`
	from := ` FROM "A""B"."SELECT" WHERE "order" >= :1`
	q, _, err := r.Query()
	want := `SELECT "id", "we""ird]", TO_CHAR(SYS_EXTRACT_UTC("日本語"), 'YYYY-MM-DD"T"HH24:MI:SS.FF6"Z"'), "x; DROP TABLE t; --", TO_CHAR("/* c */"), ` +
		long + `, "order"` + from + ` ORDER BY "order", "id"`
	if err != nil || q != want {
		t.Fatalf("Query:\n got %s %v\nwant %s", q, err, want)
	}
	tq, _, err := r.TotalsQuery([]string{`we"ird]`})
	if wantT := `SELECT count(*), TO_CHAR(SUM("we""ird]"))` + from; err != nil || tq != wantT {
		t.Fatalf("TotalsQuery:\n got %s %v\nwant %s", tq, err, wantT)
	}
	if p := probeQuery(Oracle, `"id"`, `"A""B"."SELECT"`); p != `SELECT "id" FROM "A""B"."SELECT" FETCH FIRST 1 ROWS ONLY` {
		t.Fatalf("probe: %s", p)
	}
	// Upsert order: keys first, then the watermark; the incremental bound
	// is a bind parameter, never spliced into the SQL.
	r.rng = &ReadRange{Column: "order", After: "2026-01-01T00:00:00' OR 1=1 --", OrderKeys: []string{"x; DROP TABLE t; --"}}
	q, args, err := r.Query()
	if err != nil || !strings.HasSuffix(q, `WHERE "order" > :1 ORDER BY "x; DROP TABLE t; --", "order", "id"`) || args[0] != "2026-01-01T00:00:00' OR 1=1 --" {
		t.Fatalf("keyed query: %s %v %v", q, args, err)
	}
	r.cols[0].Name = ""
	if _, _, err := r.Query(); !errors.Is(err, ErrIdentifier) {
		t.Fatalf("an empty name: %v", err)
	}
}
