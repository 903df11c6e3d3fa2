package clean

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Hand-encoded samples; TestSampleBytes checks them against x/text's
// encoders.
const (
	krHanil   = "\xC7\xD1\xC0\xCF\xC1\xA4\xB9\xD0"                       // 한일정밀
	krDaehan  = "\xB4\xEB\xC7\xD1\xBB\xF3\xBB\xE7"                       // 대한상사
	krSamsung = "\xBB\xEF\xBC\xBA\xC0\xFC\xC0\xDA"                       // 삼성전자
	krKim     = "\xB1\xE8\xB9\xCE\xC1\xD8"                               // 김민준
	krLee     = "\xC0\xCC\xBC\xAD\xBF\xAC"                               // 이서연
	krCorp    = "\xC1\xD6\xBD\xC4\xC8\xB8\xBB\xE7"                       // 주식회사
	sjYamada  = "\x8E\x52\x93\x63\x91\xBE\x98\x59"                       // 山田太郎
	sjYamaKa  = "\x83\x84\x83\x7D\x83\x5F"                               // ヤマダ
	sjPump    = "\x83\x7C\x83\x93\x83\x76"                               // ポンプ
	sjSource  = "\x83\x5C\x81\x5B\x83\x58"                               // ソース
	sjCode    = "\x83\x52\x81\x5B\x83\x68"                               // コード
	sjHinmei  = "\x95\x69\x96\xBC"                                       // 品名
	sjSuzuki  = "\x97\xE9\x96\xD8"                                       // 鈴木
	gbZhang   = "\xD5\xC5\xCE\xB0"                                       // 张伟
	gbBeijing = "\xB1\xB1\xBE\xA9\xD3\xD0\xCF\xDE\xB9\xAB\xCB\xBE"       // 北京有限公司
	gbShangh  = "\xC9\xCF\xBA\xA3"                                       // 上海
	gbLiMing  = "\xC0\xEE\xC3\xF7"                                       // 李明
	gbGrin    = "\x94\x39\xFC\x36"                                       // 😀 (four bytes)
	cp1252    = "id,name,price\n1,M\xFCller,\x80 5\n2,Bj\xF6rk,\x80 7\n" // Müller, €, Björk
)

func TestSampleBytes(t *testing.T) {
	for _, tc := range []struct{ enc, text, bytes string }{
		{EUCKR, "한일정밀", krHanil}, {EUCKR, "대한상사", krDaehan}, {EUCKR, "삼성전자", krSamsung},
		{EUCKR, "김민준", krKim}, {EUCKR, "이서연", krLee}, {EUCKR, "주식회사", krCorp},
		{ShiftJIS, "山田太郎", sjYamada}, {ShiftJIS, "ヤマダ", sjYamaKa}, {ShiftJIS, "ポンプ", sjPump},
		{ShiftJIS, "ソース", sjSource}, {ShiftJIS, "コード", sjCode}, {ShiftJIS, "品名", sjHinmei}, {ShiftJIS, "鈴木", sjSuzuki},
		{GB18030, "张伟", gbZhang}, {GB18030, "北京有限公司", gbBeijing}, {GB18030, "上海", gbShangh},
		{GB18030, "李明", gbLiMing}, {GB18030, "😀", gbGrin},
		{Windows1252, "id,name,price\n1,Müller,€ 5\n2,Björk,€ 7\n", cp1252},
	} {
		enc, _, err := Lookup(tc.enc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := enc.NewEncoder().Bytes([]byte(tc.text))
		if err != nil || string(got) != tc.bytes {
			t.Errorf("%s %q encodes to % X, %v; the test has % X", tc.enc, tc.text, got, err, tc.bytes)
		}
		dec, err := Decode(tc.enc, []byte(tc.bytes))
		if err != nil || dec != tc.text {
			t.Errorf("Decode(%s, % X) = %q, %v; want %q", tc.enc, tc.bytes, dec, err, tc.text)
		}
	}
}

func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"utf-8": UTF8, "UTF8": UTF8, "utf_8": UTF8, "us-ascii": UTF8, "ASCII": UTF8,
		"utf-16": UTF16LE, "UTF-16LE": UTF16LE, "utf16le": UTF16LE, "ucs-2": UTF16LE, "unicode": UTF16LE,
		"utf-16be": UTF16BE, "UTF16BE": UTF16BE,
		"euc-kr": EUCKR, "EUC_KR": EUCKR, "cp949": EUCKR, "CP949": EUCKR, "ks_c_5601-1987": EUCKR, "windows-949": EUCKR, "uhc": EUCKR,
		"shift_jis": ShiftJIS, "Shift-JIS": ShiftJIS, "sjis": ShiftJIS, "SJIS": ShiftJIS, "cp932": ShiftJIS, "windows-31j": ShiftJIS, "ms932": ShiftJIS,
		"gb18030": GB18030, "GBK": GB18030, "gb2312": GB18030, "cp936": GB18030, "euc-cn": GB18030,
		"windows-1252": Windows1252, "cp1252": Windows1252, "latin1": Windows1252, "Latin-1": Windows1252,
		"iso-8859-1": Windows1252, "ISO_8859-1": Windows1252, " iso8859-1 ": Windows1252,
	} {
		enc, canon, err := Lookup(name)
		if err != nil || canon != want || enc == nil {
			t.Errorf("Lookup(%q) = %v, %q, %v; want %q", name, enc, canon, err, want)
		}
	}
	for _, name := range []string{"", "big5", "windows-1251", "utf-32", "koi8-r", "klingon"} {
		if _, _, err := Lookup(name); !errors.Is(err, ErrUnknownEncoding) {
			t.Errorf("Lookup(%q): %v, want ErrUnknownEncoding", name, err)
		}
	}
	for _, name := range Encodings() {
		if _, canon, err := Lookup(name); err != nil || canon != name {
			t.Errorf("Lookup(%q) = %q, %v: a canonical name must map to itself", name, canon, err)
		}
	}
	if _, _, err := Lookup("big5"); err == nil || !strings.Contains(err.Error(), "euc-kr") {
		t.Errorf("Lookup(big5) error %v should list the supported encodings", err)
	}
}

// EUC-KR is decoded as CP949: the extension syllables (lead 0x81–0xC6 with
// letter or 0x81–0xA0 trail bytes) decode too.
func TestEUCKRIsCP949(t *testing.T) {
	for in, want := range map[string]string{
		"\x8C\x63": "똠", // CP949 extension, ASCII trail byte 'c'
		"\xC7\xD1": "한", // KS X 1001
		"\x81\x41": "갂", // first CP949 extension syllable
	} {
		for _, name := range []string{"euc-kr", "cp949", "ks_c_5601-1987"} {
			got, err := Decode(name, []byte(in))
			if err != nil || got != want {
				t.Errorf("Decode(%s, % X) = %q, %v; want %q", name, in, got, err, want)
			}
		}
	}
}

func TestDetect(t *testing.T) {
	krFile := "id,name\n1," + krHanil + "\n2," + krDaehan + "\n3," + krSamsung + "\n"
	tests := []struct {
		name   string
		sample string
		all    bool // DetectAll: the sample is the whole file
		want   string
		bom    int
	}{
		{"empty", "", false, "utf-8", 0},
		{"ASCII", "id,name\n1,Ann\n", false, "utf-8", 0},
		{"UTF-8 BOM", "\xEF\xBB\xBFid,name\n", false, "utf-8", 3},
		{"UTF-8 BOM then EUC-KR bytes: the mark decides", "\xEF\xBB\xBF" + krHanil, false, "utf-8", 3},
		{"UTF-16LE BOM", "\xFF\xFEi\x00d\x00", false, "utf-16le", 2},
		{"UTF-16BE BOM", "\xFE\xFF\x00i\x00d", false, "utf-16be", 2},
		{"UTF-16LE without BOM", "i\x00d\x00,\x00n\x00a\x00m\x00e\x00\r\x00\n\x001\x00,\x00\x5C\xD5\n\x00", false, "utf-16le", 0},
		{"UTF-16BE without BOM", "\x00i\x00d\x00,\x00n\x00a\x00m\x00e\x00\n\x001\x00,\xD5\x5C\x00\n", false, "utf-16be", 0},
		{"NUL bytes that are not UTF-16: utf-8 (the reader refuses them)", "id,v\n1,\x00\x01\x02\n", false, "utf-8", 0},
		{"short NUL pattern is not enough", "x\x00y\n", false, "utf-8", 0},
		{"UTF-8 Korean", "id,name\n1,한일정밀\n2,대한상사\n", false, "utf-8", 0},
		{"UTF-8 cut in the middle of a character", "id,name\n1,한일정밀\n2,대\xED\x95", false, "utf-8", 0},
		{"UTF-8 with one invalid byte", "id,name\n1,Müller\n2,Zoë\n3,ab\xFFc\n4,Ørsted\n", false, "utf-8", 0},
		{"EUC-KR", krFile, false, "euc-kr", 0},
		{"EUC-KR names", "name\n" + krKim + "\n" + krLee + "\n" + krCorp + "\n", false, "euc-kr", 0},
		{"EUC-KR with one broken sequence", krFile + "4,\xC7A\n5," + krKim + "\n", false, "euc-kr", 0},
		{"EUC-KR CP949 extension syllable", "id,name\n1,\x8C\x63" + krKim + "\n2," + krLee + "\n", false, "euc-kr", 0},
		{"Shift-JIS", "id,name\n1," + sjYamada + "\n2," + sjYamaKa + "\n3," + sjSuzuki + "\n", false, "shift_jis", 0},
		{"Shift-JIS pipes and backslash trail bytes", sjCode + "|" + sjHinmei + "|" + sjSource + "\n1|" + sjPump + "|x\n", false, "shift_jis", 0},
		{"Shift-JIS half-width katakana", "\xD4\xCF\xC0\xDE \xC0\xDB\xB3,\xBD\xBD\xDE\xB7\n", false, "shift_jis", 0},
		{"GB18030", "id,name\n1," + gbZhang + "\n2," + gbBeijing + "\n3," + gbShangh + "\n", false, "gb18030", 0},
		{"GB18030 with a four-byte character", "id,name\n1," + gbBeijing + gbGrin + "\n2," + gbShangh + gbZhang + "\n", false, "gb18030", 0},
		{"UTF-8 with a damaged byte next to few valid characters", "id,name\n1,Zoë\n2,a\xFFb\n", false, "utf-8", 0},
		{"UTF-8 rows mixed with Windows-1252 rows: UTF-8, whose bad rows are exceptions", "id,name\n1,Müller\n2,M\xFCller\n3,Zoë\n4,Zo\xEB\n", false, "utf-8", 0},
		{"Windows-1252", cp1252, false, "windows-1252", 0},
		{"Windows-1252 é at the very end of the file", "caf\xE9", true, "windows-1252", 0},
		{"a lead byte cut by the end of the sample is not evidence", "caf\xE9", false, "utf-8", 0},
		{"Latin-1 letters", "name\nJos\xE9\nFran\xE7ois\nG\xFCnther\n", false, "windows-1252", 0},
		{"binary junk falls back to windows-1252", "\x81\x8D\x8F\x90\x9D\xFF\xFF", false, "windows-1252", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d Detection
			if tc.all {
				d = DetectAll([]byte(tc.sample))
			} else {
				d = Detect([]byte(tc.sample))
			}
			if d.Name != tc.want || d.BOM != tc.bom {
				t.Fatalf("Detect = %q (BOM %d), want %q (BOM %d); reason: %s", d.Name, d.BOM, tc.want, tc.bom, d.Reason)
			}
			if d.Reason == "" || d.Confidence < 0 || d.Confidence > 1 {
				t.Fatalf("Detect = %+v: want a reason and a confidence in [0, 1]", d)
			}
			if again := Detect([]byte(tc.sample)); !tc.all && again != d {
				t.Fatalf("Detect is not deterministic: %+v then %+v", d, again)
			}
		})
	}
}

func TestDetectConfidence(t *testing.T) {
	if d := Detect([]byte("\xEF\xBB\xBFx")); d.Confidence != 1 {
		t.Errorf("BOM: confidence %v, want 1", d.Confidence)
	}
	big := bytes.Repeat([]byte("1,"+krHanil+","+krDaehan+"\n"), 50)
	if d := Detect(big); d.Name != EUCKR || d.Confidence < 0.5 {
		t.Errorf("a large EUC-KR sample: %+v, want euc-kr with confidence ≥ 0.5", d)
	}
	if d := Detect([]byte("1," + krKim[:2])); d.Confidence >= 0.5 {
		t.Errorf("one syllable: %+v, want a low confidence", d)
	}
}

func TestDecode(t *testing.T) {
	type bad struct {
		off   int
		bytes string
		repl  bool
		ctrl  bool
	}
	tests := []struct {
		enc  string
		in   string
		want string
		bad  *bad
	}{
		{"utf-8", "Müller", "Müller", nil},
		{"utf-8", "ab\xFFc", "ab\uFFFDc", &bad{2, "\xFF", false, false}},
		{"utf-8", "a\xE2\x82b", "a\uFFFD\uFFFDb", &bad{1, "\xE2\x82", false, false}},
		{"utf-8", "a\uFFFDb", "a\uFFFDb", &bad{1, "\xEF\xBF\xBD", true, false}},
		{"euc-kr", krHanil, "한일정밀", nil},
		{"euc-kr", "1," + krKim[:2] + "\xC7A", "1,김\uFFFDA", &bad{4, "\xC7", false, false}},
		{"euc-kr", krKim[:3], "김\uFFFD", &bad{2, "\xB9", false, false}},
		{"euc-kr", "\xFF", "\uFFFD", &bad{0, "\xFF", false, false}},
		{"shift_jis", sjYamada + "|" + sjPump, "山田太郎|ポンプ", nil},
		{"shift_jis", "\xD4\xCF\xC0\xDE", "ﾔﾏﾀﾞ", nil},
		{"shift_jis", "a\x80b", "a\uFFFDb", &bad{1, "\x80", false, true}},
		{"shift_jis", "a\x83\x22", "a\uFFFD\"", &bad{1, "\x83", false, false}},
		{"gb18030", gbBeijing + gbGrin, "北京有限公司😀", nil},
		{"gb18030", "\x84\x31\xA4\x37", "\uFFFD", &bad{0, "\x84\x31\xA4\x37", true, false}},
		{"gb18030", "x\xFF", "x\uFFFD", &bad{1, "\xFF", false, false}},
		{"windows-1252", "M\xFCller \x80", "Müller €", nil},
		{"latin1", "a\x81b", "a\uFFFDb", &bad{1, "\x81", false, false}},
		{"utf-16le", "M\x00\xFC\x00\x3D\xD8\x00\xDE", "Mü😀", nil},
		{"utf-16be", "\x00M\x00\xFC\xD8\x3D\xDE\x00", "Mü😀", nil},
		{"utf-16le", "a\x00\x00\xD8b\x00", "a\uFFFDb", &bad{2, "\x00\xD8", false, false}},
		{"utf-16le", "a\x00b", "a\uFFFD", &bad{2, "b", false, false}},
		{"utf-16le", "\xFD\xFF", "\uFFFD", &bad{0, "\xFD\xFF", true, false}},
	}
	for _, tc := range tests {
		got, err := Decode(tc.enc, []byte(tc.in))
		if got != tc.want {
			t.Errorf("Decode(%s, % X) = %q, want %q", tc.enc, tc.in, got, tc.want)
		}
		var ie *InvalidError
		switch {
		case tc.bad == nil && err != nil:
			t.Errorf("Decode(%s, % X): %v, want no error", tc.enc, tc.in, err)
		case tc.bad != nil && !errors.As(err, &ie):
			t.Errorf("Decode(%s, % X): %v, want an *InvalidError", tc.enc, tc.in, err)
		case tc.bad != nil:
			if ie.Offset != tc.bad.off || string(ie.Bytes) != tc.bad.bytes || ie.Replacement != tc.bad.repl || ie.Control != tc.bad.ctrl {
				t.Errorf("Decode(%s, % X): %+v, want %+v", tc.enc, tc.in, ie, *tc.bad)
			}
			if _, canon, _ := Lookup(tc.enc); ie.Encoding != canon || !strings.Contains(ie.Error(), canon) {
				t.Errorf("error %q should name %s", ie.Error(), canon)
			}
		}
	}
	// Append appends and reuses.
	d, _ := NewDecoder("cp949")
	out, err := d.Append([]byte("x:"), []byte(krKim))
	if err != nil || string(out) != "x:김민준" || d.Name() != EUCKR {
		t.Errorf("Append = %q, %v (%s)", out, err, d.Name())
	}
	if _, err := Decode("klingon", nil); !errors.Is(err, ErrUnknownEncoding) {
		t.Errorf("Decode with an unknown encoding: %v", err)
	}
}

func TestInvalidErrorMessage(t *testing.T) {
	_, err := Decode("euc-kr", []byte("ab\xC7A"))
	if got, want := err.Error(), "invalid euc-kr byte sequence 0xC7 at byte 2"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// trailSet returns, by brute force over every lead byte, the ASCII bytes the
// x/text decoder consumes as a byte other than the first of a character.
func trailSet(t *testing.T, name string) [128]bool {
	if _, _, err := Lookup(name); err != nil {
		t.Fatal(err)
	}
	cd := newCharDec(name)
	var set [128]bool
	for b0 := 0x80; b0 <= 0xFF; b0++ {
		for c := 0; c < 0x80; c++ {
			for _, tail := range [][]byte{{0x81, 0x30}, {0x41, 0x41}} {
				in := append([]byte{byte(b0), byte(c)}, tail...)
				r, n := cd.next(in, true)
				if n >= 2 {
					set[c] = true
				}
				if n == 4 && r != utf8.RuneError {
					set[in[3]] = true
				}
			}
		}
	}
	return set
}

func TestCanTrail(t *testing.T) {
	for _, name := range []string{EUCKR, ShiftJIS, GB18030, Windows1252} {
		set := trailSet(t, name)
		for c := 0; c < 0x80; c++ {
			if got := CanTrail(name, byte(c)); got != set[c] {
				t.Errorf("CanTrail(%s, %q) = %v, but the decoder says %v", name, rune(c), got, set[c])
			}
		}
		for _, c := range []byte{'"', ',', ';', '\t', '\r', '\n'} {
			if set[c] {
				t.Errorf("%s: %q can be a trail byte", name, c)
			}
		}
	}
	// The known traps.
	for _, tc := range []struct {
		name string
		c    byte
		want bool
	}{{ShiftJIS, '|', true}, {ShiftJIS, '\\', true}, {GB18030, '|', true}, {EUCKR, '|', false}, {EUCKR, 'c', true}, {UTF8, '|', false}} {
		if CanTrail(tc.name, tc.c) != tc.want {
			t.Errorf("CanTrail(%s, %q) != %v", tc.name, tc.c, tc.want)
		}
	}
}

// maskByDecoder masks, using the decoder itself, every ASCII byte that is
// not the first byte of a character (digits excepted: TrailMasker leaves
// gb18030's four-byte digits alone).
func maskByDecoder(name string, src []byte) []byte {
	cd := newCharDec(name)
	out := bytes.Clone(src)
	for i := 0; i < len(src); {
		_, n := cd.next(src[i:], true)
		for j := i + 1; j < i+n; j++ {
			if src[j] < 0x80 && !('0' <= src[j] && src[j] <= '9') {
				out[j] = 0x80
			}
		}
		i += n
	}
	return out
}

func TestTrailMaskerMatchesDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("|\\\"@[]{}~,;\t\r\nAaZz09 ")
	for _, name := range []string{EUCKR, ShiftJIS, GB18030} {
		m := NewTrailMasker(name)
		check := func(src []byte) {
			t.Helper()
			want := maskByDecoder(name, src)
			m.Reset()
			if got := m.Mask(nil, src); !bytes.Equal(got, want) {
				t.Fatalf("%s: Mask(% X) = % X, want % X", name, src, got, want)
			}
			for cut := 0; cut <= len(src); cut++ { // in two chunks
				m.Reset()
				got := m.Mask(nil, src[:cut])
				got = m.Mask(got, src[cut:])
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: Mask(% X | % X) = % X, want % X", name, src[:cut], src[cut:], got, want)
				}
			}
		}
		for b0 := 0x80; b0 <= 0xFF; b0++ {
			for b1 := 0; b1 <= 0xFF; b1++ {
				check([]byte{byte(b0), byte(b1), '|', '"'})
			}
		}
		for range 20000 {
			src := make([]byte, rng.IntN(12))
			for i := range src {
				if rng.IntN(2) == 0 {
					src[i] = byte(0x80 + rng.IntN(0x80))
				} else {
					src[i] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			check(src)
		}
	}
	for _, name := range []string{UTF8, Windows1252, UTF16LE, "klingon"} {
		if NewTrailMasker(name) != nil {
			t.Errorf("NewTrailMasker(%s) != nil", name)
		}
	}
}

func TestSniffBOM(t *testing.T) {
	for in, want := range map[string]string{"\xEF\xBB\xBFa": "utf-8/3", "\xFF\xFEa": "utf-16le/2", "\xFE\xFFa": "utf-16be/2", "abc": "/0", "": "/0", "\xEF\xBB": "/0"} {
		name, n := SniffBOM([]byte(in))
		if got := name + "/" + string(rune('0'+n)); got != want {
			t.Errorf("SniffBOM(% X) = %s, want %s", in, got, want)
		}
	}
}

var detectSeeds = []string{
	"", "id,name\n1,Ann\n", "\xEF\xBB\xBF", "\xFF\xFE", "\xFE\xFF\x00a", "a\x00b\x00", "\x00a\x00b",
	"1," + krHanil + "\n", sjYamada + "|" + sjPump, gbBeijing + gbGrin, cp1252, "\xC7", "\x84\x31",
	"\x00\xD8\x00\xDC", "\xED\xA0\x80", "\x80\x81\x8D\xFF\xFE",
}

// FuzzDetect checks that Detect never panics, always names a canonical
// encoding with a confidence in [0, 1] and a reason, reports a BOM only
// when the sample starts with one, and is deterministic.
func FuzzDetect(f *testing.F) {
	for _, s := range detectSeeds {
		f.Add([]byte(s))
	}
	names := Encodings()
	f.Fuzz(func(t *testing.T, sample []byte) {
		for _, d := range []Detection{Detect(sample), DetectAll(sample)} {
			if !slices.Contains(names, d.Name) {
				t.Fatalf("Detect(%q).Name = %q, not canonical", sample, d.Name)
			}
			if !(d.Confidence >= 0 && d.Confidence <= 1) || d.Reason == "" {
				t.Fatalf("Detect(%q) = %+v", sample, d)
			}
			if bn, n := SniffBOM(sample); d.BOM != n || (n > 0 && d.Name != bn) {
				t.Fatalf("Detect(%q): BOM %d %s, SniffBOM says %d %s", sample, d.BOM, d.Name, n, bn)
			}
		}
		if a, b := Detect(sample), Detect(sample); a != b {
			t.Fatalf("not deterministic: %+v vs %+v", a, b)
		}
	})
}

// FuzzDecode checks that decoding never panics, always yields valid UTF-8,
// and yields U+FFFD exactly when it reports an error.
func FuzzDecode(f *testing.F) {
	for _, s := range detectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, name := range Encodings() {
			out, err := Decode(name, src)
			if !utf8.ValidString(out) {
				t.Fatalf("Decode(%s, %q) = %q: not valid UTF-8", name, src, out)
			}
			hasFFFD := strings.ContainsRune(out, utf8.RuneError)
			var ie *InvalidError
			if hasFFFD != (err != nil) || (err != nil && !errors.As(err, &ie)) {
				t.Fatalf("Decode(%s, %q) = %q, %v: U+FFFD iff an *InvalidError", name, src, out, err)
			}
			if ie != nil && (ie.Offset < 0 || ie.Offset+len(ie.Bytes) > len(src) || !bytes.Equal(src[ie.Offset:ie.Offset+len(ie.Bytes)], ie.Bytes) || len(ie.Bytes) == 0) {
				t.Fatalf("Decode(%s, %q): error %+v does not point into the input", name, src, ie)
			}
			if m := NewTrailMasker(name); m != nil {
				if got, want := m.Mask(nil, src), maskByDecoder(name, src); !bytes.Equal(got, want) {
					t.Fatalf("%s: Mask(%q) = %q, want %q", name, src, got, want)
				}
			}
		}
	})
}
