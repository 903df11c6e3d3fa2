package dynamo

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestParseNumber(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"1.50", "1.5"}, {"2.0", "2"}, {"-12.340", "-12.34"},
		{"1E+3", "1000"}, {"1.5e-3", "0.0015"}, {"-.5", "-0.5"}, {"+7", "7"},
		{"99999999999999999999999999999999999999", "99999999999999999999999999999999999999"},
		{"0.000000000000000000000000000000000001", "0.000000000000000000000000000000000001"},
	} {
		n, err := parseNumber(tc.in)
		if err != nil {
			t.Fatalf("parseNumber(%q): %v", tc.in, err)
		}
		if got := n.String(); got != tc.want {
			t.Errorf("parseNumber(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "abc", "1.2.3", "1e", "--1", "0x10"} {
		if _, err := parseNumber(bad); err == nil {
			t.Errorf("parseNumber(%q): no error", bad)
		}
	}
}

func TestSumIsExact(t *testing.T) {
	var s sum
	// 0.1 + 0.2 + 1e20 + (-1e20) + 12.345: a float64 sum loses the cents.
	for _, v := range []string{"0.1", "0.2", "100000000000000000000", "-100000000000000000000", "12.345"} {
		n, err := parseNumber(v)
		if err != nil {
			t.Fatal(err)
		}
		s.add(n)
	}
	if got, want := s.String(), "12.645"; got != want {
		t.Fatalf("sum = %s, want %s", got, want)
	}
}

func TestCanonicalJSON(t *testing.T) {
	v := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"z":   &types.AttributeValueMemberNS{Value: []string{"10", "-1.50", "2"}},
		"a":   &types.AttributeValueMemberSS{Value: []string{"b", "a"}},
		"m":   &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberNULL{Value: true}, &types.AttributeValueMemberBOOL{Value: false}}},
		"b":   &types.AttributeValueMemberBS{Value: [][]byte{{2}, {1}}},
		"é\"": &types.AttributeValueMemberB{Value: []byte("hi")},
	}}
	got, err := CanonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":["a","b"],"b":["AQ==","Ag=="],"m":[null,false],"z":[-1.5,2,10],"é\"":"aGk="}`
	if got != want {
		t.Fatalf("CanonicalJSON =\n %s\nwant\n %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Fatalf("not valid JSON: %s", got)
	}
}

func TestDecodeItem(t *testing.T) {
	raw := `{"id":{"N":"7"},"s":{"S":"x"},"b":{"B":"AAE="},"ok":{"BOOL":true},"n":{"NULL":true},"ss":{"SS":["q"]},"ns":{"NS":["1.0"]},"bs":{"BS":["AQ=="]},"m":{"M":{"k":{"S":"v"}}},"l":{"L":[{"N":"1"}]}}`
	item, err := DecodeItem(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(item) != 10 {
		t.Fatalf("%d attributes, want 10", len(item))
	}
	if b := item["b"].(*types.AttributeValueMemberB).Value; string(b) != "\x00\x01" {
		t.Fatalf("B = %q, want base64-decoded bytes 00 01", b)
	}
	got, _ := CanonicalJSON(&types.AttributeValueMemberM{Value: item})
	want := `{"b":"AAE=","bs":["AQ=="],"id":7,"l":[1],"m":{"k":"v"},"n":null,"ns":[1],"ok":true,"s":"x","ss":["q"]}`
	if got != want {
		t.Fatalf("decoded item = %s, want %s", got, want)
	}
	for _, bad := range []string{`{"a":{"N":"x"}}`, `{"a":{"S":"x","N":"1"}}`, `{"a":{"Q":"1"}}`, `[1]`} {
		if _, err := DecodeItem(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeItem(%s): no error", bad)
		}
	}
}

func TestProfileTypes(t *testing.T) {
	p := NewProfile()
	n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	p.Add(map[string]types.AttributeValue{"id": n("1"), "amt": n("12.5"), "qty": n("3"), "huge": n("9223372036854775808"), "mix": n("1"), "b": &types.AttributeValueMemberB{Value: []byte{1}}, "ok": &types.AttributeValueMemberBOOL{Value: true}, "null": &types.AttributeValueMemberNULL{Value: true}, "m": &types.AttributeValueMemberM{}})
	p.Add(map[string]types.AttributeValue{"id": n("2"), "amt": n("-1234.125"), "qty": n("-4"), "mix": &types.AttributeValueMemberS{Value: "x"}, "sk": &types.AttributeValueMemberS{Value: "s"}})
	got := map[string]string{}
	var order []string
	for _, c := range p.Columns([]string{"id", "sk"}) {
		got[c.Name] = c.Type
		order = append(order, c.Name)
	}
	want := map[string]string{"id": "long", "sk": "string", "amt": "decimal(7,3)", "qty": "long", "huge": "decimal(19,0)", "mix": "string",
		"b": "binary", "ok": "boolean", "null": "string", "m": "string"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("column %s: type %q, want %q", k, got[k], v)
		}
	}
	if order[0] != "id" || order[1] != "sk" || order[2] != "amt" {
		t.Errorf("column order %q, want the key attributes first, then by name", order)
	}
}

func TestLimiterKeepsTheRate(t *testing.T) {
	// A fake clock: every Wait that must wait advances it.
	now := time.Unix(0, 0)
	l := NewLimiter(10, 0)
	l.now = func() time.Time { return now }
	l.last = now
	l.sleep = func(_ context.Context, d time.Duration) error { now = now.Add(d); return nil }
	spent := 0.0
	for i := 0; i < 200; i++ {
		if err := l.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		l.Spend(2.5) // each request consumes 2.5 units
		spent += 2.5
	}
	el := now.Sub(time.Unix(0, 0)).Seconds()
	// 500 units at 10/s with a 10-unit bucket: the last request is
	// admitted once the debt is paid, so at least (500-10-2.5)/10 s pass.
	if min := (spent - 10 - 2.5) / 10; el < min {
		t.Fatalf("%.1f units in %.2fs: faster than 10 units/s (want at least %.2fs)", spent, el, min)
	}
	if el > spent/10+1 {
		t.Fatalf("%.1f units took %.2fs: the limiter waits far longer than the budget needs", spent, el)
	}
}
