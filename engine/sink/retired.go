package sink

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// PropRetired is the table property in which `lima-tui maintain` carries
// forward what the snapshots it expires told about the table: the load ids
// they carried (a rerun of such a load is still recognised, and pending
// exceptions of it still published) and the identities of the files they
// loaded (the watcher and change capture never load such a file again).
// It is written in the same commit that removes the snapshots, so a
// snapshot's facts are never in neither place.
const PropRetired = "lima.retired"

// Retired is the value of PropRetired.
type Retired struct {
	// Loads maps a load id to the commit that carried it.
	Loads map[string]RetiredCommit `json:"loads,omitempty"`
	// Lists holds, per file-list property (lima.files, lima.cdc.files), the
	// elements of every expired snapshot's list, newest snapshot first.
	Lists map[string][]json.RawMessage `json:"lists,omitempty"`
}

// RetiredCommit is an expired snapshot's id and its lima.* properties
// (without the file lists, which are in Retired.Lists).
type RetiredCommit struct {
	SnapshotID int64             `json:"snapshot_id"`
	Props      map[string]string `json:"props,omitempty"`
}

// RetiredReader is the optional capability of a table that carries the
// facts of expired snapshots (PropRetired).
type RetiredReader interface {
	Retired(ctx context.Context) (Retired, error)
}

// ParseRetired reads a PropRetired value ("" is empty).
func ParseRetired(s string) (Retired, error) {
	var r Retired
	if s == "" {
		return r, nil
	}
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, fmt.Errorf("table property %s: %w", PropRetired, err)
	}
	return r, nil
}

// Add records an expiring snapshot's commit; listProps name its file-list
// properties, whose JSON arrays join Lists. Add the snapshots newest first.
func (r *Retired) Add(c Commit, listProps []string) error {
	props := map[string]string{}
	for k, v := range c.Props {
		if slices.Contains(listProps, k) {
			var elems []json.RawMessage
			if err := json.Unmarshal([]byte(v), &elems); err != nil {
				return fmt.Errorf("snapshot %d: %s: %w", c.SnapshotID, k, err)
			}
			if r.Lists == nil {
				r.Lists = map[string][]json.RawMessage{}
			}
			have := map[string]bool{}
			for _, e := range r.Lists[k] {
				have[string(e)] = true
			}
			for _, e := range elems {
				if !have[string(e)] { // carried before, or twice in one list
					have[string(e)] = true
					r.Lists[k] = append(r.Lists[k], e)
				}
			}
			continue
		}
		props[k] = v
	}
	if c.LoadID == "" {
		return nil
	}
	if r.Loads == nil {
		r.Loads = map[string]RetiredCommit{}
	}
	if _, ok := r.Loads[c.LoadID]; !ok { // newest first: keep the newest
		r.Loads[c.LoadID] = RetiredCommit{SnapshotID: c.SnapshotID, Props: props}
	}
	return nil
}

// Commit is the retired commit of loadID.
func (r Retired) Commit(loadID string) (Commit, bool) {
	rc, ok := r.Loads[loadID]
	if !ok || loadID == "" {
		return Commit{}, false
	}
	c := Commit{SnapshotID: rc.SnapshotID, LoadID: loadID, RunID: rc.Props[PropRunID], Watermark: rc.Props[PropWatermark],
		Kind: rc.Props[PropKind], Props: rc.Props}
	if c.Kind == "" {
		c.Kind = KindLoad
	}
	return c, true
}

// List is the file-list property's retired elements as one JSON array
// ("" when there are none), in the form the snapshot property has.
func (r Retired) List(prop string) string {
	if len(r.Lists[prop]) == 0 {
		return ""
	}
	b, _ := json.Marshal(r.Lists[prop])
	return string(b)
}

// Encode is the PropRetired value.
func (r Retired) Encode() (string, error) {
	b, err := json.Marshal(r)
	return string(b), err
}
