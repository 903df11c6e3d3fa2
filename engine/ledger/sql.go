package ledger

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// tables are the {name} tokens that name tables (schema-qualified in
// PostgreSQL); any other token is an index or sequence name.
var tables = map[string]bool{
	"runs": true, "watermarks": true, "locks": true, "exceptions": true,
	"exception_rules": true, "exception_events": true, "schema_migrations": true,
	"stagings": true,
}

var tokenRE = regexp.MustCompile(`\{[a-z_]+\}`)

// quoteIdent quotes an SQL identifier (the same rule in SQLite and
// PostgreSQL: double quotes, embedded quotes doubled).
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// rewriter turns the portable SQL of the core into one database's SQL.
type rewriter struct {
	schema    string // "" for SQLite
	dollar    bool   // $n placeholders
	forUpdate string
	cache     sync.Map
}

func (w *rewriter) sql(q string) string {
	if v, ok := w.cache.Load(q); ok {
		return v.(string)
	}
	out := tokenRE.ReplaceAllStringFunc(q, func(tok string) string {
		name := tok[1 : len(tok)-1]
		if name == "for_update" {
			return w.forUpdate
		}
		if tables[name] && w.schema != "" {
			return quoteIdent(w.schema) + "." + quoteIdent(name)
		}
		return quoteIdent(name)
	})
	if w.dollar {
		out = dollarParams(out)
	}
	w.cache.Store(q, out)
	return out
}

// dollarParams rewrites ? placeholders to $1, $2, … outside quoted text.
func dollarParams(q string) string {
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}
