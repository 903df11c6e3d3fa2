package faultpoint

import "testing"

func TestArmedAndArmedBytes(t *testing.T) {
	defer func(old string) { armed = old }(armed)
	for _, c := range []struct {
		armed string
		n     int64
		ok    bool
	}{
		{"data-file-bytes-4096", 4096, true},
		{"data-file-bytes-0", 0, true},
		{"data-file-bytes-", 0, false},
		{"data-file-bytes--1", 0, false},
		{"data-file-bytes-4k", 0, false},
		{"before-commit", 0, false},
		{"", 0, false},
	} {
		armed = c.armed
		if n, ok := ArmedBytes("data-file-bytes-"); n != c.n || ok != c.ok {
			t.Errorf("armed %q: ArmedBytes = %d, %v; want %d, %v", c.armed, n, ok, c.n, c.ok)
		}
	}
	armed = "after-commit"
	if !Armed("after-commit") || Armed("before-commit") || Armed("") {
		t.Error("Armed does not match the armed point exactly")
	}
	armed = ""
	if Armed("") {
		t.Error("nothing armed, yet Armed(\"\") is true")
	}
}
