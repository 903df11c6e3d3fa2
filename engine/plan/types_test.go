package plan

import "testing"

func TestParseType(t *testing.T) {
	tests := []struct {
		in    string
		want  Type
		canon string
	}{
		{"string", Type{Kind: String}, "string"},
		{"int", Type{Kind: Int}, "int"},
		{"long", Type{Kind: Long}, "long"},
		{"bigint", Type{Kind: Long}, "long"},
		{"double", Type{Kind: Double}, "double"},
		{"float", Type{Kind: Double}, "double"},
		{"decimal(18,3)", Type{Kind: Decimal, Precision: 18, Scale: 3}, "decimal(18,3)"},
		{"decimal( 38 , 0 )", Type{Kind: Decimal, Precision: 38, Scale: 0}, "decimal(38,0)"},
		{"decimal(1,1)", Type{Kind: Decimal, Precision: 1, Scale: 1}, "decimal(1,1)"},
		{"decimal (10, 2)", Type{Kind: Decimal, Precision: 10, Scale: 2}, "decimal(10,2)"},
		{"decimal(9)", Type{Kind: Decimal, Precision: 9}, "decimal(9,0)"},
		{"DECIMAL(5,2)", Type{Kind: Decimal, Precision: 5, Scale: 2}, "decimal(5,2)"},
		{"date", Type{Kind: Date}, "date"},
		{"timestamp", Type{Kind: Timestamp}, "timestamp"},
		{"timestamptz", Type{Kind: TimestampTZ}, "timestamptz"},
		{"boolean", Type{Kind: Boolean}, "boolean"},
		{"bool", Type{Kind: Boolean}, "boolean"},
		{"binary", Type{Kind: Binary}, "binary"},
		{"  Long ", Type{Kind: Long}, "long"},
	}
	for _, tc := range tests {
		got, err := ParseType(tc.in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseType(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if got.String() != tc.canon {
			t.Errorf("ParseType(%q).String() = %q, want %q", tc.in, got.String(), tc.canon)
		}
		again, err := ParseType(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q: %+v, %v", tc.in, again, err)
		}
	}
}

func TestParseTypeErrors(t *testing.T) {
	const help = "use string, int, long (or bigint), double (or float), decimal(p,s), date, timestamp, timestamptz, boolean (or bool) or binary"
	const dec = "write decimal(p,s) with precision p from 1 to 38 and scale s from 0 to p, e.g. decimal(18,2)"
	tests := []struct{ in, want string }{
		{"decimal(39,2)", "decimal(39,2): precision 39 is out of range; use 1 to 38"},
		{"decimal(0,0)", "decimal(0,0): precision 0 is out of range; use 1 to 38"},
		{"decimal(5,6)", "decimal(5,6): scale 6 is out of range; use 0 to the precision (5)"},
		{"decimal(5,-1)", "decimal(5,-1): scale -1 is out of range; use 0 to the precision (5)"},
		{"decimal", "decimal needs a precision and a scale; " + dec},
		{"decimal(5,2", `"decimal(5,2" is not a decimal type; ` + dec},
		{"decimal(5,2,1)", `"decimal(5,2,1)" has 3 parameters; ` + dec},
		{"decimal(p,s)", `"decimal(p,s)": "p" is not a whole number; ` + dec},
		{"decimal()", `"decimal()": "" is not a whole number; ` + dec},
		{"", "empty type; " + help},
		{"strng", `unknown type "strng"; did you mean string?`},
		{"integer", `unknown type "integer"; did you mean int?`},
		{"varchar(20)", `unknown type "varchar(20)"; did you mean string?`},
		{"numeric(10,2)", `unknown type "numeric(10,2)"; did you mean decimal(p,s)?`},
		{"datetime", `unknown type "datetime"; did you mean timestamp?`},
		{"decmal(5,2)", `unknown type "decmal(5,2)"; did you mean decimal(p,s)?`},
		{"uuid", `unknown type "uuid"; ` + help},
	}
	for _, tc := range tests {
		_, err := ParseType(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseType(%q) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestTypePredicates(t *testing.T) {
	tests := []struct {
		typ                                Type
		numeric, integral, temporal, exact bool
	}{
		{Type{Kind: String}, false, false, false, false},
		{Type{Kind: Int}, true, true, false, true},
		{Type{Kind: Long}, true, true, false, true},
		{Type{Kind: Double}, true, false, false, false},
		{Type{Kind: Decimal, Precision: 10, Scale: 2}, true, false, false, true},
		{Type{Kind: Date}, false, false, true, false},
		{Type{Kind: Timestamp}, false, false, true, false},
		{Type{Kind: TimestampTZ}, false, false, true, false},
		{Type{Kind: Boolean}, false, false, false, false},
		{Type{Kind: Binary}, false, false, false, false},
		{Type{}, false, false, false, false},
	}
	for _, tc := range tests {
		if got := tc.typ.IsNumeric(); got != tc.numeric {
			t.Errorf("%v.IsNumeric() = %v", tc.typ.Kind, got)
		}
		if got := tc.typ.IsIntegral(); got != tc.integral {
			t.Errorf("%v.IsIntegral() = %v", tc.typ.Kind, got)
		}
		if got := tc.typ.IsTemporal(); got != tc.temporal {
			t.Errorf("%v.IsTemporal() = %v", tc.typ.Kind, got)
		}
		if got := tc.typ.IsExact(); got != tc.exact {
			t.Errorf("%v.IsExact() = %v", tc.typ.Kind, got)
		}
	}
	if Unknown.String() != "unknown" || (Type{}).String() != "" || Kind(99).String() != "Kind(99)" {
		t.Errorf("names: %q %q %q", Unknown.String(), Type{}.String(), Kind(99).String())
	}
}
