package sqldb

import (
	"fmt"
	"strconv"
	"strings"
)

// Finding is a column Lima cannot read without loss: it is left out of the
// extraction and reported, never a panic.
type Finding struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	DBType string `json:"db_type"`
	Reason string `json:"reason"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s.%s (%s): %s", f.Table, f.Column, f.DBType, f.Reason)
}

// maxDecimal is plan.MaxDecimalPrecision.
const maxDecimal = 38

// MapType maps a database type of dialect d to a Lima plan type string
// (plan.ParseType): string, int, long, double, decimal(p,s), date,
// timestamp, timestamptz, boolean, binary.
//
// dbType is the type as the catalog spells it; parameters in it
// ("numeric(18,3)", "bigint(20) unsigned", "NUMBER(*,0)") win over
// precision and scale, which are the catalog's numeric precision and scale
// when the type name has none (precision <= 0: not declared).
//
// note explains a mapping that needs the reader's attention (a widening, a
// convention); ok is false when Lima has no lossless type: then planType is
// empty and note is the reason (report it as a Finding).
//
// Decisions: a numeric without declared precision (PostgreSQL numeric,
// Oracle NUMBER) and any decimal wider than 38 digits map to string — the
// exact text is kept, never rounded to a float or an arbitrary scale; time
// of day and intervals map to string; arrays map to string (JSON text);
// MySQL tinyint(1) maps to boolean (values other than 0/1 then become row
// exceptions, not silent truths); unsigned bigint maps to decimal(20,0).
func MapType(d Dialect, dbType string, precision, scale int) (planType, note string, ok bool) {
	base, params, rest := splitType(dbType)
	p, s, hasP := precision, scale, precision > 0
	star := false
	if len(params) > 0 {
		if params[0] == "*" {
			star, hasP, p = true, false, 0
		} else if n, err := strconv.Atoi(params[0]); err == nil {
			p, hasP = n, true
		}
		s = 0
		if len(params) > 1 {
			if n, err := strconv.Atoi(params[1]); err == nil {
				s = n
			}
		}
	}
	full := strings.TrimSpace(base + " " + strings.ReplaceAll(rest, "unsigned", ""))
	full = strings.Join(strings.Fields(strings.ReplaceAll(full, "zerofill", "")), " ")
	unsigned := strings.Contains(rest, "unsigned")
	switch d {
	case Postgres:
		return mapPostgres(base, full, p, s, hasP)
	case MySQL:
		return mapMySQL(base, params, p, s, hasP, unsigned)
	case SQLite:
		return mapSQLite(base, p, s, hasP)
	case SQLServer:
		return mapSQLServer(base, p, s, hasP)
	case Oracle:
		return mapOracle(full, p, s, hasP, star)
	}
	return "", fmt.Sprintf("unknown dialect %q", d), false
}

// splitType lowercases "Base(a,b) rest" into its parts.
func splitType(t string) (base string, params []string, rest string) {
	t = strings.ToLower(strings.TrimSpace(t))
	i := strings.IndexByte(t, '(')
	if i < 0 {
		return t, nil, ""
	}
	j := strings.IndexByte(t[i:], ')')
	if j < 0 {
		return t, nil, ""
	}
	for _, p := range strings.Split(t[i+1:i+j], ",") {
		params = append(params, strings.TrimSpace(p))
	}
	return strings.TrimSpace(t[:i]), params, strings.TrimSpace(t[i+j+1:])
}

func decimalType(p, s int, hasP bool, what string) (string, string, bool) {
	switch {
	case !hasP:
		return "string", what + " without a declared precision: kept as its exact text (string); declare decimal(p,s) after profiling", true
	case p > maxDecimal:
		return "string", fmt.Sprintf("%s(%d,%d) exceeds Lima's 38 digits: kept as its exact text (string)", what, p, s), true
	case s < 0:
		if p-s > maxDecimal {
			return "string", fmt.Sprintf("%s(%d,%d) exceeds Lima's 38 digits: kept as its exact text (string)", what, p, s), true
		}
		return fmt.Sprintf("decimal(%d,0)", p-s), "negative scale widened to an integer decimal", true
	case s > p:
		if s > maxDecimal {
			return "string", fmt.Sprintf("%s(%d,%d): scale beyond 38 digits, kept as text", what, p, s), true
		}
		return fmt.Sprintf("decimal(%d,%d)", s, s), "scale above precision widened", true
	}
	return fmt.Sprintf("decimal(%d,%d)", p, s), "", true
}

func unmapped(d Dialect, t string) (string, string, bool) {
	return "", fmt.Sprintf("no lossless Lima type for %s type %q; cast it in a view (to text or a number) and read the view", d, t), false
}

func mapPostgres(base, full string, p, s int, hasP bool) (string, string, bool) {
	if strings.HasSuffix(full, "[]") || strings.HasPrefix(base, "_") || full == "array" {
		return "string", "array read as JSON text", true
	}
	switch full {
	case "smallint", "int2", "integer", "int", "int4", "serial", "serial4", "smallserial", "serial2":
		return "int", "", true
	case "bigint", "int8", "bigserial", "serial8", "oid":
		return "long", "", true
	case "real", "float4":
		return "double", "float4 widened to double", true
	case "double precision", "float8", "float":
		return "double", "", true
	case "numeric", "decimal":
		return decimalType(p, s, hasP, "numeric")
	case "money":
		return "decimal(19,2)", "money read through numeric (assumes lc_monetary with 2 fraction digits)", true
	case "text", "varchar", "character varying", "char", "character", "bpchar", "name", "citext",
		"uuid", "json", "jsonb", "xml", "inet", "cidr", "macaddr", "macaddr8", "bit", "bit varying", "varbit",
		"tsvector", "tsquery":
		return "string", "", true
	case "time", "time without time zone", "timetz", "time with time zone":
		return "string", "time of day read as text HH:MM:SS[.ffffff]", true
	case "interval":
		return "string", "interval read as PostgreSQL text", true
	case "date":
		return "date", "", true
	case "timestamp", "timestamp without time zone":
		return "timestamp", "", true
	case "timestamptz", "timestamp with time zone":
		return "timestamptz", "", true
	case "boolean", "bool":
		return "boolean", "", true
	case "bytea":
		return "binary", "", true
	}
	return unmapped(Postgres, full)
}

func mapMySQL(base string, params []string, p, s int, hasP, unsigned bool) (string, string, bool) {
	switch base {
	case "tinyint":
		if len(params) == 1 && params[0] == "1" {
			return "boolean", "tinyint(1) read as boolean; values other than 0 and 1 become row exceptions", true
		}
		return "int", "", true
	case "bool", "boolean":
		return "boolean", "", true
	case "smallint", "mediumint", "year":
		return "int", "", true
	case "int", "integer":
		if unsigned {
			return "long", "unsigned int widened to long", true
		}
		return "int", "", true
	case "bigint":
		if unsigned {
			return "decimal(20,0)", "unsigned bigint read as decimal(20,0)", true
		}
		return "long", "", true
	case "decimal", "numeric", "dec", "fixed":
		if !hasP {
			p, hasP = 10, true // MySQL's default precision
		}
		return decimalType(p, s, hasP, "decimal")
	case "float", "double", "real", "double precision":
		return "double", "", true
	case "bit":
		if len(params) == 0 || params[0] == "1" {
			return "boolean", "", true
		}
		return "binary", "bit(n) read as its bytes", true
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json", "nchar", "nvarchar":
		return "string", "", true
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return "binary", "", true
	case "date":
		return "date", "", true
	case "datetime":
		return "timestamp", "", true
	case "timestamp":
		return "timestamptz", "TIMESTAMP is stored in UTC; read with time_zone '+00:00'", true
	case "time":
		return "string", "time read as text [-]HH:MM:SS[.ffffff] (MySQL TIME is a duration)", true
	}
	return unmapped(MySQL, base)
}

// mapSQLite follows SQLite's affinity rules after a few declared names
// that carry a Lima type by convention.
func mapSQLite(base string, p, s int, hasP bool) (string, string, bool) {
	const numNote = "SQLite stores NUMERIC as INTEGER or REAL: values beyond 15 significant digits may be rounded in the file already"
	switch base {
	case "boolean", "bool":
		return "boolean", "", true
	case "date":
		return "date", "", true
	case "datetime", "timestamp":
		return "timestamp", "", true
	case "timestamptz":
		return "timestamptz", "", true
	case "decimal", "numeric":
		if !hasP {
			return "string", "NUMERIC without precision: kept as text", true
		}
		t, n, ok := decimalType(p, s, hasP, base)
		if n == "" {
			n = numNote
		}
		return t, n, ok
	}
	u := strings.ToUpper(base)
	switch {
	case strings.Contains(u, "INT"):
		return "long", "", true
	case strings.Contains(u, "CHAR"), strings.Contains(u, "CLOB"), strings.Contains(u, "TEXT"):
		return "string", "", true
	case u == "":
		return "string", "no declared type: values read as text", true
	case strings.Contains(u, "BLOB"):
		return "binary", "", true
	case strings.Contains(u, "REAL"), strings.Contains(u, "FLOA"), strings.Contains(u, "DOUB"):
		return "double", "", true
	}
	return "string", "NUMERIC affinity of " + strconvQuote(base) + ": read as text", true
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// subMicro notes a fraction finer than Lima's microseconds.
const subMicro = "Lima keeps microseconds: fraction digits beyond the 6th (100 ns, ns) are not kept"

func mapSQLServer(base string, p, s int, hasP bool) (string, string, bool) {
	switch base {
	case "bit":
		return "boolean", "", true
	case "tinyint", "smallint", "int":
		return "int", "", true
	case "bigint":
		return "long", "", true
	case "decimal", "numeric":
		if !hasP {
			p, hasP = 18, true // SQL Server's default precision
		}
		return decimalType(p, s, hasP, base)
	case "money":
		return "decimal(19,4)", "", true
	case "smallmoney":
		return "decimal(10,4)", "", true
	case "float", "real":
		return "double", "", true
	case "date":
		return "date", "", true
	case "datetime", "smalldatetime":
		return "timestamp", "", true
	case "datetime2":
		if !hasP || p > 6 {
			return "timestamp", subMicro, true
		}
		return "timestamp", "", true
	case "datetimeoffset":
		if !hasP || p > 6 {
			return "timestamptz", "offset normalized to UTC; " + subMicro, true
		}
		return "timestamptz", "offset normalized to UTC", true
	case "time":
		return "string", "time of day read as text", true
	case "char", "varchar", "nchar", "nvarchar", "text", "ntext", "uniqueidentifier", "xml", "sysname":
		return "string", "", true
	case "binary", "varbinary", "image":
		return "binary", "", true
	case "rowversion", "timestamp":
		return "binary", "rowversion (SQL Server timestamp) is an 8-byte counter, not a time", true
	}
	return unmapped(SQLServer, base)
}

func mapOracle(full string, p, s int, hasP, star bool) (string, string, bool) {
	switch {
	case full == "number" || full == "decimal" || full == "numeric":
		switch {
		case star || (!hasP && s > 0):
			return decimalType(maxDecimal, s, true, "NUMBER")
		case !hasP:
			return "string", "NUMBER without precision holds any scale: kept as its exact text (string); declare decimal(p,s) after profiling", true
		case s == 0 && p <= 9:
			return "int", "", true
		case s == 0 && p <= 18:
			return "long", "", true
		}
		return decimalType(p, s, true, "NUMBER")
	case full == "integer" || full == "int" || full == "smallint":
		return "decimal(38,0)", "Oracle INTEGER is NUMBER(38)", true
	case full == "float":
		return "string", "Oracle FLOAT is a decimal NUMBER of up to 38 digits, not a binary float: kept as its exact text (string)", true
	case full == "binary_float" || full == "binary_double":
		return "double", "", true
	case full == "varchar2" || full == "nvarchar2" || full == "varchar" || full == "char" || full == "nchar" ||
		full == "clob" || full == "nclob" || full == "long" || full == "rowid" || full == "urowid" || full == "xmltype":
		return "string", "", true
	case full == "date":
		return "timestamp", "Oracle DATE carries a time of day", true
	case full == "timestamp":
		if hasP && p > 6 {
			return "timestamp", subMicro, true
		}
		return "timestamp", "", true
	case full == "timestamp with time zone" || full == "timestamp with local time zone":
		return "timestamptz", "normalized to UTC", true
	case full == "raw" || full == "long raw" || full == "blob":
		return "binary", "", true
	case strings.HasPrefix(full, "interval"):
		return "string", "interval read as text", true
	}
	return unmapped(Oracle, full)
}
