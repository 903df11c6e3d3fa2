package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sourcetest"
)

// Hand-encoded text (clean's TestSampleBytes checks the same bytes against
// x/text's encoders). Decoded values are asserted against Go literals.
const (
	krBeonho  = "\xB9\xF8\xC8\xA3"                                 // 번호
	krSangho  = "\xBB\xF3\xC8\xA3"                                 // 상호
	krHanil   = "\xC7\xD1\xC0\xCF\xC1\xA4\xB9\xD0"                 // 한일정밀
	krDaehan  = "\xB4\xEB\xC7\xD1\xBB\xF3\xBB\xE7"                 // 대한상사
	krSamsung = "\xBB\xEF\xBC\xBA\xC0\xFC\xC0\xDA"                 // 삼성전자
	krKim     = "\xB1\xE8\xB9\xCE\xC1\xD8"                         // 김민준
	krLee     = "\xC0\xCC\xBC\xAD\xBF\xAC"                         // 이서연
	krCorp    = "\xC1\xD6\xBD\xC4\xC8\xB8\xBB\xE7"                 // 주식회사
	sjYamada  = "\x8E\x52\x93\x63\x91\xBE\x98\x59"                 // 山田太郎
	sjPump    = "\x83\x7C\x83\x93\x83\x76"                         // ポンプ: 0x7C is '|'
	sjSource  = "\x83\x5C\x81\x5B\x83\x58"                         // ソース: 0x5C is '\'
	sjCode    = "\x83\x52\x81\x5B\x83\x68"                         // コード
	sjHinmei  = "\x95\x69\x96\xBC"                                 // 品名
	sjHyo     = "\x95\x5C"                                         // 表: 0x5C is '\'
	gbBianhao = "\xB1\xE0\xBA\xC5"                                 // 编号
	gbMingch  = "\xC3\xFB\xB3\xC6"                                 // 名称
	gbZhang   = "\xD5\xC5\xCE\xB0"                                 // 张伟
	gbBeijing = "\xB1\xB1\xBE\xA9\xD3\xD0\xCF\xDE\xB9\xAB\xCB\xBE" // 北京有限公司
	gbShangh  = "\xC9\xCF\xBA\xA3"                                 // 上海
	gbLiMing  = "\xC0\xEE\xC3\xF7"                                 // 李明
	gbGrin    = "\x94\x39\xFC\x36"                                 // 😀
)

// u16 encodes s as UTF-16 (little- or big-endian), without a BOM.
func u16(s string, be bool) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if be {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

// encRow is the part of a row an encoding test spells out.
type encRow struct {
	kind   source.RowKind
	values []string
	raw    string // as stored
	rule   string
	reason string // prefix of the Reason
}

// readText opens data as CSV or NDJSON, reads every row, checks that every
// byte is accounted for in the unit's encoding and the encoding rules of
// every row, and returns the rows and the detection.
func readText(t *testing.T, format string, data []byte, opts source.Options, cfg readerConfig) ([]source.Row, clean.Detection) {
	t.Helper()
	var rr interface {
		source.RowReader
		Encoding() clean.Detection
	}
	var err error
	if format == "ndjson" {
		rr, err = newNDJSONReader(context.Background(), bytes.NewReader(data), "t."+format, opts, cfg)
	} else {
		rr, err = newCSVReader(context.Background(), bytes.NewReader(data), "t."+format, opts, cfg)
	}
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	rows, err := sourcetest.ReadAll(rr)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	det := rr.Encoding()
	if err := checkRawUnit(data, rows, det); err != nil {
		t.Fatalf("rows do not account for every byte: %v", err)
	}
	for i, row := range rows {
		checkEncodedRow(t, i, row)
	}
	return rows, det
}

func checkEncRows(t *testing.T, rows []source.Row, enc string, want []encRow) {
	t.Helper()
	if len(rows) != len(want) {
		t.Errorf("%d rows, want %d", len(rows), len(want))
	}
	for i := 0; i < len(rows) && i < len(want); i++ {
		got, w := rows[i], want[i]
		if got.Kind != w.kind || !reflect.DeepEqual(got.Values, w.values) || string(got.Raw) != w.raw ||
			got.Rule != w.rule || !strings.HasPrefix(got.Reason, w.reason) || (w.reason == "") != (got.Reason == "") || got.Encoding != enc {
			t.Errorf("row %d:\n got  %v %q raw %q rule %q reason %q encoding %q\n want %v %q raw %q rule %q reason %q… encoding %q",
				i+1, got.Kind, got.Values, got.Raw, got.Rule, got.Reason, got.Encoding,
				w.kind, w.values, w.raw, w.rule, w.reason, enc)
		}
	}
}

const (
	eD = source.Data
	eH = source.Header
	eB = source.Blank
	eM = source.Malformed
)

func TestEncodingCSVEUCKR(t *testing.T) {
	in := krBeonho + "," + krSangho + "\n1," + krHanil + "\n\n2," + krDaehan + "\n3,\"" + krSamsung + ", " + krCorp + "\"\n"
	for _, opts := range []source.Options{{}, {Columns: []string{"번호", "상호"}}, {Encoding: "cp949"}, {Encoding: "ks_c_5601-1987"}} {
		rows, det := readText(t, "csv", []byte(in), opts, csvDefaults)
		if det.Name != "euc-kr" {
			t.Fatalf("%+v: encoding %+v, want euc-kr", opts, det)
		}
		checkEncRows(t, rows, "euc-kr", []encRow{
			{eH, []string{"번호", "상호"}, krBeonho + "," + krSangho, "", ""},
			{eD, []string{"1", "한일정밀"}, "1," + krHanil, "", ""},
			{eB, nil, "", "", ""},
			{eD, []string{"2", "대한상사"}, "2," + krDaehan, "", ""},
			{eD, []string{"3", "삼성전자, 주식회사"}, "3,\"" + krSamsung + ", " + krCorp + "\"", "", ""},
		})
	}
	r := openCSV(t, in, source.Options{}, csvDefaults)
	if got := r.Columns(); !reflect.DeepEqual(got, []string{"번호", "상호"}) {
		t.Errorf("Columns() = %q, want the decoded header", got)
	}
}

func TestEncodingCSVShiftJISPipes(t *testing.T) {
	// ポ is 0x83 0x7C: its second byte is '|'. Split on the raw bytes, row 3
	// would have a third field opening a quote that swallows row 4.
	in := sjCode + "|" + sjHinmei + "\r\n1|" + sjPump + "\r\n2|" + sjSource + "\r\n3|" + sjPump + "\"x\r\n4|\"" + sjSource + "|" + sjPump + "\"\r\n5|" + sjYamada + "\r\n"
	want := []encRow{
		{eH, []string{"コード", "品名"}, sjCode + "|" + sjHinmei, "", ""},
		{eD, []string{"1", "ポンプ"}, "1|" + sjPump, "", ""},
		{eD, []string{"2", "ソース"}, "2|" + sjSource, "", ""},
		{eD, []string{"3", "ポンプ\"x"}, "3|" + sjPump + "\"x", "", ""},
		{eD, []string{"4", "ソース|ポンプ"}, "4|\"" + sjSource + "|" + sjPump + "\"", "", ""},
		{eD, []string{"5", "山田太郎"}, "5|" + sjYamada, "", ""},
	}
	rows, det := readText(t, "csv", []byte(in), source.Options{}, csvDefaults)
	if det.Name != "shift_jis" {
		t.Fatalf("encoding %+v, want shift_jis", det)
	}
	if d := openCSV(t, in, source.Options{}, csvDefaults).Dialect(); d.Delimiter != '|' {
		t.Fatalf("delimiter %q, want '|' (detected in the decoded sample)", d.Delimiter)
	}
	checkEncRows(t, rows, "shift_jis", want)
	// Tiny buffers: characters and the masker's state cross chunk borders.
	for _, size := range []int{16, 17, 18, 19, 23} {
		cfg := readerConfig{bufSize: size, sampleSize: 16, maxRecord: 1 << 20}
		rows, _ := readText(t, "csv", []byte(in), source.Options{Encoding: "sjis", Delimiter: '|', Header: "yes"}, cfg)
		checkEncRows(t, rows, "shift_jis", want)
	}
}

func TestEncodingCSVGB18030(t *testing.T) {
	in := gbBianhao + "," + gbMingch + "\n1," + gbBeijing + "\n2," + gbZhang + gbGrin + "\n3," + gbShangh + "\n"
	rows, det := readText(t, "csv", []byte(in), source.Options{}, csvDefaults)
	if det.Name != "gb18030" {
		t.Fatalf("encoding %+v, want gb18030", det)
	}
	checkEncRows(t, rows, "gb18030", []encRow{
		{eH, []string{"编号", "名称"}, gbBianhao + "," + gbMingch, "", ""},
		{eD, []string{"1", "北京有限公司"}, "1," + gbBeijing, "", ""},
		{eD, []string{"2", "张伟😀"}, "2," + gbZhang + gbGrin, "", ""},
		{eD, []string{"3", "上海"}, "3," + gbShangh, "", ""},
	})
}

// x/text's gb18030 decoder takes 0x81 ';' 0x81 '0' for one four-byte
// character; GB18030 allows only digits as its second byte. The stray lead
// byte must make its row an exception, not swallow the delimiter.
func TestEncodingCSVGB18030StrayLeadBeforeDelimiter(t *testing.T) {
	in := "a;b\n\x81;\x810\n1;" + gbShangh + "\n"
	rows, _ := readText(t, "csv", []byte(in), source.Options{Encoding: "gbk", Delimiter: ';', Header: "yes"}, csvDefaults)
	checkEncRows(t, rows, "gb18030", []encRow{
		{eH, []string{"a", "b"}, "a;b", "", ""},
		{eM, []string{"\uFFFD", "\uFFFD0"}, "\x81;\x810", "encoding", "invalid gb18030 byte sequence 0x81 at byte 0 of the row"},
		{eD, []string{"1", "上海"}, "1;" + gbShangh, "", ""},
	})
}

func TestEncodingCSVWindows1252(t *testing.T) {
	in := "id,name,price\n1,M\xFCller,\x80 5\n2,Bj\xF6rk,\x80 7\n3,bad\x81byte,0\n"
	for _, opts := range []source.Options{{}, {Encoding: "latin1"}, {Encoding: "cp1252"}} {
		rows, det := readText(t, "csv", []byte(in), opts, csvDefaults)
		if det.Name != "windows-1252" {
			t.Fatalf("%+v: encoding %+v, want windows-1252", opts, det)
		}
		checkEncRows(t, rows, "windows-1252", []encRow{
			{eH, []string{"id", "name", "price"}, "id,name,price", "", ""},
			{eD, []string{"1", "Müller", "€ 5"}, "1,M\xFCller,\x80 5", "", ""},
			{eD, []string{"2", "Björk", "€ 7"}, "2,Bj\xF6rk,\x80 7", "", ""},
			{eM, []string{"3", "bad\uFFFDbyte", "0"}, "3,bad\x81byte,0", "encoding", "invalid windows-1252 byte sequence 0x81 at byte 5 of the row"},
		})
	}
}

func TestEncodingCSVUTF16(t *testing.T) {
	text := "id,name\r\n1,한일정밀\r\n\r\n2,Mü😀\r\n3,\"a\r\nb\"\r\n"
	want := func(be bool) []encRow {
		return []encRow{
			{eH, []string{"id", "name"}, string(u16("id,name", be)), "", ""},
			{eD, []string{"1", "한일정밀"}, string(u16("1,한일정밀", be)), "", ""},
			{eB, nil, string(u16("", be)), "", ""},
			{eD, []string{"2", "Mü😀"}, string(u16("2,Mü😀", be)), "", ""},
			{eD, []string{"3", "a\r\nb"}, string(u16("3,\"a\r\nb\"", be)), "", ""},
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
		enc  string
		bom  int
		opts source.Options
	}{
		{"LE with BOM", append([]byte{0xFF, 0xFE}, u16(text, false)...), "utf-16le", 2, source.Options{}},
		{"BE with BOM", append([]byte{0xFE, 0xFF}, u16(text, true)...), "utf-16be", 2, source.Options{}},
		{"LE without BOM", u16(text, false), "utf-16le", 0, source.Options{}},
		{"BE without BOM", u16(text, true), "utf-16be", 0, source.Options{}},
		{"LE pinned as utf-16", u16(text, false), "utf-16le", 0, source.Options{Encoding: "utf-16"}},
		{"BOM overrides the pin", append([]byte{0xFE, 0xFF}, u16(text, true)...), "utf-16be", 2, source.Options{Encoding: "utf-16le"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cfg := range []readerConfig{csvDefaults, {bufSize: 16, sampleSize: 16, maxRecord: 1 << 20}} {
				opts := tc.opts
				if cfg.bufSize == 16 {
					opts.Header = "yes"
				}
				rows, det := readText(t, "csv", tc.data, opts, cfg)
				if det.Name != tc.enc || det.BOM != tc.bom {
					t.Fatalf("encoding %+v, want %s with a %d-byte BOM", det, tc.enc, tc.bom)
				}
				checkEncRows(t, rows, tc.enc, want(tc.enc == "utf-16be"))
			}
		})
	}
	// A lone surrogate and an odd last byte make their rows exceptions; Raw
	// keeps the stored bytes.
	data := append([]byte{0xFF, 0xFE}, u16("id,name\n1,ok\n2,a", false)...)
	data = append(data, 0x00, 0xD8) // lone high surrogate
	data = append(data, u16("b\n3,fine\n4,x", false)...)
	data = append(data, 'y') // odd last byte
	rows, _ := readText(t, "csv", data, source.Options{}, csvDefaults)
	checkEncRows(t, rows, "utf-16le", []encRow{
		{eH, []string{"id", "name"}, string(u16("id,name", false)), "", ""},
		{eD, []string{"1", "ok"}, string(u16("1,ok", false)), "", ""},
		{eM, []string{"2", "a\uFFFDb"}, string(u16("2,a", false)) + "\x00\xD8" + string(u16("b", false)), "encoding", "invalid utf-16le byte sequence 0x00 0xD8 at byte 6 of the row"},
		{eD, []string{"3", "fine"}, string(u16("3,fine", false)), "", ""},
		{eM, []string{"4", "x\uFFFD"}, string(u16("4,x", false)) + "y", "encoding", "invalid utf-16le byte sequence 0x79 at byte 6 of the row"},
	})
}

func TestEncodingCSVInvalidUTF8Row(t *testing.T) {
	in := "id,name\n1,Müller\n2,ab\xFFc\n3,Zoë\n4,\"x\xE2\x82\"\n5,already \uFFFD damaged\n6,Ørsted\n"
	rows, det := readText(t, "csv", []byte(in), source.Options{}, csvDefaults)
	if det.Name != "utf-8" {
		t.Fatalf("encoding %+v, want utf-8", det)
	}
	checkEncRows(t, rows, "", []encRow{
		{eH, []string{"id", "name"}, "id,name", "", ""},
		{eD, []string{"1", "Müller"}, "1,Müller", "", ""},
		{eM, []string{"2", "ab\uFFFDc"}, "2,ab\xFFc", "encoding", "invalid utf-8 byte sequence 0xFF at byte 4 of the row"},
		{eD, []string{"3", "Zoë"}, "3,Zoë", "", ""},
		{eM, []string{"4", "x\uFFFD\uFFFD"}, "4,\"x\xE2\x82\"", "encoding", "invalid utf-8 byte sequence 0xE2 0x82 at byte 4 of the row"},
		{eM, []string{"5", "already \uFFFD damaged"}, "5,already \uFFFD damaged", "encoding", "replacement character U+FFFD (0xEF 0xBF 0xBD in utf-8"},
		{eD, []string{"6", "Ørsted"}, "6,Ørsted", "", ""},
	})
}

func TestEncodingCSVEUCKRBrokenRow(t *testing.T) {
	in := "id,name\n1," + krHanil + "\n2,\xC7A" + krDaehan + "\n3," + krSamsung + "\n4," + krKim + "\n5," + krLee + "\n6," + krCorp + "\n7," + krKim[:3] + "\n"
	rows, det := readText(t, "csv", []byte(in), source.Options{}, csvDefaults)
	if det.Name != "euc-kr" {
		t.Fatalf("encoding %+v, want euc-kr despite the broken sequences", det)
	}
	checkEncRows(t, rows, "euc-kr", []encRow{
		{eH, []string{"id", "name"}, "id,name", "", ""},
		{eD, []string{"1", "한일정밀"}, "1," + krHanil, "", ""},
		{eM, []string{"2", "\uFFFDA대한상사"}, "2,\xC7A" + krDaehan, "encoding", "invalid euc-kr byte sequence 0xC7 at byte 2 of the row"},
		{eD, []string{"3", "삼성전자"}, "3," + krSamsung, "", ""},
		{eD, []string{"4", "김민준"}, "4," + krKim, "", ""},
		{eD, []string{"5", "이서연"}, "5," + krLee, "", ""},
		{eD, []string{"6", "주식회사"}, "6," + krCorp, "", ""},
		{eM, []string{"7", "김\uFFFD"}, "7," + krKim[:3], "encoding", "invalid euc-kr byte sequence 0xB9 at byte 4 of the row"},
	})
}

// An ASCII sample says nothing: the file is read as UTF-8, and a row in
// another encoding becomes an exception that says what it looks like.
func TestEncodingCSVHintAfterASCIISample(t *testing.T) {
	in := "id,name\n" + strings.Repeat("1,Ann\n", 10) + "2," + krHanil + krDaehan + "\n"
	cfg := readerConfig{bufSize: 64, sampleSize: 64, maxRecord: 1 << 20}
	rows, det := readText(t, "csv", []byte(in), source.Options{}, cfg)
	if det.Name != "utf-8" || det.Confidence > 0.5 {
		t.Fatalf("encoding %+v, want utf-8 with low confidence", det)
	}
	last := rows[len(rows)-1]
	if last.Kind != eM || last.Rule != "encoding" || !strings.Contains(last.Reason, "the row looks like euc-kr: pin the file's encoding") {
		t.Fatalf("last row %v %q %q, want an encoding exception hinting at euc-kr", last.Kind, last.Rule, last.Reason)
	}
}

func TestEncodingPinned(t *testing.T) {
	// Two hanzi are ambiguous: detection prefers euc-kr; the pin decides.
	in := "name\n" + gbLiMing + "\n"
	if _, det := readText(t, "csv", []byte(in), source.Options{Header: "yes"}, csvDefaults); det.Name != "euc-kr" {
		t.Fatalf("unpinned: %+v (this test assumes euc-kr)", det)
	}
	rows, det := readText(t, "csv", []byte(in), source.Options{Header: "yes", Encoding: "GB2312"}, csvDefaults)
	if det.Name != "gb18030" || det.Confidence != 1 || det.BOM != 0 || !strings.Contains(det.Reason, `pinned as "GB2312"`) {
		t.Fatalf("pinned: %+v", det)
	}
	checkEncRows(t, rows, "gb18030", []encRow{
		{eH, []string{"name"}, "name", "", ""},
		{eD, []string{"李明"}, gbLiMing, "", ""},
	})

	// Pinned UTF-8 on a Windows-1252 file: the Latin-1 rows are exceptions.
	rows, _ = readText(t, "csv", []byte("id,name\n1,M\xFCller\n2,Ann\n"), source.Options{Encoding: "utf8"}, csvDefaults)
	checkEncRows(t, rows, "", []encRow{
		{eH, []string{"id", "name"}, "id,name", "", ""},
		{eM, []string{"1", "M\uFFFDller"}, "1,M\xFCller", "encoding", "invalid utf-8 byte sequence 0xFC at byte 3 of the row"},
		{eD, []string{"2", "Ann"}, "2,Ann", "", ""},
	})

	// A byte order mark overrides the pin.
	rows, det = readText(t, "csv", []byte("\xEF\xBB\xBFid,name\n1,한일정밀\n"), source.Options{Encoding: "euc-kr"}, csvDefaults)
	if det.Name != "utf-8" || det.BOM != 3 || !strings.Contains(det.Reason, "overrides the pinned") {
		t.Fatalf("BOM and pin: %+v", det)
	}
	checkEncRows(t, rows, "", []encRow{
		{eH, []string{"id", "name"}, "id,name", "", ""},
		{eD, []string{"1", "한일정밀"}, "1,한일정밀", "", ""},
	})
}

func TestEncodingMixedFolder(t *testing.T) {
	files := map[string][]byte{
		"a.csv":       []byte("id,name\n1,한일정밀\n"),
		"b.csv":       []byte("id,name\n1," + krHanil + "\n2," + krDaehan + "\n"),
		"c.csv":       []byte("id,name\n1,Ann\n"),
		"d.csv":       []byte("\xEF\xBB\xBFid,name\n1,대한상사\n"),
		"e.ndjson":    []byte(`{"id":1,"name":"` + sjYamada + `","kana":"` + sjSource + `","x":"` + sjHyo + `"}` + "\n"),
		"f.csv":       append([]byte{0xFF, 0xFE}, u16("id,name\n1,삼성전자\n", false)...),
		"sub/g.csv":   []byte("id,name\n1," + krSamsung + "\n"),
		"sub/h.jsonl": []byte(`{"id":1,"name":"` + krKim + `"}` + "\n"),
	}
	want := map[string]struct {
		enc    string
		values [][]string
	}{
		"a.csv":       {"utf-8", [][]string{{"1", "한일정밀"}}},
		"b.csv":       {"euc-kr", [][]string{{"1", "한일정밀"}, {"2", "대한상사"}}},
		"c.csv":       {"utf-8", [][]string{{"1", "Ann"}}},
		"d.csv":       {"utf-8", [][]string{{"1", "대한상사"}}},
		"e.ndjson":    {"shift_jis", [][]string{{"1", "山田太郎", "ソース", "表"}}},
		"f.csv":       {"utf-16le", [][]string{{"1", "삼성전자"}}},
		"sub/g.csv":   {"euc-kr", [][]string{{"1", "삼성전자"}}},
		"sub/h.jsonl": {"euc-kr", [][]string{{"1", "김민준"}}},
	}
	src := New(writeTree(t, files))
	ctx := context.Background()
	units, err := src.List(ctx, []string{"**"})
	if err != nil || len(units) != len(files) {
		t.Fatalf("List = %v, %v", units, err)
	}
	for _, u := range units {
		rr, err := src.Open(ctx, u, source.Options{})
		if err != nil {
			t.Fatalf("%s: %v", u.Name, err)
		}
		enc, ok := rr.(interface{ Encoding() clean.Detection })
		if !ok {
			t.Fatalf("%s: reader has no Encoding method", u.Name)
		}
		rows, err := sourcetest.ReadAll(rr)
		rr.Close()
		if err != nil {
			t.Fatalf("%s: %v", u.Name, err)
		}
		w := want[u.Name]
		if got := enc.Encoding().Name; got != w.enc {
			t.Errorf("%s: encoding %s, want %s (%s)", u.Name, got, w.enc, enc.Encoding().Reason)
		}
		var got [][]string
		for _, r := range rows {
			if r.Kind == source.Data {
				got = append(got, r.Values)
			} else if r.Kind != source.Header {
				t.Errorf("%s: row %v %q %s", u.Name, r.Kind, r.Raw, r.Reason)
			}
		}
		if !reflect.DeepEqual(got, w.values) {
			t.Errorf("%s: values %q, want %q", u.Name, got, w.values)
		}
		if err := checkRawUnit(files[u.Name], rows, enc.Encoding()); err != nil {
			t.Errorf("%s: %v", u.Name, err)
		}
	}
}

func TestEncodingNDJSON(t *testing.T) {
	nd := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
	t.Run("euc-kr", func(t *testing.T) {
		in := nd(`{"id":1,"name":"`+krHanil+`"}`, `{"id":2,"name":"`+krDaehan+`"}`, "{\"id\":3,\"name\":\"\xC7A\"}", `{"id":4,"name":"`+krCorp+`"}`)
		rows, det := readText(t, "ndjson", []byte(in), source.Options{}, ndjsonDefaults)
		if det.Name != "euc-kr" {
			t.Fatalf("encoding %+v", det)
		}
		checkEncRows(t, rows, "euc-kr", []encRow{
			{eD, []string{"1", "한일정밀"}, `{"id":1,"name":"` + krHanil + `"}`, "", ""},
			{eD, []string{"2", "대한상사"}, `{"id":2,"name":"` + krDaehan + `"}`, "", ""},
			{eM, []string{"3", "\uFFFDA"}, "{\"id\":3,\"name\":\"\xC7A\"}", "encoding", "invalid euc-kr byte sequence 0xC7 at byte 16 of the row"},
			{eD, []string{"4", "주식회사"}, `{"id":4,"name":"` + krCorp + `"}`, "", ""},
		})
	})
	t.Run("shift_jis backslash trail bytes", func(t *testing.T) {
		// 表 is 0x95 0x5C: read byte-wise, `表"` would be an escaped quote.
		in := nd(`{"id":1,"name":"`+sjHyo+`"}`, `{"id":2,"name":"`+sjSource+`\\`+sjHyo+`"}`)
		rows, _ := readText(t, "ndjson", []byte(in), source.Options{Encoding: "Shift_JIS"}, ndjsonDefaults)
		checkEncRows(t, rows, "shift_jis", []encRow{
			{eD, []string{"1", "表"}, `{"id":1,"name":"` + sjHyo + `"}`, "", ""},
			{eD, []string{"2", `ソース\表`}, `{"id":2,"name":"` + sjSource + `\\` + sjHyo + `"}`, "", ""},
		})
	})
	t.Run("utf-16le", func(t *testing.T) {
		text := nd(`{"id":1,"name":"한일정밀"}`, ``, `{"id":2,"name":"😀"}`)
		data := append([]byte{0xFF, 0xFE}, u16(text, false)...)
		rows, det := readText(t, "ndjson", data, source.Options{}, ndjsonDefaults)
		if det.Name != "utf-16le" {
			t.Fatalf("encoding %+v", det)
		}
		checkEncRows(t, rows, "utf-16le", []encRow{
			{eD, []string{"1", "한일정밀"}, string(u16(`{"id":1,"name":"한일정밀"}`, false)), "", ""},
			{eB, nil, "", "", ""},
			{eD, []string{"2", "😀"}, string(u16(`{"id":2,"name":"😀"}`, false)), "", ""},
		})
	})
	t.Run("utf-8 invalid bytes and U+FFFD escapes", func(t *testing.T) {
		in := nd(`{"id":1,"name":"Zoë"}`, `{"id":2,"name":"a`+"\xFF"+`b"}`, `{"id":3,"name":"\ud800"}`, `{"id":4,"name":"\ufffd"}`, `{"id":5,"name":"\ud83d\ude00"}`)
		rows, _ := readText(t, "ndjson", []byte(in), source.Options{}, ndjsonDefaults)
		checkEncRows(t, rows, "", []encRow{
			{eD, []string{"1", "Zoë"}, `{"id":1,"name":"Zoë"}`, "", ""},
			{eM, []string{"2", "a\uFFFDb"}, `{"id":2,"name":"a` + "\xFF" + `b"}`, "encoding", "invalid utf-8 byte sequence 0xFF at byte 17 of the row"},
			{eM, []string{"3", "\uFFFD"}, `{"id":3,"name":"\ud800"}`, "encoding", `value of "name" decodes to the replacement character U+FFFD`},
			{eM, []string{"4", "\uFFFD"}, `{"id":4,"name":"\ufffd"}`, "encoding", `value of "name" decodes to the replacement character U+FFFD`},
			{eD, []string{"5", "😀"}, `{"id":5,"name":"\ud83d\ude00"}`, "", ""},
		})
	})
}

func TestEncodingUnreadable(t *testing.T) {
	tests := []struct {
		name   string
		format string
		in     []byte
		opts   source.Options
		reason string
	}{
		{"UTF-32 LE", "csv", []byte("\xFF\xFE\x00\x00a\x00\x00\x00"), source.Options{}, "UTF-32 encoded text (byte order mark): convert the file to UTF-8"},
		{"NUL bytes that are not UTF-16", "csv", []byte("id,v\n1,\x00\x01\x02\n"), source.Options{}, "binary content (NUL bytes), not a CSV file"},
		{"NUL bytes in a Windows-1252 file", "csv", []byte("id,v\n1,M\xFCller\x00\n"), source.Options{}, "binary content (NUL bytes), not a CSV file"},
		{"UTF-16 text holding U+0000", "csv", append([]byte{0xFF, 0xFE}, u16("id,v\n1,\x00\n", false)...), source.Options{}, "binary content (NUL bytes), not a CSV file"},
		{"UTF-16 NDJSON holding U+0000", "ndjson", append([]byte{0xFE, 0xFF}, u16("{\"a\":\"\x00\"}\n", true)...), source.Options{}, "binary content (NUL bytes), not an NDJSON file"},
		{"unknown pinned encoding", "csv", []byte("a\n1\n"), source.Options{Encoding: "ebcdic"}, "text encoding"},
		{"a letter as delimiter in Shift-JIS", "csv", []byte("aXb\n"), source.Options{Encoding: "sjis", Delimiter: 'X'}, "'X' as delimiter or quote is not supported in shift_jis text, where it can be the second byte of a character"},
		{"a digit as quote in GB18030", "csv", []byte("a,b\n"), source.Options{Encoding: "gb18030", Quote: '7'}, "'7' as delimiter or quote is not supported in gb18030 text, where it can be the second byte of a character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.format == "ndjson" {
				_, err = newNDJSONReader(context.Background(), bytes.NewReader(tc.in), "t.ndjson", tc.opts, ndjsonDefaults)
			} else {
				_, err = newCSVReader(context.Background(), bytes.NewReader(tc.in), "t.csv", tc.opts, csvDefaults)
			}
			var ue *UnreadableError
			if !errors.Is(err, source.ErrUnreadable) || !errors.As(err, &ue) || ue.Reason != tc.reason {
				t.Fatalf("err = %v, want unreadable with reason %q", err, tc.reason)
			}
		})
	}
	_, err := newCSVReader(context.Background(), strings.NewReader("a\n"), "t.csv", source.Options{Encoding: "ebcdic"}, csvDefaults)
	if !errors.Is(err, clean.ErrUnknownEncoding) {
		t.Errorf("unknown pinned encoding: %v, want it to wrap clean.ErrUnknownEncoding", err)
	}
	// Windows-1252 and UTF-8 keep every delimiter.
	if _, err := newCSVReader(context.Background(), strings.NewReader("aXb\n"), "t.csv", source.Options{Encoding: "cp1252", Delimiter: 'X'}, csvDefaults); err != nil {
		t.Errorf("windows-1252 with delimiter X: %v", err)
	}
}

// The UTF-16 transcoding is lossless for any bytes: utf16Raw rebuilds
// exactly what utf16Reader read, whatever the size of the reads.
func TestUTF16TranscodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	units := []uint16{'a', '\n', '\r', 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xFFFD, 0xFEFF, 0x00E9, 0xD55C, 0x0A00, 0x000A}
	for n := range 3000 {
		var in []byte
		for range rng.IntN(12) {
			u := units[rng.IntN(len(units))]
			in = append(in, byte(u), byte(u>>8))
		}
		if n%3 == 0 {
			in = append(in, byte(rng.IntN(256))) // odd length
		}
		checkUTF16RoundTrip(t, in, n%2 == 0, 1+rng.IntN(5))
	}
}

func checkUTF16RoundTrip(t *testing.T, in []byte, be bool, readSize int) {
	t.Helper()
	r := &utf16Reader{r: &chunkReader{b: in, n: readSize}, be: be}
	var out []byte
	buf := make([]byte, readSize)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if back := utf16Raw(nil, out, be); !bytes.Equal(back, in) {
		t.Fatalf("% X → %q → % X", in, out, back)
	}
	whole, used := transcodeUTF16(nil, in, be, true)
	if used != len(in) || !bytes.Equal(whole, out) {
		t.Fatalf("% X: streamed %q, at once %q", in, out, whole)
	}
	// Every LF in the UTF-8 stream is a U+000A unit: lines rebuild apart.
	var lines []byte
	for i, line := range bytes.Split(whole, []byte("\n")) {
		if i > 0 {
			lines = utf16Raw(lines, []byte("\n"), be)
		}
		lines = utf16Raw(lines, line, be)
	}
	if !bytes.Equal(lines, in) {
		t.Fatalf("% X: rebuilt line by line as % X", in, lines)
	}
}

type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// FuzzUTF16Transcode checks the round trip on arbitrary bytes.
func FuzzUTF16Transcode(f *testing.F) {
	f.Add([]byte("a\x00\x00\xD8\n\x00"), uint8(1))
	f.Add([]byte("\x3D\xD8\x00\xDEx"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		checkUTF16RoundTrip(t, in, mode&1 == 1, 1+int(mode>>1)%7)
	})
}
