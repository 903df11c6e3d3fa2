package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the logical type of a column.
type Kind uint8

// The column kinds. Unknown is the zero value: a column whose type is not
// declared and will be inferred from a sample.
const (
	Unknown     Kind = iota
	String           // UTF-8 text
	Int              // 32-bit signed integer
	Long             // 64-bit signed integer
	Double           // 64-bit IEEE 754 float
	Decimal          // fixed point, Type.Precision and Type.Scale
	Date             // calendar date
	Timestamp        // date and time without a zone (naive, microseconds)
	TimestampTZ      // instant, stored in UTC (microseconds)
	Boolean          // true or false
	Binary           // bytes
)

var kindNames = [...]string{
	Unknown:     "unknown",
	String:      "string",
	Int:         "int",
	Long:        "long",
	Double:      "double",
	Decimal:     "decimal",
	Date:        "date",
	Timestamp:   "timestamp",
	TimestampTZ: "timestamptz",
	Boolean:     "boolean",
	Binary:      "binary",
}

// String is the canonical name of the kind ("unknown" for Unknown).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// MaxDecimalPrecision is the largest precision of a decimal (Iceberg's limit).
const MaxDecimalPrecision = 38

// Type is a column type. Precision and Scale are set only for Decimal.
type Type struct {
	Kind      Kind
	Precision int
	Scale     int
}

// String is the canonical form that ParseType reads back: "long",
// "decimal(18,3)", …; "" for the zero Type (inferred).
func (t Type) String() string {
	switch t.Kind {
	case Unknown:
		return ""
	case Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	}
	return t.Kind.String()
}

// IsNumeric reports whether t is int, long, double or decimal.
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case Int, Long, Double, Decimal:
		return true
	}
	return false
}

// IsIntegral reports whether t is int or long.
func (t Type) IsIntegral() bool { return t.Kind == Int || t.Kind == Long }

// IsTemporal reports whether t is date, timestamp or timestamptz.
func (t Type) IsTemporal() bool {
	switch t.Kind {
	case Date, Timestamp, TimestampTZ:
		return true
	}
	return false
}

// IsExact reports whether sums of t are exact (int, long, decimal); gate 4
// compares such sums without tolerance.
func (t Type) IsExact() bool { return t.IsIntegral() || t.Kind == Decimal }

// typeNames are the spellings ParseType accepts besides decimal(p,s).
var typeNames = map[string]Kind{
	"string":      String,
	"int":         Int,
	"long":        Long,
	"bigint":      Long,
	"double":      Double,
	"float":       Double,
	"date":        Date,
	"timestamp":   Timestamp,
	"timestamptz": TimestampTZ,
	"boolean":     Boolean,
	"bool":        Boolean,
	"binary":      Binary,
}

// typeHelp lists the accepted types for error messages.
const typeHelp = "use string, int, long (or bigint), double (or float), decimal(p,s), date, timestamp, timestamptz, boolean (or bool) or binary"

// ParseType reads a column type: string, int, long, bigint (= long), double,
// float (= double), decimal(p,s) with 1 ≤ p ≤ 38 and 0 ≤ s ≤ p (decimal(p)
// means scale 0), date, timestamp, timestamptz, boolean, bool or binary.
// Case and blanks around the parts are ignored.
func ParseType(s string) (Type, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return Type{}, fmt.Errorf("empty type; %s", typeHelp)
	}
	if k, ok := typeNames[t]; ok {
		return Type{Kind: k}, nil
	}
	if rest, ok := strings.CutPrefix(t, "decimal"); ok {
		return parseDecimal(s, strings.TrimSpace(rest))
	}
	if sug, ok := foreignTypes[head(t)]; ok {
		return Type{}, fmt.Errorf("unknown type %q; did you mean %s?", s, sug)
	}
	names := []string{"string", "int", "long", "bigint", "double", "float", "decimal", "date", "timestamp", "timestamptz", "boolean", "bool", "binary"}
	if sug, ok := suggest(head(t), names); ok && sug != head(t) {
		if sug == "decimal" {
			sug = "decimal(p,s)"
		}
		return Type{}, fmt.Errorf("unknown type %q; did you mean %s?", s, sug)
	}
	return Type{}, fmt.Errorf("unknown type %q; %s", s, typeHelp)
}

// foreignTypes maps spellings of other systems to the type to write instead.
var foreignTypes = map[string]string{
	"integer":   "int",
	"smallint":  "int",
	"tinyint":   "int",
	"int4":      "int",
	"int8":      "long",
	"int64":     "long",
	"varchar":   "string",
	"char":      "string",
	"text":      "string",
	"nvarchar":  "string",
	"numeric":   "decimal(p,s)",
	"number":    "decimal(p,s)",
	"real":      "double",
	"float64":   "double",
	"datetime":  "timestamp",
	"datetime2": "timestamp",
	"bytes":     "binary",
	"blob":      "binary",
	"bytea":     "binary",
}

// head is a type name without its parameters.
func head(t string) string {
	if i := strings.IndexByte(t, '('); i >= 0 {
		return strings.TrimSpace(t[:i])
	}
	return t
}

func parseDecimal(orig, rest string) (Type, error) {
	const example = "write decimal(p,s) with precision p from 1 to 38 and scale s from 0 to p, e.g. decimal(18,2)"
	if rest == "" {
		return Type{}, fmt.Errorf("decimal needs a precision and a scale; %s", example)
	}
	if rest[0] != '(' || rest[len(rest)-1] != ')' {
		return Type{}, fmt.Errorf("%q is not a decimal type; %s", orig, example)
	}
	parts := strings.Split(rest[1:len(rest)-1], ",")
	if len(parts) > 2 {
		return Type{}, fmt.Errorf("%q has %d parameters; %s", orig, len(parts), example)
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return Type{}, fmt.Errorf("%q: %q is not a whole number; %s", orig, strings.TrimSpace(p), example)
		}
		nums[i] = n
	}
	prec, scale := nums[0], 0
	if len(nums) == 2 {
		scale = nums[1]
	}
	if prec < 1 || prec > MaxDecimalPrecision {
		return Type{}, fmt.Errorf("decimal(%d,%d): precision %d is out of range; use 1 to %d", prec, scale, prec, MaxDecimalPrecision)
	}
	if scale < 0 || scale > prec {
		return Type{}, fmt.Errorf("decimal(%d,%d): scale %d is out of range; use 0 to the precision (%d)", prec, scale, scale, prec)
	}
	return Type{Kind: Decimal, Precision: prec, Scale: scale}, nil
}
