// Package fileuri turns local paths into file:// URIs and back. It is the
// one place in Lima that builds or strips the file: scheme: a path
// concatenated onto "file://" by hand is not a URI — a folder named
// pct%41 is read back as pctA, one with # or ? loses everything after it
// — and iceberg-go parses every location it is given (url.Parse, u.Path)
// and joins table, metadata and data locations onto the escaped form.
//
// SQLite's URI filenames (https://www.sqlite.org/uri.html) follow the same
// rules, so a database path becomes FromPath(path) + "?" + parameters.
package fileuri

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// FromPath returns the file:// URI of a local path (made absolute first),
// escaped per RFC 3986 and RFC 8089: %, #, ?, spaces, control characters
// and non-ASCII bytes are percent-encoded, so ToPath gives the path back.
func FromPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("fileuri: %w", err)
	}
	s := filepath.ToSlash(abs)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s // a Windows drive: file:///C:/…
	}
	return (&url.URL{Scheme: "file", Path: s}).String(), nil
}

// Is reports whether s is a file: URI (any letter case), not a path.
func Is(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "file:")
}

// ToPath returns the local path a file: URI names. A URI with a query, a
// fragment, a host other than localhost or a relative path is refused: it
// was built without escaping, and what it names is not what its writer
// meant.
func ToPath(uri string) (string, error) {
	if !Is(uri) {
		return "", fmt.Errorf("fileuri: %q is not a file: URI", uri)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("fileuri: %w", err)
	}
	switch {
	case u.Opaque != "" || !strings.HasPrefix(u.Path, "/"):
		return "", fmt.Errorf("fileuri: %q does not name an absolute path (write file:///absolute/path)", uri)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(uri, "#"):
		return "", fmt.Errorf("fileuri: %q has a query or fragment: a ? or # in a path is written %%3F or %%23", uri)
	case u.Host != "" && !strings.EqualFold(u.Host, "localhost"):
		return "", fmt.Errorf("fileuri: %q names host %q, not this machine", uri, u.Host)
	case u.User != nil:
		return "", fmt.Errorf("fileuri: %q carries user information", uri)
	}
	p := u.Path
	if len(p) >= 3 && p[2] == ':' && filepath.Separator == '\\' {
		p = p[1:] // /C:/… on Windows
	}
	return filepath.FromSlash(p), nil
}
