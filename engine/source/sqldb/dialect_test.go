package sqldb

import (
	"errors"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

func TestQuoteIdent(t *testing.T) {
	cases := []struct {
		d          Dialect
		name, want string
	}{
		{Postgres, "orders", `"orders"`},
		{Postgres, `we"ird; --name`, `"we""ird; --name"`},
		{Postgres, `/* x */ select`, `"/* x */ select"`},
		{Postgres, "select", `"select"`},
		{Postgres, "주문", `"주문"`},
		{SQLite, `a"b`, `"a""b"`},
		{Oracle, `a"b`, `"a""b"`},
		{MySQL, "a`b; --", "`a``b; --`"},
		{MySQL, `we"ird`, "`we\"ird`"},
		{MySQL, "order", "`order`"},
		{SQLServer, "a]b[c", "[a]]b[c]"},
		{SQLServer, "x'; DROP TABLE t; --", "[x'; DROP TABLE t; --]"},
	}
	for _, c := range cases {
		got, err := QuoteIdent(c.d, c.name)
		if err != nil || got != c.want {
			t.Errorf("QuoteIdent(%s, %q) = %q, %v; want %q", c.d, c.name, got, err, c.want)
		}
	}
}

func TestQuoteIdentRefuses(t *testing.T) {
	long := func(n int, r string) string { return strings.Repeat(r, n) }
	cases := []struct {
		d    Dialect
		name string
		ok   bool
	}{
		{Postgres, long(63, "a"), true},
		{Postgres, long(64, "a"), false},
		{Postgres, long(21, "가"), true},  // 63 bytes
		{Postgres, long(22, "가"), false}, // 66 bytes: PostgreSQL counts bytes
		{MySQL, long(64, "가"), true},     // MySQL counts characters
		{MySQL, long(65, "a"), false},
		{SQLServer, long(128, "a"), true},
		{SQLServer, long(129, "a"), false},
		{Oracle, long(128, "a"), true},
		{Oracle, long(129, "a"), false},
		{SQLite, long(1000, "a"), true},
		{Postgres, "a\x00b", false},
		{MySQL, "\x00", false},
		{SQLite, "a\x00", false},
		{SQLServer, "a\x00", false},
		{Oracle, "", false},
		{Postgres, "\xff", false},
		{Dialect("db2"), "a", false},
	}
	for _, c := range cases {
		q, err := QuoteIdent(c.d, c.name)
		if c.ok && err != nil {
			t.Errorf("QuoteIdent(%s, %d bytes): %v", c.d, len(c.name), err)
		}
		if !c.ok && (err == nil || !errors.Is(err, ErrIdentifier) || q != "") {
			t.Errorf("QuoteIdent(%s, %q) = %q, %v; want an ErrIdentifier (never truncation)", c.d, c.name, q, err)
		}
	}
	if q, err := QuoteQualified(Postgres, "s", `t"`); err != nil || q != `"s"."t"""` {
		t.Errorf("QuoteQualified = %q, %v", q, err)
	}
}

func TestMapType(t *testing.T) {
	cases := []struct {
		d         Dialect
		typ       string
		p, s      int
		want      string
		wantNote  bool
		wantUnmap bool
	}{
		{d: Postgres, typ: "numeric(18,3)", want: "decimal(18,3)"},
		{d: Postgres, typ: "numeric", p: 18, s: 3, want: "decimal(18,3)"},
		{d: Postgres, typ: "numeric", want: "string", wantNote: true},
		{d: Postgres, typ: "numeric(50,2)", want: "string", wantNote: true},
		{d: Postgres, typ: "timestamp(6) without time zone", want: "timestamp"},
		{d: Postgres, typ: "timestamp with time zone", want: "timestamptz"},
		{d: Postgres, typ: "timestamptz", want: "timestamptz"},
		{d: Postgres, typ: "date", want: "date"},
		{d: Postgres, typ: "time(3) without time zone", want: "string", wantNote: true},
		{d: Postgres, typ: "jsonb", want: "string"},
		{d: Postgres, typ: "bytea", want: "binary"},
		{d: Postgres, typ: "uuid", want: "string"},
		{d: Postgres, typ: "integer[]", want: "string", wantNote: true},
		{d: Postgres, typ: "money", want: "decimal(19,2)", wantNote: true},
		{d: Postgres, typ: "real", want: "double", wantNote: true},
		{d: Postgres, typ: "point", wantUnmap: true},
		{d: MySQL, typ: "tinyint(1)", want: "boolean", wantNote: true},
		{d: MySQL, typ: "tinyint(4)", want: "int"},
		{d: MySQL, typ: "bigint(20) unsigned", want: "decimal(20,0)", wantNote: true},
		{d: MySQL, typ: "int(10) unsigned zerofill", want: "long", wantNote: true},
		{d: MySQL, typ: "decimal(65,30)", want: "string", wantNote: true},
		{d: MySQL, typ: "decimal", want: "decimal(10,0)"},
		{d: MySQL, typ: "bit(1)", want: "boolean"},
		{d: MySQL, typ: "timestamp(6)", want: "timestamptz", wantNote: true},
		{d: MySQL, typ: "datetime(3)", want: "timestamp"},
		{d: MySQL, typ: "longblob", want: "binary"},
		{d: MySQL, typ: "geometry", wantUnmap: true},
		{d: SQLite, typ: "VARCHAR(20)", want: "string"},
		{d: SQLite, typ: "BIGINT", want: "long"},
		{d: SQLite, typ: "NUMERIC(10,2)", want: "decimal(10,2)", wantNote: true},
		{d: SQLite, typ: "", want: "string", wantNote: true},
		{d: SQLServer, typ: "money", want: "decimal(19,4)"},
		{d: SQLServer, typ: "smallmoney", want: "decimal(10,4)"},
		{d: SQLServer, typ: "datetimeoffset(7)", want: "timestamptz", wantNote: true},
		{d: SQLServer, typ: "bit", want: "boolean"},
		{d: SQLServer, typ: "uniqueidentifier", want: "string"},
		{d: SQLServer, typ: "decimal(38,10)", want: "decimal(38,10)"},
		{d: SQLServer, typ: "rowversion", want: "binary", wantNote: true},
		{d: SQLServer, typ: "geography", wantUnmap: true},
		{d: Oracle, typ: "NUMBER", want: "string", wantNote: true},
		{d: Oracle, typ: "NUMBER", p: 0, s: 2, want: "decimal(38,2)"},
		{d: Oracle, typ: "NUMBER(*,0)", want: "decimal(38,0)"},
		{d: Oracle, typ: "NUMBER(9,0)", want: "int"},
		{d: Oracle, typ: "NUMBER", p: 18, s: 0, want: "long"},
		{d: Oracle, typ: "NUMBER(38,0)", want: "decimal(38,0)"},
		{d: Oracle, typ: "NUMBER(12,2)", want: "decimal(12,2)"},
		{d: Oracle, typ: "NUMBER(5,-2)", want: "decimal(7,0)", wantNote: true},
		{d: Oracle, typ: "DATE", want: "timestamp", wantNote: true},
		{d: Oracle, typ: "TIMESTAMP(6) WITH TIME ZONE", want: "timestamptz", wantNote: true},
		{d: Oracle, typ: "RAW(16)", want: "binary"},
		{d: Oracle, typ: "SDO_GEOMETRY", wantUnmap: true},
		{d: Dialect("db2"), typ: "int", wantUnmap: true},
	}
	for _, c := range cases {
		got, note, ok := MapType(c.d, c.typ, c.p, c.s)
		if c.wantUnmap {
			if ok || got != "" || note == "" {
				t.Errorf("MapType(%s, %q) = %q, %q, %v; want unmapped with a reason", c.d, c.typ, got, note, ok)
			}
			continue
		}
		if !ok || got != c.want || (note != "") != c.wantNote {
			t.Errorf("MapType(%s, %q, %d, %d) = %q, %q, %v; want %q (note: %v)", c.d, c.typ, c.p, c.s, got, note, ok, c.want, c.wantNote)
		}
		if _, err := plan.ParseType(got); err != nil {
			t.Errorf("MapType(%s, %q) = %q: not a plan type: %v", c.d, c.typ, got, err)
		}
	}
}

func TestText(t *testing.T) {
	cases := []struct {
		typ  string
		v    any
		want string
	}{
		{"decimal(10,3)", "1.5", "1.500"},
		{"decimal(10,0)", int64(7), "7"},
		{"decimal(10,2)", 2.5, "2.50"},
		{"decimal(10,2)", "1.234", "1.234"}, // more digits than the scale: left for the caster to refuse
		{"boolean", int64(1), "true"},
		{"boolean", int64(5), "5"}, // not silently true
		{"boolean", "0", "false"},
		{"double", "1e300", "1" + strings.Repeat("0", 300)},
		{"double", 0.1, "0.1"},
		{"timestamp", "2024-01-02 03:04:05", "2024-01-02T03:04:05.000000"},
		{"timestamptz", "2024-01-02 03:04:05.25", "2024-01-02T03:04:05.250000Z"},
		{"timestamptz", "2024-01-02T03:04:05+02:00", "2024-01-02T01:04:05.000000Z"},
		{"timestamp", "0000-00-00 00:00:00", "0000-00-00 00:00:00"}, // MySQL zero date: the caster refuses it
	}
	for _, c := range cases {
		if got := Text(c.typ, c.v); got != c.want {
			t.Errorf("Text(%s, %#v) = %q, want %q", c.typ, c.v, got, c.want)
		}
	}
}

func TestNewRefusesBadNames(t *testing.T) {
	if _, err := New(Postgres, nil, []Table{{"s", "a\x00"}}, nil); !errors.Is(err, ErrIdentifier) {
		t.Errorf("New with a NUL table name: %v", err)
	}
	if _, err := New(Postgres, nil, []Table{{"s", "t"}}, map[string]ReadRange{"s.t": {Column: strings.Repeat("x", 64)}}); !errors.Is(err, ErrIdentifier) {
		t.Errorf("New with a too long watermark column: %v", err)
	}
	if _, err := New(Dialect("db2"), nil, nil, nil); err == nil {
		t.Error("New(db2) succeeded without a driver")
	}
	if _, err := New(Postgres, nil, []Table{{"a.b", "c"}, {"a", "b.c"}}, nil); err == nil {
		t.Error("New accepted two tables with the same unit name")
	}
}
