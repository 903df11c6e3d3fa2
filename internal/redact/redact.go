// Package redact is the one place that keeps database credentials out of
// messages. Every error or text that may quote a DSN passes through String
// or Error before it is printed, logged or written to a report: the DSN
// itself and its password (as written, percent-decoded and percent-encoded)
// are replaced, and password-shaped parts of any DSN form — URL user info
// (postgres://, mysql://, sqlserver://, oracle://), key=value (password=,
// pwd=), go-sql-driver (user:pw@tcp(host)/db) — are masked even when the
// DSN is not known.
package redact

import (
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces what is removed.
const Mask = "[redacted]"

var (
	// scheme://user:password@
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*):([^\s@/]*)@`)
	// password=... in key=value DSNs and URL queries; quoted values too.
	kvPassword = regexp.MustCompile(`(?i)\b(password|passwd|pwd|pass)(\s*=\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s;&'"]+)`)
	// go-sql-driver: user:password@tcp(host)/db, @unix(...), @(host)
	mysqlUserinfo = regexp.MustCompile(`([^\s:/@(]+):([^\s@]*)@((?:tcp6?|unix|udp)?\()`)
)

// Scrub masks every password-shaped part of s.
func Scrub(s string) string {
	if !strings.ContainsAny(s, "@=") {
		return s
	}
	s = urlUserinfo.ReplaceAllString(s, "$1:"+Mask+"@")
	s = kvPassword.ReplaceAllString(s, "$1$2"+Mask)
	s = mysqlUserinfo.ReplaceAllString(s, "$1:"+Mask+"@$3")
	return s
}

// Secrets are the strings of dsn that must not be shown: the DSN and its
// password in the spellings a driver may quote. Strings shorter than three
// bytes are left to Scrub's patterns (replacing them everywhere would
// mangle the message).
func Secrets(dsn string) []string {
	dsn = strings.TrimSpace(dsn)
	if dsn == "" {
		return nil
	}
	var pw []string
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.User != nil {
		if p, ok := u.User.Password(); ok {
			pw = append(pw, p)
		}
		// The password as written: the user info is the authority (after
		// ://, before the path, query or fragment) up to its last @.
		auth := dsn[strings.Index(dsn, "://")+3:]
		if k := strings.IndexAny(auth, "/?#"); k >= 0 {
			auth = auth[:k]
		}
		if j := strings.LastIndex(auth, "@"); j >= 0 {
			if _, p, ok := strings.Cut(auth[:j], ":"); ok {
				pw = append(pw, p)
			}
		}
	}
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		for k, vs := range u.Query() {
			if isPasswordKey(k) {
				pw = append(pw, vs...)
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatchIndex(dsn, -1) {
		v := dsn[m[6]:m[7]]
		pw = append(pw, v)
		if v[0] == '\'' || v[0] == '"' {
			pw = append(pw, v[1:len(v)-1])
			continue
		}
		// The pattern ends a bare value at & and ; too (URL queries, ADO
		// strings); a libpq key=value string ends it only at a space, an
		// ADO string at a ;. Every such reading is a secret.
		ws := strings.Fields(dsn[m[6]:])[0]
		semi, _, _ := strings.Cut(ws, ";")
		pw = append(pw, semi, ws)
	}
	if !strings.Contains(dsn, "://") {
		if at := strings.LastIndex(dsn, "@"); at > 0 {
			if _, p, ok := strings.Cut(dsn[:at], ":"); ok {
				pw = append(pw, p)
			}
		}
	}
	out := []string{dsn}
	for _, p := range pw {
		if p == "" {
			continue
		}
		out = append(out, p)
		if d, err := url.PathUnescape(p); err == nil {
			out = append(out, d)
		}
		out = append(out, url.QueryEscape(p), url.PathEscape(p))
	}
	// Longest first, so a password inside the DSN does not split it.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	keep := out[:0]
	for i, s := range out {
		if len(s) >= 3 && (i == 0 || s != out[i-1]) {
			keep = append(keep, s)
		}
	}
	return keep
}

func isPasswordKey(k string) bool {
	switch strings.ToLower(k) {
	case "password", "passwd", "pwd", "pass":
		return true
	}
	return false
}

// String removes every DSN of dsns and its password from s, then masks
// whatever still looks like a password.
func String(s string, dsns ...string) string {
	return replace(s, pairs(dsns))
}

// pairs lists each secret with its mask, longest first.
func pairs(dsns []string) []string {
	var rs []string
	for _, d := range dsns {
		for _, sec := range Secrets(d) {
			mask := Mask
			if sec == strings.TrimSpace(d) {
				mask = "[dsn]"
			}
			rs = append(rs, sec, mask)
		}
	}
	return rs
}

func replace(s string, rs []string) string {
	for i := 0; i+1 < len(rs); i += 2 {
		s = strings.ReplaceAll(s, rs[i], rs[i+1])
	}
	return Scrub(s)
}

// Error is err with its message passed through String; errors.Is and
// errors.As still see the original chain. nil stays nil.
func Error(err error, dsns ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := String(msg, dsns...)
	if clean == msg {
		return err
	}
	return &redacted{msg: clean, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }

// Unwrap keeps the chain for errors.Is/As (context.Canceled, sentinel
// errors); the wrapped message itself is never printed through it.
func (r *redacted) Unwrap() error { return r.err }

// HasPassword reports whether s is a DSN (in any form) that carries a
// password.
func HasPassword(s string) bool {
	return len(Secrets(s)) > 1
}

// Candidates are the values among vals that are DSNs with a password: what
// a verb's diagnostics must never show, whatever path they take.
func Candidates(vals ...string) []string {
	var out []string
	for _, v := range vals {
		if HasPassword(v) {
			out = append(out, v)
		}
	}
	return out
}

// Writer passes everything written to w through String with dsns. Each
// Write is redacted on its own (the fmt functions write a message whole).
func Writer(w io.Writer, dsns ...string) io.Writer { return &writer{w: w, rs: pairs(dsns)} }

type writer struct {
	w  io.Writer
	rs []string
}

func (r *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, replace(string(p), r.rs)); err != nil {
		return 0, err
	}
	return len(p), nil
}
