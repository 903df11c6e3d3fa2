package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"weak"

	"go.yaml.in/yaml/v3"
)

// MaxPlanSize is the largest platform.yaml Load reads: 1 MiB holds a plan
// of some 300 tables of 50 columns (split a bigger estate into several
// workspaces), and parsing YAML costs some hundred times its size in
// memory (a 13.9 MB plan took 1.67 GB).
const MaxPlanSize = 1 << 20

// Load reads and parses the plan at path; see Parse. It does not validate
// the content: call Validate for that (a plan being built by the wizard may
// be incomplete). A missing or unreadable file gives an error wrapping the
// os error (errors.Is(err, fs.ErrNotExist) works); a bad file gives a
// *ValidationError.
func Load(path string) (*Plan, error) {
	// A FIFO, a device or a folder is no plan: opening a FIFO blocks until
	// a writer comes, past SIGINT and SIGTERM.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &ValidationError{File: path, Errors: []FieldError{{Msg: fmt.Sprintf("is not a regular file (%s); this is not a plan", fi.Mode().Type())}}}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPlanSize+1))
	if err != nil {
		return nil, fmt.Errorf("plan: read %s: %w", path, err)
	}
	if len(data) > MaxPlanSize {
		return nil, &ValidationError{File: path, Errors: []FieldError{{Msg: fmt.Sprintf("file is larger than %d MiB; this is not a plan", MaxPlanSize>>20)}}}
	}
	return Parse(data, path)
}

// Parse decodes a plan from YAML. filename is used in messages only.
//
// The document is first walked against the Go types by their yaml tags: every
// unknown field (with a suggestion when it looks like a misspelling), every
// value of the wrong shape or type and every key given twice is reported,
// all of them at once, as a *ValidationError whose entries carry the field
// path and line. A plan whose schema_version is newer than SchemaVersion is
// refused before its fields are looked at. Only then is the document decoded.
// The lines are remembered for Validate.
func Parse(data []byte, filename string) (*Plan, error) {
	c := &collector{file: filename}
	bad := func(line int, format string, args ...any) (*Plan, error) {
		c.addAt("", line, format, args...)
		return nil, c.result()
	}

	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return bad(0, "empty file; a plan starts with schema_version: %d", SchemaVersion)
		}
		line, msg := yamlError(err)
		return bad(line, "%s", msg)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return bad(extra.Line, "a second YAML document starts here; a plan is one document (remove the extra ---)")
	case !errors.Is(err, io.EOF):
		line, msg := yamlError(err)
		return bad(line, "%s", msg)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return bad(0, "empty file; a plan starts with schema_version: %d", SchemaVersion)
		}
		root = root.Content[0]
	}
	if isNull(root) {
		return bad(root.Line, "empty file; a plan starts with schema_version: %d", SchemaVersion)
	}
	if root.Kind != yaml.MappingNode {
		return bad(root.Line, "expected a mapping with schema_version, platform, sources, tables, …, got %s", describeNode(root))
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "schema_version" {
			continue
		}
		var v int
		if root.Content[i+1].Decode(&v) == nil && v > SchemaVersion {
			c.addAt("schema_version", root.Content[i].Line,
				"%d was written by a newer version of Lima; this build reads schema_version %d: upgrade lima-tui", v, SchemaVersion)
			return nil, c.result()
		}
	}

	w := newWalker(c, root)
	w.walk(root, reflect.TypeFor[Plan](), "", 0)
	if err := c.result(); err != nil {
		return nil, err
	}
	p := new(Plan)
	if err := root.Decode(p); err != nil {
		// The walk should have caught everything; report what the decoder says.
		line, msg := yamlError(err)
		return bad(line, "%s", msg)
	}
	setOrigin(p, &origin{file: filename, lines: c.lines})
	return p, nil
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// parserProblems are the messages of the yaml library's parser errors, whose
// line it reports counting from 0 (its scanner errors count from 1).
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError turns a yaml library error into a line and a message.
func yamlError(err error) (int, string) {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = strings.TrimSpace(te.Errors[0])
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if parserProblems[m[2]] {
			n++ // the yaml library reports parser (not scanner) errors 0-based
		}
		return n, "YAML syntax: " + m[2]
	}
	return 0, "YAML syntax: " + msg
}

// Lines of parsed plans.
//
// The lines a plan was parsed from are kept beside the plan, not in it, so
// that Plan stays plain data (reflect.DeepEqual and copies behave). The side
// table is keyed weakly and cleaned up when the plan is collected.

type origin struct {
	file  string
	lines map[string]int
}

var origins sync.Map // weak.Pointer[Plan] → *origin

func setOrigin(p *Plan, o *origin) {
	wp := weak.Make(p)
	if _, loaded := origins.Swap(wp, o); !loaded {
		runtime.AddCleanup(p, func(k weak.Pointer[Plan]) { origins.Delete(k) }, wp)
	}
}

func originOf(p *Plan) *origin {
	if v, ok := origins.Load(weak.Make(p)); ok {
		return v.(*origin)
	}
	return nil
}

// The walk.

const (
	maxDepth = 64
	// Node visits allowed beyond the size of the document (aliases expand).
	walkBudget = 1 << 20
)

type walker struct {
	c      *collector
	budget int
	over   bool
}

func newWalker(c *collector, root *yaml.Node) *walker {
	if c.lines == nil {
		c.lines = map[string]int{}
	}
	return &walker{c: c, budget: walkBudget + 64*countNodes(root)}
}

func countNodes(n *yaml.Node) int {
	total := 1
	for _, k := range n.Content {
		total += countNodes(k)
	}
	return total
}

func (w *walker) note(path string, line int) {
	if _, ok := w.c.lines[path]; !ok {
		w.c.lines[path] = line
	}
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string, depth int) {
	w.budget--
	if depth > maxDepth || w.budget < 0 {
		if !w.over {
			w.over = true
			w.c.addAt(path, n.Line, "nested too deeply or too many aliases; a plan is a plain document")
		}
		return
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		w.walk(n.Alias, t, path, depth+1)
		return
	}
	w.note(path, n.Line)
	if isNull(n) {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		w.walk(n, t.Elem(), path, depth+1)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.c.addAt(path, n.Line, "expected fields (name: value, one per line), got %s", describeNode(n))
			return
		}
		w.structFields(n, t, path, depth, map[string]int{})
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.c.addAt(path, n.Line, "expected named entries (name: …, one per line), got %s", describeNode(n))
			return
		}
		w.mapEntries(n, t, path, depth, map[string]int{})
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			msg := fmt.Sprintf("expected a list, got %s", describeNode(n))
			if n.Kind == yaml.ScalarNode && t.Elem().Kind() == reflect.String {
				msg += fmt.Sprintf(`; write [%s] or one "- item" per line`, n.Value)
			}
			w.c.addAt(path, n.Line, "%s", msg)
			return
		}
		for i, item := range n.Content {
			ip := joinIndex(path, i)
			w.note(ip, item.Line)
			w.walk(item, t.Elem(), ip, depth+1)
		}
	default:
		w.scalar(n, t, path)
	}
}

// pairs calls f for each key/value of a mapping, following merge keys (<<).
// explicit is false for pairs that come from a merge.
func (w *walker) pairs(n *yaml.Node, path string, depth int, f func(k, v *yaml.Node, explicit bool)) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			var sources []*yaml.Node
			switch m := deref(v); m.Kind {
			case yaml.MappingNode:
				sources = []*yaml.Node{m}
			case yaml.SequenceNode:
				for _, s := range m.Content {
					sources = append(sources, deref(s))
				}
			}
			for _, s := range sources {
				if s.Kind != yaml.MappingNode {
					w.c.addAt(path, k.Line, "<< merges a mapping, got %s", describeNode(s))
					continue
				}
				if depth > maxDepth {
					continue
				}
				w.pairs(s, path, depth+1, func(k, v *yaml.Node, _ bool) { f(k, v, false) })
			}
			continue
		}
		f(k, v, true)
	}
}

func (w *walker) structFields(n *yaml.Node, t reflect.Type, path string, depth int, seen map[string]int) {
	fields := fieldsOf(t)
	w.pairs(n, path, depth, func(k, v *yaml.Node, explicit bool) {
		k = deref(k)
		if k.Kind != yaml.ScalarNode {
			w.c.addAt(path, k.Line, "expected a field name, got %s", describeNode(k))
			return
		}
		fp := joinKey(path, k.Value)
		ft, ok := fields.byName[k.Value]
		if !ok {
			w.c.addAt(fp, k.Line, "unknown field%s", unknownFieldHint(k.Value, fields))
			return
		}
		if explicit {
			if first, dup := seen[k.Value]; dup {
				w.c.addAt(fp, k.Line, "given twice (first at line %d); keep one", first)
				return
			}
			seen[k.Value] = k.Line
		} else if _, dup := seen[k.Value]; dup {
			return // an explicit key overrides a merged one
		}
		w.note(fp, k.Line)
		w.walk(v, ft, fp, depth+1)
	})
}

// unknownFieldHint suggests a close field name; failing that, the field one
// level down that has exactly this name (mode under a table: load.mode);
// failing that, it lists the valid fields.
func unknownFieldHint(name string, fields *structInfo) string {
	if s, ok := suggest(name, fields.names); ok {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	for _, parent := range fields.names {
		t := fields.byName[parent]
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			continue
		}
		if _, ok := fieldsOf(t).byName[name]; ok {
			return fmt.Sprintf("; %s belongs under %s: write it as %s.%s", name, parent, parent, name)
		}
	}
	return hint(name, fields.names, "valid fields")
}

func (w *walker) mapEntries(n *yaml.Node, t reflect.Type, path string, depth int, seen map[string]int) {
	w.pairs(n, path, depth, func(k, v *yaml.Node, explicit bool) {
		k = deref(k)
		if k.Kind != yaml.ScalarNode {
			w.c.addAt(path, k.Line, "expected a name, got %s", describeNode(k))
			return
		}
		ep := joinKey(path, k.Value)
		if explicit {
			if first, dup := seen[k.Value]; dup {
				w.c.addAt(ep, k.Line, "%q is given twice (first at line %d); names must be unique", k.Value, first)
				return
			}
			seen[k.Value] = k.Line
		} else if _, dup := seen[k.Value]; dup {
			return
		}
		w.note(ep, k.Line)
		w.walk(v, t.Elem(), ep, depth+1)
	})
}

func (w *walker) scalar(n *yaml.Node, t reflect.Type, path string) {
	want := "a single value"
	switch t.Kind() {
	case reflect.String:
		want = "text"
	case reflect.Bool:
		want = "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "a whole number"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	}
	if n.Kind != yaml.ScalarNode {
		w.c.addAt(path, n.Line, "expected %s, got %s", want, describeNode(n))
		return
	}
	ok := n.Decode(reflect.New(t).Interface()) == nil
	if ok && want == "a whole number" && n.ShortTag() == "!!float" {
		ok = false // the yaml library would truncate 4.5 to 4
	}
	if !ok {
		w.c.addAt(path, n.Line, "expected %s, got %q", want, n.Value)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func isMergeKey(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!" || n.ShortTag() == "!!merge")
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// describeNode names what a node is, for "expected X, got Y".
func describeNode(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "fields (a mapping)"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if r := []rune(v); len(r) > 40 {
			v = string(r[:40]) + "…"
		}
		return strconv.Quote(v)
	}
	return "nothing"
}

// Struct fields by yaml name.

type structInfo struct {
	byName map[string]reflect.Type
	names  []string // in declaration order
}

var fieldCache sync.Map // reflect.Type → *structInfo

func fieldsOf(t reflect.Type) *structInfo {
	if v, ok := fieldCache.Load(t); ok {
		return v.(*structInfo)
	}
	si := &structInfo{byName: map[string]reflect.Type{}}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("yaml")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(","+opts+",", ",inline,") {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
				}
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			si.byName[name] = f.Type
			si.names = append(si.names, name)
		}
	}
	add(t)
	v, _ := fieldCache.LoadOrStore(t, si)
	return v.(*structInfo)
}
