package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Header is the comment line Marshal puts at the top of platform.yaml.
const Header = "# Lima platform plan — edit with lima-tui or by hand; unknown fields are rejected\n"

// Marshal renders the plan as platform.yaml: Header, then the fields in the
// order they are declared in the Go types, map entries sorted by name, empty
// optional fields left out, two-space indentation and a blank line between
// top-level sections. The output is deterministic.
func (p *Plan) Marshal() ([]byte, error) {
	if p == nil {
		return nil, errNilPlan
	}
	var doc yaml.Node
	if err := doc.Encode(p); err != nil {
		return nil, fmt.Errorf("plan: marshal: %w", err)
	}
	flowShortLists(&doc)
	body, err := encodeYAML(&doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(Header) + len(body) + 64)
	out.WriteString(Header)
	first := true
	for line := range bytes.Lines(body) {
		if !first && len(line) > 0 && isTopLevelKey(line) {
			out.WriteByte('\n')
		}
		first = false
		out.Write(line)
	}
	return out.Bytes(), nil
}

// isTopLevelKey reports whether line starts a top-level field ("name:").
func isTopLevelKey(line []byte) bool {
	i := 0
	for i < len(line) && (line[i] == '_' || line[i] >= 'a' && line[i] <= 'z') {
		i++
	}
	return i > 0 && i < len(line) && line[i] == ':'
}

// flowShortLists writes lists of a few short plain values on one line:
// keys: [order_id] rather than one item per line.
func flowShortLists(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 {
		width := 0
		flow := true
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || strings.ContainsAny(c.Value, "\n\r") {
				flow = false
				break
			}
			width += len(c.Value) + 2
		}
		if flow && width <= 72 {
			n.Style |= yaml.FlowStyle
			return
		}
	}
	for _, c := range n.Content {
		flowShortLists(c)
	}
}

// encode is the plain YAML encoding of p: the canonical form that Hash
// digests. It does not depend on Marshal's layout choices.
func (p *Plan) encode() ([]byte, error) { return encodeYAML(p) }

func encodeYAML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("plan: marshal: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("plan: marshal: %w", err)
	}
	return buf.Bytes(), nil
}

// Write saves the plan to path atomically: it writes a temporary file in the
// same folder, syncs it and renames it over path, so readers see the old or
// the new plan, never a part. The file gets mode 0600; a missing folder is
// created with mode 0700. Afterwards Validate reports lines of the new file.
//
// When path already holds a plan, the file is the analyst's: Write edits it
// as a YAML node tree instead of replacing it. Only the fields whose values
// differ from p are rewritten (new keys and list items are added after their
// siblings, removed ones are cut out); comments, key order, blank lines,
// quoting and indentation everywhere else stay byte for byte. The edited
// text is parsed back and must give exactly p; if it does not (or the file
// cannot be edited that way), the plan is written as Marshal renders it.
func (p *Plan) Write(path string) (err error) {
	data, err := p.Marshal()
	if err != nil {
		return err
	}
	if old, rerr := os.ReadFile(path); rerr == nil && len(old) > 0 {
		if edited, ok := editPlan(old, p, data); ok {
			data = edited
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	syncDir(dir)
	p.relocate(data, path)
	return nil
}

// syncDir makes the rename durable where the platform allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// relocate records the lines of the freshly written file for Validate.
func (p *Plan) relocate(data []byte, path string) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	c := &collector{file: path}
	w := newWalker(c, doc.Content[0])
	w.walk(doc.Content[0], reflect.TypeFor[Plan](), "", 0)
	setOrigin(p, &origin{file: path, lines: c.lines})
}

// Hash is the SHA-256 (lower-case hex) of the plan's canonical encoding with
// gates, platform.created and platform.updated cleared: recording an
// approval or touching the timestamps leaves it alone, any change to what
// would be built or loaded changes it. Map order does not matter. It is
// what gate 3 records as the approved plan_hash. Returns "" for a nil plan,
// or if the plan cannot be encoded (which does not happen for these types).
func (p *Plan) Hash() string {
	if p == nil {
		return ""
	}
	c := *p
	c.Gates = Gates{}
	c.Platform.Created, c.Platform.Updated = "", ""
	body, err := c.encode()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// errNilPlan guards the methods that need a plan.
var errNilPlan = errors.New("plan: nil plan")

// editPlan edits old, the current text of a plan file, so that it decodes
// to p; want is p.Marshal(). It reports false when the file cannot be edited
// in place; the caller then writes want.
func editPlan(old []byte, p *Plan, want []byte) ([]byte, bool) {
	var odoc yaml.Node
	if yaml.Unmarshal(old, &odoc) != nil || odoc.Kind != yaml.DocumentNode || len(odoc.Content) != 1 ||
		odoc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	var n yaml.Node
	if n.Encode(p) != nil {
		return nil, false
	}
	flowShortLists(&n)
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = *n.Content[0]
	}
	e := &editor{src: old}
	if e.diff(nil, odoc.Content[0], &n, 0) != nil {
		return nil, false
	}
	out, ok := e.apply()
	if !ok {
		return nil, false
	}
	q, err := Parse(out, "platform.yaml")
	if err != nil {
		return nil, false
	}
	if got, err := q.Marshal(); err != nil || !bytes.Equal(got, want) {
		return nil, false
	}
	return out, true
}

// errNoEdit says a part of the file cannot be edited in place; the caller
// replaces the enclosing value instead.
var errNoEdit = errors.New("plan: cannot edit in place")

// textEdit replaces src[start:end] with text.
type textEdit struct {
	start, end int
	text       string
}

// editor collects the text edits that turn a plan file into a new plan. It
// reads positions from the parsed node tree of the original text and never
// re-encodes what did not change.
type editor struct {
	src   []byte
	edits []textEdit
}

// apply returns src with the edits applied; false if two edits overlap.
func (e *editor) apply() ([]byte, bool) {
	sort.SliceStable(e.edits, func(i, j int) bool { return e.edits[i].start < e.edits[j].start })
	var out bytes.Buffer
	at := 0
	for _, ed := range e.edits {
		if ed.start < at || ed.end < ed.start || ed.end > len(e.src) {
			return nil, false
		}
		out.Write(e.src[at:ed.start])
		out.WriteString(ed.text)
		at = ed.end
	}
	out.Write(e.src[at:])
	return out.Bytes(), true
}

// off is the byte offset of a node's position (yaml lines are 1-based,
// columns 1-based and counted in characters).
func (e *editor) off(n *yaml.Node) int {
	line, i := 1, 0
	for i < len(e.src) && line < n.Line {
		if e.src[i] == '\n' {
			line++
		}
		i++
	}
	for c := 1; c < n.Column && i < len(e.src) && e.src[i] != '\n'; c++ {
		_, size := utf8.DecodeRune(e.src[i:])
		i += size
	}
	return i
}

// eol is the offset of the newline ending the line that holds i (or len).
func (e *editor) eol(i int) int {
	if j := bytes.IndexByte(e.src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(e.src)
}

// lineStart is the offset of the first byte of the line that holds i.
func (e *editor) lineStart(i int) int {
	return bytes.LastIndexByte(e.src[:i], '\n') + 1
}

// onlySpaces reports whether src[from:to] holds nothing but blanks.
func (e *editor) onlySpaces(from, to int) bool {
	return len(bytes.Trim(e.src[from:to], " \t")) == 0
}

// end is the offset just after the text of node n.
func (e *editor) end(n *yaml.Node) (int, error) {
	if n.Anchor != "" || n.Tag != "" && n.Style&yaml.TaggedStyle != 0 {
		return 0, errNoEdit
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return e.scalarEnd(n)
	case yaml.AliasNode:
		s := e.off(n)
		if s >= len(e.src) || e.src[s] != '*' {
			return 0, errNoEdit
		}
		i := s + 1
		for i < len(e.src) && !strings.ContainsRune(" \t\r\n,[]{}", rune(e.src[i])) {
			i++
		}
		return i, nil
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 {
			return e.flowEnd(n)
		}
		if len(n.Content) == 0 {
			return 0, errNoEdit
		}
		return e.end(n.Content[len(n.Content)-1])
	}
	return 0, errNoEdit
}

// scalarEnd finds the end of a scalar's text from its style.
func (e *editor) scalarEnd(n *yaml.Node) (int, error) {
	s := e.off(n)
	src := e.src
	if s >= len(src) {
		return 0, errNoEdit
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if src[s] != '"' {
			return 0, errNoEdit
		}
		for i := s + 1; i < len(src); i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		if src[s] != '\'' {
			return 0, errNoEdit
		}
		for i := s + 1; i < len(src); i++ {
			if src[i] == '\'' {
				if i+1 < len(src) && src[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		if src[s] != '|' && src[s] != '>' {
			return 0, errNoEdit
		}
		// The block runs while lines are blank or indented deeper than
		// the line that holds its header.
		ls := e.lineStart(s)
		indent := 0
		for ls+indent < len(src) && src[ls+indent] == ' ' {
			indent++
		}
		end := e.eol(s)
		for i := end + 1; i < len(src); {
			j := e.eol(i)
			line := src[i:j]
			trimmed := bytes.TrimLeft(line, " ")
			if len(bytes.TrimSpace(line)) > 0 {
				if len(line)-len(trimmed) <= indent {
					break
				}
				end = j
			}
			i = j + 1
		}
		return end, nil
	default:
		if n.Value == "" {
			return 0, errNoEdit // an empty value: no text to point at
		}
		text := src[s:e.eol(s)]
		if k := commentStart(text); k >= 0 {
			text = text[:k]
		}
		text = bytes.TrimRight(text, " \t\r")
		if string(text) == n.Value {
			return s + len(text), nil
		}
		// A key ("name: ...") or an item of a flow collection ends where
		// its value does, at the indicator that follows.
		if rest, ok := bytes.CutPrefix(text, []byte(n.Value)); ok {
			if r := bytes.TrimLeft(rest, " \t"); len(r) > 0 && strings.IndexByte(":,]}", r[0]) >= 0 && (r[0] != ':' || len(r) == 1 || r[1] == ' ' || r[1] == '\t') {
				return s + len(n.Value), nil
			}
		}
		return 0, errNoEdit // a plain scalar over several lines
	}
	return 0, errNoEdit
}

// commentStart is the index of a " #" comment in a line of plain text, or -1.
func commentStart(b []byte) int {
	for i := 1; i < len(b); i++ {
		if b[i] == '#' && (b[i-1] == ' ' || b[i-1] == '\t') {
			return i - 1
		}
	}
	return -1
}

// flowEnd finds the bracket that closes a flow collection.
func (e *editor) flowEnd(n *yaml.Node) (int, error) {
	src := e.src
	s := e.off(n)
	if s >= len(src) || src[s] != '[' && src[s] != '{' {
		return 0, errNoEdit
	}
	depth := 0
	for i := s; i < len(src); i++ {
		switch c := src[i]; c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(src); i++ {
				if src[i] == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '#':
			if i > 0 && (src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\n') {
				i = e.eol(i)
			}
		}
	}
	return 0, errNoEdit
}

// colonAfter is the offset just after the ':' that follows a mapping key.
func (e *editor) colonAfter(key *yaml.Node) (int, error) {
	if key.Kind != yaml.ScalarNode {
		return 0, errNoEdit
	}
	i, err := e.scalarEnd(key)
	if err != nil {
		return 0, err
	}
	for i < len(e.src) && (e.src[i] == ' ' || e.src[i] == '\t') {
		i++
	}
	if i >= len(e.src) || e.src[i] != ':' {
		return 0, errNoEdit
	}
	return i + 1, nil
}

// diff records the edits that turn o (the file's node) into n (the new
// value's node). key is o's mapping key, nil for a list item or the root.
func (e *editor) diff(key, o, n *yaml.Node, depth int) error {
	if equalNodes(o, n) {
		return nil
	}
	mark := len(e.edits)
	err := errNoEdit
	block := o.Style&yaml.FlowStyle == 0 && n.Style&yaml.FlowStyle == 0 && o.Anchor == ""
	switch {
	case block && o.Kind == yaml.MappingNode && n.Kind == yaml.MappingNode && len(o.Content) > 0 && len(n.Content) > 0:
		err = e.diffMapping(o, n, depth)
	case block && o.Kind == yaml.SequenceNode && n.Kind == yaml.SequenceNode && len(o.Content) > 0 && len(n.Content) > 0:
		err = e.diffSequence(o, n, depth)
	}
	if err == nil {
		return nil
	}
	e.edits = e.edits[:mark]
	if depth == 0 {
		return err
	}
	return e.replace(key, o, n)
}

// diffMapping edits a block mapping key by key: changed values in place,
// keys the new value no longer has cut out, new keys added after the last.
func (e *editor) diffMapping(o, n *yaml.Node, depth int) error {
	newVal := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		newVal[n.Content[i].Value] = n.Content[i+1]
	}
	oldKey := map[string]bool{}
	for i := 0; i+1 < len(o.Content); i += 2 {
		if k := o.Content[i]; isMergeKey(k) || k.Kind != yaml.ScalarNode {
			return errNoEdit
		}
		oldKey[o.Content[i].Value] = true
	}
	var add []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !oldKey[k.Value] && !skipNew(v) {
			add = append(add, k, v)
		}
	}
	last := len(o.Content) - 2
	for i := 0; i+1 < len(o.Content); i += 2 {
		k, v := o.Content[i], o.Content[i+1]
		nv, ok := newVal[k.Value]
		switch {
		case ok:
			if err := e.diff(k, v, nv, depth+1); err != nil {
				return err
			}
		case isEmptyNode(v):
			// absent and empty decode alike
		default:
			if i == last && len(add) > 0 {
				return errNoEdit // new keys go after the last one
			}
			if err := e.cutEntry(o, i); err != nil {
				return err
			}
		}
	}
	if len(add) == 0 {
		return nil
	}
	at, err := e.end(o.Content[last+1])
	if err != nil {
		return err
	}
	text, err := render(&yaml.Node{Kind: yaml.MappingNode, Content: add})
	if err != nil {
		return err
	}
	lead := "\n"
	if depth == 0 {
		lead = "\n\n" // top-level sections are set apart by a blank line
	}
	indent := strings.Repeat(" ", o.Content[0].Column-1)
	e.edits = append(e.edits, textEdit{start: e.eol(at), end: e.eol(at), text: lead + indentLines(text, indent, indent)})
	return nil
}

// cutEntry removes the i-th key of block mapping o and its value.
func (e *editor) cutEntry(o *yaml.Node, i int) error {
	k, v := o.Content[i], o.Content[i+1]
	ks := e.off(k)
	ve, err := e.end(v)
	if err != nil {
		return err
	}
	if ls := e.lineStart(ks); e.onlySpaces(ls, ks) {
		end := e.eol(ve)
		if end < len(e.src) {
			end++
		}
		e.edits = append(e.edits, textEdit{start: ls, end: end})
		return nil
	}
	// The key shares its line with a "- ": cut up to the next key.
	if i+2 >= len(o.Content) {
		return errNoEdit
	}
	e.edits = append(e.edits, textEdit{start: ks, end: e.off(o.Content[i+2])})
	return nil
}

// diffSequence edits a block list: equal items at both ends stay, items in
// between are edited pairwise, surplus old items are cut and surplus new
// items added after the last kept one.
func (e *editor) diffSequence(o, n *yaml.Node, depth int) error {
	dash := make([]int, len(o.Content))
	for i, it := range o.Content {
		s := e.off(it)
		j := s - 1
		for j >= 0 && (e.src[j] == ' ' || e.src[j] == '\t') {
			j--
		}
		if j < 0 || e.src[j] != '-' || !e.onlySpaces(e.lineStart(j), j) {
			return errNoEdit
		}
		dash[i] = j
	}
	lo, ln := len(o.Content), len(n.Content)
	pre := 0
	for pre < lo && pre < ln && equalNodes(o.Content[pre], n.Content[pre]) {
		pre++
	}
	suf := 0
	for suf < lo-pre && suf < ln-pre && equalNodes(o.Content[lo-1-suf], n.Content[ln-1-suf]) {
		suf++
	}
	om, nm := o.Content[pre:lo-suf], n.Content[pre:ln-suf]
	pairs := min(len(om), len(nm))
	for i := 0; i < pairs; i++ {
		if err := e.diff(nil, om[i], nm[i], depth+1); err != nil {
			return err
		}
	}
	for i := pairs; i < len(om); i++ {
		d := dash[pre+i]
		end, err := e.end(om[i])
		if err != nil {
			return err
		}
		end = e.eol(end)
		if end < len(e.src) {
			end++
		}
		e.edits = append(e.edits, textEdit{start: e.lineStart(d), end: end})
	}
	if len(nm) == pairs {
		return nil
	}
	var items []string
	for _, it := range nm[pairs:] {
		text, err := render(it)
		if err != nil {
			return err
		}
		items = append(items, text)
	}
	d := dash[0]
	indent := string(e.src[e.lineStart(d):d])
	var b strings.Builder
	if after := pre + pairs - 1; after >= 0 {
		end, err := e.end(o.Content[after])
		if err != nil {
			return err
		}
		for _, t := range items {
			b.WriteString("\n" + indentLines(t, indent+"- ", indent+"  "))
		}
		at := e.eol(end)
		e.edits = append(e.edits, textEdit{start: at, end: at, text: b.String()})
		return nil
	}
	for _, t := range items {
		b.WriteString(indentLines(t, indent+"- ", indent+"  ") + "\n")
	}
	at := e.lineStart(dash[0])
	e.edits = append(e.edits, textEdit{start: at, end: at, text: b.String()})
	return nil
}

// replace rewrites the whole value o as n; a flow collection stays one,
// except an empty one ({} or []), which only held the place: what fills it
// is written in block style like the rest of the plan.
func (e *editor) replace(key, o, n *yaml.Node) error {
	if o.Style&yaml.FlowStyle != 0 && len(o.Content) > 0 && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
		c := *n
		c.Style |= yaml.FlowStyle
		n = &c
	}
	text, err := render(n)
	if err != nil {
		return err
	}
	inlineNew := n.Kind == yaml.ScalarNode || n.Kind == yaml.AliasNode || n.Style&yaml.FlowStyle != 0
	inlineOld := o.Kind == yaml.ScalarNode || o.Kind == yaml.AliasNode || o.Style&yaml.FlowStyle != 0
	var start, end int
	if o.Kind == yaml.ScalarNode && o.Value == "" && o.Style == 0 {
		// "key:" with nothing after it.
		if key == nil {
			return errNoEdit
		}
		if start, err = e.colonAfter(key); err != nil {
			return err
		}
		end = start
		if inlineNew {
			text = " " + text
		}
	} else {
		start = e.off(o)
		if end, err = e.end(o); err != nil {
			return err
		}
	}
	switch {
	case start != end && (inlineNew || key == nil || !inlineOld):
		// In place: continuation lines line up under the value's column.
		pad := strings.Repeat(" ", e.columnOf(start))
		text = indentLines(text, "", pad)
	case inlineNew:
		// "key:" then an inline value: already prefixed with a space.
	default:
		// A block value after "key:": on the following lines, indented
		// two more than the key.
		if start, err = e.colonAfter(key); err != nil {
			return err
		}
		pad := strings.Repeat(" ", key.Column-1+2)
		text = "\n" + indentLines(text, pad, pad)
	}
	e.edits = append(e.edits, textEdit{start: start, end: end, text: text})
	return nil
}

// columnOf is the number of characters before offset i on its line.
func (e *editor) columnOf(i int) int {
	return utf8.RuneCount(e.src[e.lineStart(i):i])
}

// indentLines prefixes the first line of text with first and the others
// with rest (empty lines stay empty).
func indentLines(text, first, rest string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		switch {
		case i == 0:
			lines[i] = first + l
		case l != "":
			lines[i] = rest + l
		}
	}
	return strings.Join(lines, "\n")
}

// render encodes a node as platform.yaml would (two-space indentation),
// without the final newline.
func render(n *yaml.Node) (string, error) {
	b, err := encodeYAML(n)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// equalNodes reports whether the file's node o decodes to the same value
// as the new node n: texts may differ in quoting, number spelling or keys
// left out for empty values.
func equalNodes(o, n *yaml.Node) bool {
	o, n = deref(o), deref(n)
	if o.Kind != n.Kind {
		return isEmptyNode(o) && isEmptyNode(n)
	}
	switch o.Kind {
	case yaml.ScalarNode:
		return scalarEqual(o, n)
	case yaml.SequenceNode:
		if len(o.Content) != len(n.Content) {
			return false
		}
		for i := range o.Content {
			if !equalNodes(o.Content[i], n.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		ov := map[string]*yaml.Node{}
		for i := 0; i+1 < len(o.Content); i += 2 {
			if isMergeKey(o.Content[i]) {
				return false
			}
			ov[o.Content[i].Value] = o.Content[i+1]
		}
		nv := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			nv[n.Content[i].Value] = n.Content[i+1]
		}
		for k, v := range nv {
			if x, ok := ov[k]; ok {
				if !equalNodes(x, v) {
					return false
				}
			} else if !skipNew(v) {
				return false
			}
		}
		for k, v := range ov {
			if _, ok := nv[k]; !ok && !isEmptyNode(v) {
				return false
			}
		}
		return true
	}
	return false
}

// scalarEqual compares two scalars by the value they decode to.
func scalarEqual(o, n *yaml.Node) bool {
	const null = "!!null"
	if o.Value == n.Value && (o.ShortTag() == n.ShortTag() || o.ShortTag() != null && n.ShortTag() != null) {
		return true
	}
	var a, b any
	if o.Decode(&a) != nil || n.Decode(&b) != nil {
		return false
	}
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// isEmptyNode reports whether a value in the file decodes to a zero value,
// which the new plan leaves out.
func isEmptyNode(n *yaml.Node) bool {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		var v any
		if n.Decode(&v) != nil {
			return false
		}
		if v == nil {
			return true
		}
		rv := reflect.ValueOf(v)
		return rv.IsZero()
	case yaml.SequenceNode:
		return len(n.Content) == 0
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if !isEmptyNode(n.Content[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// skipNew reports whether a new key's value need not be written: null, an
// empty string or an empty collection (a zero number or false is written,
// a pointer may be set to it).
func skipNew(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.ShortTag() == "!!null" || n.ShortTag() == "!!str" && n.Value == ""
	case yaml.SequenceNode:
		return len(n.Content) == 0
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if !skipNew(n.Content[i]) {
				return false
			}
		}
		return true
	}
	return false
}
