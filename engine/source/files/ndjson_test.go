package files

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

type wantJSONRow struct {
	kind   source.RowKind
	values []string
	nulls  []bool
	raw    string
	reason string
}

func TestNDJSON(t *testing.T) {
	const (
		D = source.Data
		B = source.Blank
		M = source.Malformed
	)
	tests := []struct {
		name    string
		in      string
		opts    source.Options
		columns []string
		want    []wantJSONRow
	}{
		{
			name: "values, nulls, nested, missing keys, blank and malformed lines",
			in: `{"id":1,"name":"Ann \"A\"","amount":12.50,"ok":true,"tags":["x", "y"],"meta":{"k": null, "n": 1e3}}` + "\r\n" +
				`{"id":2,"name":null,"amount":-0.5e3,"ok":false}` + "\n" +
				"\n" +
				"   \t\n" +
				`{"id":3, "tags":[]}` + "\n" +
				"not json\n" +
				`{"id":4,"name":"d"` + "\n" +
				`[1,2]` + "\n" +
				`{"id":5,"id":6}` + "\n" +
				`{"id":7} {"id":8}` + "\n" +
				`{"id":9,"ok":true}`,
			columns: []string{"id", "name", "amount", "ok", "tags", "meta"},
			want: []wantJSONRow{
				{D, []string{"1", `Ann "A"`, "12.50", "true", `["x","y"]`, `{"k":null,"n":1e3}`}, nil,
					`{"id":1,"name":"Ann \"A\"","amount":12.50,"ok":true,"tags":["x", "y"],"meta":{"k": null, "n": 1e3}}`, ""},
				{D, []string{"2", "", "-0.5e3", "false", "", ""}, []bool{false, true, false, false, true, true},
					`{"id":2,"name":null,"amount":-0.5e3,"ok":false}`, ""},
				{B, nil, nil, "", ""},
				{B, nil, nil, "   \t", ""},
				{D, []string{"3", "", "", "", "[]", ""}, []bool{false, true, true, true, false, true}, `{"id":3, "tags":[]}`, ""},
				{M, nil, nil, "not json", "invalid character 'o' in literal null (expecting 'u')"},
				{M, nil, nil, `{"id":4,"name":"d"`, "unexpected end of JSON input"},
				{M, nil, nil, `[1,2]`, "not a JSON object: found array"},
				{M, nil, nil, `{"id":5,"id":6}`, `duplicate key "id"`},
				{M, nil, nil, `{"id":7} {"id":8}`, "data after the JSON object"},
				{D, []string{"9", "", "", "true", "", ""}, []bool{false, true, true, false, true, true}, `{"id":9,"ok":true}`, ""},
			},
		},
		{
			name:    "expected columns: order from the plan, keys matched by folded name, unknown key malformed",
			in:      `{"Amount":"7","customerId":"c1"}` + "\n" + `{"customerId":"c2","extra":true}` + "\n",
			opts:    source.Options{Columns: []string{"customer_id", "amount"}},
			columns: []string{"customer_id", "amount"},
			want: []wantJSONRow{
				{D, []string{"c1", "7"}, nil, `{"Amount":"7","customerId":"c1"}`, ""},
				{M, []string{"c2", ""}, []bool{false, true}, `{"customerId":"c2","extra":true}`, `key "extra" is not among the columns`},
			},
		},
		{
			name:    "columns are the keys of the sampled objects in order of first appearance",
			in:      "garbage\n" + `{"b":1}` + "\n" + `{"a":2,"b":3}` + "\n",
			columns: []string{"b", "a"},
			want: []wantJSONRow{
				{M, nil, nil, "garbage", "invalid character 'g' looking for beginning of value"},
				{D, []string{"1", ""}, []bool{false, true}, `{"b":1}`, ""},
				{D, []string{"3", "2"}, nil, `{"a":2,"b":3}`, ""},
			},
		},
		{
			name:    "BOM stripped",
			in:      "\xEF\xBB\xBF" + `{"a":"x"}`,
			columns: []string{"a"},
			want: []wantJSONRow{
				{D, []string{"x"}, nil, `{"a":"x"}`, ""},
			},
		},
		{
			name:    "empty file",
			in:      "",
			columns: nil,
			want:    nil,
		},
	}
	small := readerConfig{bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}
	for _, tc := range tests {
		for _, cfg := range []readerConfig{ndjsonDefaults, small} {
			r, err := newNDJSONReader(context.Background(), strings.NewReader(tc.in), "t.ndjson", tc.opts, cfg)
			if err != nil {
				t.Fatalf("%s: newNDJSONReader: %v", tc.name, err)
			}
			rows, err := sourcetest.ReadAll(r)
			if err != nil {
				t.Fatalf("%s: reading: %v", tc.name, err)
			}
			if cfg == ndjsonDefaults && !reflect.DeepEqual(r.Columns(), tc.columns) {
				t.Errorf("%s: Columns() = %q, want %q", tc.name, r.Columns(), tc.columns)
			}
			if cfg == small && tc.opts.Columns == nil {
				continue // the 16-byte sample sees other keys; rows differ
			}
			if len(rows) != len(tc.want) {
				t.Fatalf("%s: %d rows, want %d", tc.name, len(rows), len(tc.want))
			}
			for i, w := range tc.want {
				got := rows[i]
				if got.Kind != w.kind || !reflect.DeepEqual(got.Values, w.values) || !reflect.DeepEqual(got.Nulls, w.nulls) ||
					string(got.Raw) != w.raw || got.Reason != w.reason || got.Loc.Line != int64(i+1) || got.Loc.Row != int64(i+1) {
					t.Errorf("%s: row %d:\n got  %v %q nulls %v raw %q reason %q line %d row %d\n want %v %q nulls %v raw %q reason %q line %d",
						tc.name, i+1, got.Kind, got.Values, got.Nulls, got.Raw, got.Reason, got.Loc.Line, got.Loc.Row,
						w.kind, w.values, w.nulls, w.raw, w.reason, i+1)
				}
			}
			if err := sourcetest.CheckRaw([]byte(tc.in), rows); err != nil {
				t.Errorf("%s: CheckRaw: %v", tc.name, err)
			}
		}
	}
}

func TestNDJSONUnreadable(t *testing.T) {
	for in, reason := range map[string]string{
		"[\n  {\"a\": 1}\n]\n": "a JSON array document, not NDJSON (one JSON object per line)",
		"{\"a\":\"\x00\"}\n":   "binary content (NUL bytes), not an NDJSON file",
		"\xFF\xFE\x00\x00{":    "UTF-32 encoded text (byte order mark): convert the file to UTF-8", // UTF-16 is decoded now: encoding_test.go
	} {
		_, err := newNDJSONReader(context.Background(), strings.NewReader(in), "t.ndjson", source.Options{}, ndjsonDefaults)
		var ue *UnreadableError
		if !errors.Is(err, source.ErrUnreadable) || !errors.As(err, &ue) || ue.Reason != reason {
			t.Errorf("%q: err = %v, want unreadable with reason %q", in, err, reason)
		}
	}
}
