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
	"strings"

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
func (p *Plan) Write(path string) (err error) {
	data, err := p.Marshal()
	if err != nil {
		return err
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
