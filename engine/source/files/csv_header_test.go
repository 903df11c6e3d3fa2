package files

import (
	"reflect"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

// Header "auto" over columns that are all text: the first record is a
// header when its fields' lengths stand out from their columns' (Cust#
// over C001…), and a file that holds only a header loads nothing.
func TestCSVTextHeader(t *testing.T) {
	for _, c := range []struct {
		name, in string
		header   bool
		rows     int
	}{
		{"all text, header by shape", "Cust#,name,country_code,segment\nC001,Ann,DE,retail\nC002,Bob,FR,retail\nC003,Cem,DE,b2b\n", true, 3},
		{"header only", "order_id,amount,placed_on\n", true, 0},
		{"header only, CRLF", "Order ID;Amount;Placed on\r\n", true, 0},
		{"one data row with a number", "A17,42,x\n", false, 1},
		{"one row that is no name", "ann@example.com,Berlin\n", false, 1},
		{"text data without header, same shapes", "abc,de\nfgh,ij\nklm,no\n", false, 3},
		{"a header value recurs in its column", "code,name\ncode,xy\nCD,zz\n", false, 3},
		{"numbers below decide as before", "id,name\n1,Ann\n2,Bob\n", true, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := openCSV(t, c.in, source.Options{}, csvDefaults)
			all, err := sourcetest.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			var rows []source.Row
			for _, row := range all {
				if row.Kind == source.Data {
					rows = append(rows, row)
				}
			}
			if r.hasHeader != c.header || len(rows) != c.rows {
				t.Fatalf("header %v, %d rows (columns %v); want header %v, %d rows", r.hasHeader, len(rows), r.columns, c.header, c.rows)
			}
			if c.header && c.rows > 0 && reflect.DeepEqual(rows[0].Values, r.columns) {
				t.Fatal("the header was read as a row")
			}
		})
	}
}
