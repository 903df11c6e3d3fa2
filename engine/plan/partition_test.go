package plan

import "testing"

func TestParsePartition(t *testing.T) {
	tests := []struct {
		in    string
		want  PartitionField
		canon string
	}{
		{"order_date", PartitionField{Column: "order_date", Transform: TransformIdentity}, "order_date"},
		{"  region ", PartitionField{Column: "region", Transform: TransformIdentity}, "region"},
		{"identity(region)", PartitionField{Column: "region", Transform: TransformIdentity}, "region"},
		{"year(order_date)", PartitionField{Column: "order_date", Transform: TransformYear}, "year(order_date)"},
		{"month(order_date)", PartitionField{Column: "order_date", Transform: TransformMonth}, "month(order_date)"},
		{"day( order_date )", PartitionField{Column: "order_date", Transform: TransformDay}, "day(order_date)"},
		{"hour (ts)", PartitionField{Column: "ts", Transform: TransformHour}, "hour(ts)"},
		{"MONTH(ts)", PartitionField{Column: "ts", Transform: TransformMonth}, "month(ts)"},
		{"bucket(16, customer_id)", PartitionField{Column: "customer_id", Transform: TransformBucket, Param: 16}, "bucket(16, customer_id)"},
		{"bucket(16,customer_id)", PartitionField{Column: "customer_id", Transform: TransformBucket, Param: 16}, "bucket(16, customer_id)"},
		{" truncate ( 4 , code ) ", PartitionField{Column: "code", Transform: TransformTruncate, Param: 4}, "truncate(4, code)"},
		{"bucket(1, x)", PartitionField{Column: "x", Transform: TransformBucket, Param: 1}, "bucket(1, x)"},
	}
	for _, tc := range tests {
		got, err := ParsePartition(tc.in)
		if err != nil {
			t.Errorf("ParsePartition(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParsePartition(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if got.String() != tc.canon {
			t.Errorf("ParsePartition(%q).String() = %q, want %q", tc.in, got.String(), tc.canon)
		}
		again, err := ParsePartition(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q: %+v, %v", tc.in, again, err)
		}
	}
}

func TestParsePartitionErrors(t *testing.T) {
	const help = "write col, year(col), month(col), day(col), hour(col), bucket(N, col) or truncate(W, col)"
	tests := []struct{ in, want string }{
		{"bucket(0, x)", `"bucket(0, x)": bucket count must be from 1 to 2147483647`},
		{"truncate(-2, x)", `"truncate(-2, x)": truncate width must be from 1 to 2147483647`},
		{"bucket(99999999999, x)", `"bucket(99999999999, x)": bucket count must be from 1 to 2147483647`},
		{"month()", "month() needs a column, e.g. month(order_date)"},
		{"month( )", "month() needs a column, e.g. month(order_date)"},
		{"month(a,b)", `"month(a,b)": month takes one column, not 2 arguments, e.g. month(order_date)`},
		{"bucket(x, 16)", `"bucket(x, 16)": the count comes first: bucket(16, x)`},
		{"bucket(16)", `"bucket(16)": bucket takes a count and a column, e.g. bucket(16, customer_id)`},
		{"truncate(w, x)", `"truncate(w, x)": width "w" is not a whole number, e.g. truncate(10, product_code)`},
		{"bucket(4, 9x)", `"bucket(4, 9x)": "9x" is not a column name`},
		{"year(order date)", `"year(order date)": "order date" is not a column name`},
		{"mnth(x)", `"mnth(x)": unknown transform "mnth"; did you mean month?`},
		{"week(x)", `"week(x)": unknown transform "week"; ` + help},
		{"month(day(x))", `"month(day(x))": transforms cannot be nested; ` + help},
		{"month(x", `"month(x": missing closing parenthesis; ` + help},
		{"order date", `"order date" is neither a column name nor a transform; ` + help},
		{"", "empty partition entry; " + help},
	}
	for _, tc := range tests {
		_, err := ParsePartition(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParsePartition(%q) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestPartitionAcceptsType(t *testing.T) {
	kinds := []Kind{String, Int, Long, Double, Decimal, Date, Timestamp, TimestampTZ, Boolean, Binary, Unknown}
	// accepted[transform] = the kinds it takes, by hand from the spec.
	accepted := map[string][]Kind{
		TransformIdentity: {String, Int, Long, Decimal, Date, Timestamp, TimestampTZ, Boolean},
		TransformYear:     {Date, Timestamp, TimestampTZ},
		TransformMonth:    {Date, Timestamp, TimestampTZ},
		TransformDay:      {Date, Timestamp, TimestampTZ},
		TransformHour:     {Timestamp, TimestampTZ},
		TransformBucket:   {Int, Long, String, Date, Decimal},
		TransformTruncate: {Int, Long, String, Decimal},
	}
	for tr, ok := range accepted {
		for _, k := range kinds {
			want := false
			for _, a := range ok {
				want = want || a == k
			}
			f := PartitionField{Column: "c", Transform: tr, Param: 4}
			if got := f.AcceptsType(Type{Kind: k}); got != want {
				t.Errorf("%s accepts %v = %v, want %v", f, k, got, want)
			}
		}
	}
}
