package sqldb

// Value conversion of SQL Server and Oracle rows, fed the Go values the
// drivers return (read from their source: go-mssqldb's types.go decodes
// decimal, numeric, money and smallmoney to []byte decimal text,
// datetimeoffset to a time.Time in its own offset, time to a time.Time on
// 0001-01-01, uniqueidentifier to 16 bytes in the server's byte order;
// go-ora's parameter.go decodes NUMBER to the text of its Number,
// DATE/TIMESTAMP to time.Time, CLOB to string, BLOB/RAW to []byte,
// BINARY_FLOAT/DOUBLE to float64). No server runs here: these are unit
// tests of Lima's conversion code. Expected values are computed in the
// test (math/big, time) independently of the code under test.

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	go_ora "github.com/sijms/go-ora/v2"
)

// convertOne runs a single value through the reader's row conversion.
func convertOne(t *testing.T, d Dialect, c ColumnInfo, v any) (string, bool) {
	t.Helper()
	r := &Reader{d: d, unit: "s.t", cols: []ColumnInfo{c}}
	var cell any = v
	row := r.convert([]any{&cell})
	return row.Values[0], row.Nulls != nil && row.Nulls[0]
}

// mssqlDecimalBytes is the text go-mssqldb returns for a decimal of the
// given scale: the unscaled integer with a point scale digits from the
// right and a leading 0 ("-0.0500"); built here with math/big.
func mssqlDecimalBytes(unscaled *big.Int, scale int) []byte {
	return []byte(new(big.Rat).SetFrac(unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale))
}

// sameDecimal reports whether text is exactly unscaled/10^scale.
func sameDecimal(text string, unscaled *big.Int, scale int) bool {
	got, ok := new(big.Rat).SetString(text)
	want := new(big.Rat).SetFrac(unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	return ok && got.Cmp(want) == 0
}

func TestSQLServerDecimalAndMoneyValuesExact(t *testing.T) {
	rng := rand.New(rand.NewSource(711))
	types := []struct {
		dbType string
		p, s   int
	}{{"decimal(38,10)", 38, 10}, {"numeric(18,3)", 18, 3}, {"decimal(9,0)", 9, 0}, {"money", 19, 4}, {"smallmoney", 10, 4}}
	for _, ty := range types {
		pt, _, ok := MapType(SQLServer, ty.dbType, 0, 0)
		if !ok {
			t.Fatalf("MapType(%s) unmapped", ty.dbType)
		}
		if want := fmt.Sprintf("decimal(%d,%d)", ty.p, ty.s); pt != want {
			t.Fatalf("MapType(%s) = %s, want %s", ty.dbType, pt, want)
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(ty.p)), nil)
		if ty.dbType == "money" {
			limit = big.NewInt(math.MaxInt64) // money is an int64 of 1/10000
		}
		if ty.dbType == "smallmoney" {
			limit = big.NewInt(math.MaxInt32)
		}
		values := []*big.Int{big.NewInt(0), big.NewInt(-1), new(big.Int).Sub(limit, big.NewInt(1)), new(big.Int).Neg(new(big.Int).Sub(limit, big.NewInt(1)))}
		for range 200 {
			v := new(big.Int).Rand(rng, limit)
			if rng.Intn(2) == 0 {
				v.Neg(v)
			}
			values = append(values, v)
		}
		c := ColumnInfo{Name: "x", DBType: ty.dbType, PlanType: pt}
		for _, v := range values {
			in := mssqlDecimalBytes(v, ty.s)
			got, null := convertOne(t, SQLServer, c, in)
			if null || !sameDecimal(got, v, ty.s) {
				t.Fatalf("%s: driver text %q became %q (null %v)", ty.dbType, in, got, null)
			}
			if _, frac, _ := strings.Cut(got, "."); len(frac) != ty.s {
				t.Fatalf("%s: %q does not carry the scale %d", ty.dbType, got, ty.s)
			}
		}
	}
}

func TestSQLServerTimeValues(t *testing.T) {
	// datetimeoffset: go-mssqldb gives the wall clock in the value's own
	// offset (decodeDateTimeOffset uses time.FixedZone).
	seoul := time.FixedZone("", 9*3600)
	off := time.Date(2026, 3, 1, 8, 30, 15, 123456700, seoul)
	u := off.UTC()
	want := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), u.Nanosecond()/1000)
	if got, _ := convertOne(t, SQLServer, ColumnInfo{Name: "o", DBType: "datetimeoffset(7)", PlanType: "timestamptz"}, off); got != want {
		t.Errorf("datetimeoffset %v: %q, want %q", off, got, want)
	}
	// The reader selects datetimeoffset through CONVERT(…, 127): the
	// driver then gives the ISO text with 7 fraction digits and Z.
	if got, _ := convertOne(t, SQLServer, ColumnInfo{Name: "o", DBType: "datetimeoffset(7)", PlanType: "timestamptz"}, "2026-02-28T23:30:15.1234567Z"); got != want {
		t.Errorf("datetimeoffset as CONVERT text: %q, want %q", got, want)
	}
	// datetime2: wall clock in the DSN's location (UTC by default).
	dt := time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	if got, _ := convertOne(t, SQLServer, ColumnInfo{Name: "d", DBType: "datetime2(6)", PlanType: "timestamp"}, dt); got != "1999-12-31T23:59:59.999999" {
		t.Errorf("datetime2: %q", got)
	}
	// date: midnight of the day.
	if got, _ := convertOne(t, SQLServer, ColumnInfo{Name: "d", DBType: "date", PlanType: "date"}, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)); got != "0001-01-01" {
		t.Errorf("date: %q", got)
	}
	// time(7): a time.Time on 0001-01-01 (decodeTime); every digit kept.
	tm := time.Date(1, 1, 1, 7, 8, 9, 123456700, time.UTC)
	if got, _ := convertOne(t, SQLServer, ColumnInfo{Name: "t", DBType: "time(7)", PlanType: "string"}, tm); got != "07:08:09.1234567" {
		t.Errorf("time(7): %q", got)
	}
	if got, _ := convertOne(t, SQLServer, ColumnInfo{Name: "t", DBType: "time(0)", PlanType: "string"}, time.Date(1, 1, 1, 23, 0, 0, 0, time.UTC)); got != "23:00:00" {
		t.Errorf("time(0): %q", got)
	}
}

func TestSQLServerOtherValues(t *testing.T) {
	// uniqueidentifier 6F9619FF-8B86-D011-B42D-00C04FC964FF travels with
	// its first three groups little-endian.
	wire := []byte{0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}
	uc := ColumnInfo{Name: "u", DBType: "uniqueidentifier", PlanType: "string"}
	const guid = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
	if got, _ := convertOne(t, SQLServer, uc, wire); got != guid {
		t.Errorf("uniqueidentifier bytes: %q", got)
	}
	var u mssql.UniqueIdentifier
	if err := u.Scan(guid); err != nil {
		t.Fatal(err)
	}
	if got, _ := convertOne(t, SQLServer, uc, u); got != guid {
		t.Errorf("mssql.UniqueIdentifier: %q", got)
	}
	if got, _ := convertOne(t, SQLServer, uc, guid); got != guid { // CONVERT(CHAR(36), …)
		t.Errorf("uniqueidentifier text: %q", got)
	}
	cases := []struct {
		c    ColumnInfo
		v    any
		want string
	}{
		{ColumnInfo{DBType: "bit", PlanType: "boolean"}, true, "true"},
		{ColumnInfo{DBType: "bit", PlanType: "boolean"}, false, "false"},
		{ColumnInfo{DBType: "tinyint", PlanType: "int"}, int64(255), "255"},
		{ColumnInfo{DBType: "bigint", PlanType: "long"}, int64(math.MinInt64), strconv.FormatInt(math.MinInt64, 10)},
		{ColumnInfo{DBType: "real", PlanType: "double"}, float64(float32(1.1)), strconv.FormatFloat(float64(float32(1.1)), 'f', -1, 64)},
		{ColumnInfo{DBType: "float", PlanType: "double"}, 1e300, "1" + strings.Repeat("0", 300)},
		{ColumnInfo{DBType: "nvarchar", PlanType: "string"}, "서울 ']; --", "서울 ']; --"},
		{ColumnInfo{DBType: "xml", PlanType: "string"}, "<a b=\"1\"/>", "<a b=\"1\"/>"},
		{ColumnInfo{DBType: "varbinary", PlanType: "binary"}, []byte{0, 0xFF, 'x'}, "\x00\xFFx"},
		{ColumnInfo{DBType: "image", PlanType: "binary"}, []byte{}, ""},
	}
	for _, c := range cases {
		if got, null := convertOne(t, SQLServer, c.c, c.v); got != c.want || null {
			t.Errorf("%s %#v: %q (null %v), want %q", c.c.DBType, c.v, got, null, c.want)
		}
	}
	if _, null := convertOne(t, SQLServer, ColumnInfo{DBType: "money", PlanType: "decimal(19,4)"}, nil); !null {
		t.Error("NULL money is not a null cell")
	}
}

// oraNumber is the text go-ora returns for a NUMBER: the value encoded in
// Oracle's wire format and decoded again by the driver's own Number.
func oraNumber(t *testing.T, s string) string {
	t.Helper()
	n, err := go_ora.NewNumberFromString(s)
	if err != nil {
		t.Fatalf("NewNumberFromString(%s): %v", s, err)
	}
	out, err := n.String()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOracleNumberValuesExact(t *testing.T) {
	rng := rand.New(rand.NewSource(35))
	for _, ty := range []struct{ p, s int }{{38, 9}, {12, 2}, {18, 0}, {9, 0}, {38, 0}, {10, 10}} {
		pt, _, ok := MapType(Oracle, fmt.Sprintf("number(%d,%d)", ty.p, ty.s), 0, 0)
		if !ok {
			t.Fatalf("NUMBER(%d,%d) unmapped", ty.p, ty.s)
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(ty.p)), nil)
		c := ColumnInfo{Name: "n", DBType: fmt.Sprintf("number(%d,%d)", ty.p, ty.s), PlanType: pt}
		values := []*big.Int{big.NewInt(0), big.NewInt(5), big.NewInt(-5), new(big.Int).Sub(limit, big.NewInt(1))}
		for range 200 {
			v := new(big.Int).Rand(rng, limit)
			if rng.Intn(2) == 0 {
				v.Neg(v)
			}
			values = append(values, v)
		}
		for _, v := range values {
			src := new(big.Rat).SetFrac(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(ty.s)), nil)).FloatString(ty.s)
			in := oraNumber(t, src)
			got, null := convertOne(t, Oracle, c, in)
			if null || !sameDecimal(got, v, ty.s) {
				t.Fatalf("NUMBER(%d,%d) %s: driver text %q became %q", ty.p, ty.s, src, in, got)
			}
			if sc, ok := decimalScale(pt); ok {
				if _, frac, _ := strings.Cut(got, "."); len(frac) != sc {
					t.Fatalf("NUMBER(%d,%d): %q does not carry the scale of %s", ty.p, ty.s, got, pt)
				}
			} else if strings.Contains(got, ".") {
				t.Fatalf("NUMBER(%d,%d) as %s: %q has a fraction", ty.p, ty.s, pt, got)
			}
		}
	}
	// Unconstrained NUMBER is read through TO_CHAR, which drops the
	// leading zero; the text is kept exact with the zero restored.
	free := ColumnInfo{Name: "n", DBType: "number", PlanType: "string"}
	for in, want := range map[string]string{".5": "0.5", "-.000001": "-0.000001", "123.45": "123.45", "-7": "-7",
		"12345678901234567890123456789012345678": "12345678901234567890123456789012345678"} {
		if got, _ := convertOne(t, Oracle, free, in); got != want {
			t.Errorf("TO_CHAR text %q: %q, want %q", in, got, want)
		}
	}
}

func TestOracleOtherValues(t *testing.T) {
	// DATE and TIMESTAMP: go-ora gives the wall clock in the server's zone.
	zone := time.FixedZone("", -5*3600)
	d := time.Date(2026, 7, 4, 13, 14, 15, 0, zone)
	if got, _ := convertOne(t, Oracle, ColumnInfo{DBType: "date", PlanType: "timestamp"}, d); got != "2026-07-04T13:14:15.000000" {
		t.Errorf("DATE: %q", got)
	}
	ts := time.Date(2026, 7, 4, 13, 14, 15, 987654000, zone)
	if got, _ := convertOne(t, Oracle, ColumnInfo{DBType: "timestamp(6)", PlanType: "timestamp"}, ts); got != "2026-07-04T13:14:15.987654" {
		t.Errorf("TIMESTAMP: %q", got)
	}
	// TIMESTAMP WITH TIME ZONE is selected as TO_CHAR(SYS_EXTRACT_UTC(…)).
	if got, _ := convertOne(t, Oracle, ColumnInfo{DBType: "timestamp(6) with time zone", PlanType: "timestamptz"}, "2026-07-04T18:14:15.987654Z"); got != "2026-07-04T18:14:15.987654Z" {
		t.Errorf("TIMESTAMP WITH TIME ZONE: %q", got)
	}
	blob := []byte{0, 1, 2, 0xFE, 0xFF}
	cases := []struct {
		c    ColumnInfo
		v    any
		want string
	}{
		{ColumnInfo{DBType: "clob", PlanType: "string"}, strings.Repeat("가", 5000), strings.Repeat("가", 5000)},
		{ColumnInfo{DBType: "nclob", PlanType: "string"}, ".5 is text here", ".5 is text here"},
		{ColumnInfo{DBType: "blob", PlanType: "binary"}, blob, string(blob)},
		{ColumnInfo{DBType: "raw", PlanType: "binary"}, []byte(".5"), ".5"},
		{ColumnInfo{DBType: "binary_double", PlanType: "double"}, 0.1, "0.1"},
		{ColumnInfo{DBType: "binary_float", PlanType: "double"}, float64(float32(0.1)), strconv.FormatFloat(float64(float32(0.1)), 'f', -1, 64)},
		{ColumnInfo{DBType: "float(126)", PlanType: "string"}, oraNumber(t, "0.1234567890123456789012345678901234567"), "0.1234567890123456789012345678901234567"},
		{ColumnInfo{DBType: "interval day(2) to second(6)", PlanType: "string"}, "+02 03:04:05.000000", "+02 03:04:05.000000"},
	}
	for _, c := range cases {
		if got, null := convertOne(t, Oracle, c.c, c.v); got != c.want || null {
			t.Errorf("%s: %q (null %v), want %q", c.c.DBType, got, null, c.want)
		}
	}
}

// TestCatalogTypesToPlanTypes: the catalog's columns as discovery reads
// them (INFORMATION_SCHEMA.COLUMNS; ALL_TAB_COLUMNS with NULL precision
// and scale) end in the plan types the README documents.
func TestCatalogTypesToPlanTypes(t *testing.T) {
	n := func(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: true} }
	null := sql.NullInt64{}
	ora := []struct {
		typ        string
		p, s       sql.NullInt64
		want, spel string
		note       bool
	}{
		{"NUMBER", null, null, "string", "number", true},              // any scale: exact text
		{"NUMBER", null, n(0), "decimal(38,0)", "number(*,0)", false}, // INTEGER
		{"NUMBER", n(10), n(2), "decimal(10,2)", "number(10,2)", false},
		{"NUMBER", n(9), n(0), "int", "number(9,0)", false},
		{"NUMBER", n(18), n(0), "long", "number(18,0)", false},
		{"NUMBER", n(19), n(0), "decimal(19,0)", "number(19,0)", false},
		{"FLOAT", n(126), null, "string", "float(126)", true},
		{"BINARY_DOUBLE", null, null, "double", "binary_double", false},
		{"DATE", null, null, "timestamp", "date", true},
		{"TIMESTAMP(9)", null, n(9), "timestamp", "timestamp(9)", true},
		{"TIMESTAMP(6) WITH TIME ZONE", null, n(6), "timestamptz", "timestamp(6) with time zone", true},
		{"TIMESTAMP(6) WITH LOCAL TIME ZONE", null, n(6), "timestamptz", "timestamp(6) with local time zone", true},
		{"CLOB", null, null, "string", "clob", false},
		{"BLOB", null, null, "binary", "blob", false},
		{"RAW", null, null, "binary", "raw", false},
		{"VARCHAR2", null, null, "string", "varchar2", false},
	}
	for _, c := range ora {
		spel, p, s := oracleType(c.typ, c.p, c.s)
		got, note, ok := MapType(Oracle, spel, p, s)
		if spel != c.spel || !ok || got != c.want || (note != "") != c.note {
			t.Errorf("Oracle %s(%v,%v): spelled %q → %q %q %v; want %q → %q (note %v)", c.typ, c.p, c.s, spel, got, note, ok, c.spel, c.want, c.note)
		}
	}
	if spel, p, s := oracleType("SDO_GEOMETRY", null, null); func() bool { _, _, ok := MapType(Oracle, spel, p, s); return ok }() {
		t.Error("SDO_GEOMETRY mapped")
	}
	ms := []struct {
		typ       string
		p, s, dtp sql.NullInt64
		want      string
		note      bool
	}{
		{"decimal", n(18), n(3), null, "decimal(18,3)", false},
		{"numeric", n(38), n(38), null, "decimal(38,38)", false},
		{"money", n(19), n(4), null, "decimal(19,4)", false},
		{"smallmoney", n(10), n(4), null, "decimal(10,4)", false},
		{"datetime2", null, null, n(7), "timestamp", true},
		{"datetime2", null, null, n(3), "timestamp", false},
		{"datetime", null, null, n(3), "timestamp", false},
		{"smalldatetime", null, null, n(0), "timestamp", false},
		{"datetimeoffset", null, null, n(7), "timestamptz", true},
		{"date", null, null, n(0), "date", false},
		{"time", null, null, n(7), "string", true},
		{"bit", null, null, null, "boolean", false},
		{"uniqueidentifier", null, null, null, "string", false},
		{"nvarchar", null, null, null, "string", false},
		{"varchar", null, null, null, "string", false},
		{"text", null, null, null, "string", false},
		{"varbinary", null, null, null, "binary", false},
		{"image", null, null, null, "binary", false},
		{"xml", null, null, null, "string", false},
	}
	for _, c := range ms {
		spel, p, s := sqlServerType(c.typ, c.p, c.s, c.dtp)
		got, note, ok := MapType(SQLServer, spel, p, s)
		if !ok || got != c.want || (note != "") != c.note {
			t.Errorf("SQL Server %s: spelled %q → %q %q %v; want %q (note %v)", c.typ, spel, got, note, ok, c.want, c.note)
		}
	}
	for _, typ := range []string{"geography", "hierarchyid", "sql_variant"} {
		if got, note, ok := MapType(SQLServer, typ, 0, 0); ok || got != "" || !strings.Contains(note, "no lossless Lima type") {
			t.Errorf("SQL Server %s: %q %q %v; want a gate 3 finding", typ, got, note, ok)
		}
	}
}

// TestSQLServerOracleSelectExpressions: uniqueidentifier is converted to
// its text in SQL (the driver's bytes depend on a DSN option), Oracle
// FLOAT and unconstrained NUMBER through TO_CHAR, time and rowversion are
// left to the driver.
func TestSQLServerOracleSelectExpressions(t *testing.T) {
	cases := []struct {
		d    Dialect
		c    ColumnInfo
		want string
	}{
		{SQLServer, ColumnInfo{Name: "g]", DBType: "uniqueidentifier", PlanType: "string"}, "CONVERT(CHAR(36), [g]]])"},
		{SQLServer, ColumnInfo{Name: "t", DBType: "time(7)", PlanType: "string"}, "[t]"},
		{SQLServer, ColumnInfo{Name: "rv", DBType: "timestamp", PlanType: "binary"}, "[rv]"},
		{Oracle, ColumnInfo{Name: "F", DBType: "float(126)", PlanType: "string"}, `TO_CHAR("F")`},
		{Oracle, ColumnInfo{Name: "N", DBType: "number", PlanType: "string"}, `TO_CHAR("N")`},
		{Oracle, ColumnInfo{Name: "N", DBType: "number(12,2)", PlanType: "decimal(12,2)"}, `"N"`},
		{Oracle, ColumnInfo{Name: "L", DBType: "timestamp(6) with local time zone", PlanType: "timestamptz"},
			`TO_CHAR(SYS_EXTRACT_UTC("L"), 'YYYY-MM-DD"T"HH24:MI:SS.FF6"Z"')`},
	}
	for _, c := range cases {
		r := &Reader{d: c.d}
		if got, err := r.selectExpr(c.c); err != nil || got != c.want {
			t.Errorf("%s %s: %s %v, want %s", c.d, c.c.DBType, got, err, c.want)
		}
	}
}

func TestOracleDiscoveryBindsSchemas(t *testing.T) {
	cond, args := oracleOwnerFilter("OWNER", []string{`A"B' OR 1=1 --`, "HR"})
	if cond != "OWNER IN (:1, :2)" || len(args) != 2 || args[0] != `A"B' OR 1=1 --` {
		t.Errorf("owner filter: %s %v", cond, args)
	}
	if q := oracleTablesQuery(cond); !strings.Contains(q, "FROM ALL_TABLES WHERE OWNER IN (:1, :2) AND") || strings.Contains(q, "HR") {
		t.Errorf("tables query: %s", q)
	}
	if cond, args := oracleOwnerFilter("OWNER", nil); args != nil || !strings.Contains(cond, "ORACLE_MAINTAINED = 'N'") {
		t.Errorf("no schemas: %s %v", cond, args)
	}
}

func TestSQLServerSnapshotRefusal(t *testing.T) {
	err := snapshotFix("sales]; DROP DATABASE x; --")
	if !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("not ErrNoSnapshot: %v", err)
	}
	for _, want := range []string{"ALLOW_SNAPSHOT_ISOLATION OFF", "ALTER DATABASE [sales]]; DROP DATABASE x; --] SET ALLOW_SNAPSHOT_ISOLATION ON", "snapshot_fallback: serializable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	s, err := New(SQLServer, nil, []Table{{"dbo", "t"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetSnapshotFallback("read_uncommitted"); err == nil {
		t.Error("an unknown fallback was accepted")
	}
	if err := s.SetSnapshotFallback(SnapshotSerializable); err != nil || s.fallback != SnapshotSerializable {
		t.Errorf("serializable fallback: %v", err)
	}
}

func TestOpenSQLServerOracleParsesDSN(t *testing.T) {
	for _, c := range []struct {
		d   Dialect
		dsn string
		ok  bool
	}{
		{SQLServer, "sqlserver://lima:pw@127.0.0.1:1433?database=erp", true},
		{Oracle, "oracle://lima:pw@127.0.0.1:1521/ORCLPDB1", true},
		{SQLServer, "sqlserver://lima:pw@127.0.0.1:1433?database=erp&encrypt=maybe-not", false},
	} {
		db, err := Open(c.d, c.dsn)
		if db != nil {
			db.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("Open(%s, %q): %v", c.d, c.dsn, err)
		}
	}
}
