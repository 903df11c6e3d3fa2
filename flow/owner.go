package flow

// Lake ownership (issue 17 scope 2): a lake — the plan's namespace in its
// warehouse — is owned by one workspace. The claim is a marker object at
// the namespace's location (<warehouse>/<namespace>.db/.lima-owner.json for
// Iceberg, <warehouse>/<namespace>/.lima-owner.json for Hive-style tables,
// on disk and on S3 alike) naming the workspace's id, its folder, the host
// and when it was claimed. The first verb that writes claims an unclaimed
// lake; every verb that writes or removes refuses a lake another workspace
// owns (ErrPrecondition, exit 4) until this one adopts it (Adopt).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/internal/s3x"
)

// workspaceIDFile holds the workspace's id in .lima/ (0600).
const workspaceIDFile = "workspace-id"

// IDPath is the file holding the workspace's id.
func (w Workspace) IDPath() string { return filepath.Join(w.StateDir(), workspaceIDFile) }

// ownerMarker is the marker's JSON.
type ownerMarker struct {
	Version int `json:"version"`
	gates.LakeOwner
	Prefix    string `json:"prefix"`
	Namespace string `json:"namespace"`
	// AdoptedFrom is the previous owner when the lake was adopted.
	AdoptedFrom *gates.LakeOwner `json:"adopted_from,omitempty"`
}

// WorkspaceID returns the workspace's id; ok is false when it has none yet.
// It creates nothing.
func WorkspaceID(ws Workspace) (id string, ok bool, err error) {
	b, err := os.ReadFile(ws.IDPath())
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	id = strings.TrimSpace(string(b))
	if !validWorkspaceID(id) {
		return "", false, fmt.Errorf("%s does not hold a workspace id (ws- and 32 hex digits)", ws.IDPath())
	}
	return id, true, nil
}

func validWorkspaceID(id string) bool {
	h, ok := strings.CutPrefix(id, "ws-")
	if !ok || len(h) != 32 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// ensureWorkspaceID returns the workspace's id, creating it once (random,
// 0600 in the 0700 state folder; a concurrent creator's id wins).
func ensureWorkspaceID(ws Workspace) (string, error) {
	if id, ok, err := WorkspaceID(ws); err != nil || ok {
		return id, err
	}
	if err := fsx.MkdirPrivate(ws.StateDir()); err != nil {
		return "", err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := "ws-" + hex.EncodeToString(b[:])
	f, err := os.OpenFile(ws.IDPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		id, _, err := WorkspaceID(ws)
		return id, err
	}
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(id + "\n"); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	return id, f.Close()
}

// markerStore reads and writes the marker where the lake is.
type markerStore interface {
	// read returns the marker's bytes; ok is false when there is none.
	read(ctx context.Context) (b []byte, ok bool, err error)
	// create writes the marker only when there is none (ok false when one
	// appeared meanwhile); replace overwrites it.
	create(ctx context.Context, b []byte) (ok bool, err error)
	replace(ctx context.Context, b []byte) error
	remove(ctx context.Context) error
	location() string
}

// markerMaxBytes bounds what is read of a marker.
const markerMaxBytes = 64 << 10

// ownerStore returns the marker's store for the plan's lake; a non-empty
// reason says why the lake has no marker (its locations are not Lima's).
func ownerStore(ctx context.Context, ws Workspace, p *plan.Plan) (markerStore, string, error) {
	if p.Pattern() != plan.PatternHive && p.Catalog() == plan.CatalogS3Tables {
		return nil, "S3 Tables chooses the tables' locations: the table bucket is the owner's boundary, no marker is written", nil
	}
	ns := p.Namespace() + ".db"
	if p.Pattern() == plan.PatternHive {
		ns = p.Namespace()
	}
	if ns == "" || ns == ".db" || strings.ContainsAny(ns, `/\`) || ns == "." || ns == ".." {
		return nil, "", fmt.Errorf("namespace %q cannot hold an ownership marker", p.Namespace())
	}
	wh := ws.Warehouse(p)
	switch {
	case s3x.IsURI(wh):
		u, err := s3x.ParseURI(wh)
		if err != nil {
			return nil, "", err
		}
		cfg := s3x.FromEnv()
		if cfg.Region == "" && p.Platform.Region != "" && p.Platform.Region != "local" {
			cfg.Region = p.Platform.Region
		}
		c, err := s3x.New(ctx, cfg)
		if err != nil {
			return nil, "", err
		}
		return s3Marker{c: c, u: u.Join(ns, gates.OwnerMarkerName)}, "", nil
	case fileuri.Is(wh):
		dir, err := fileuri.ToPath(wh)
		if err != nil {
			return nil, "", err
		}
		return localMarker(filepath.Join(dir, ns, gates.OwnerMarkerName)), "", nil
	case hasScheme(wh):
		return nil, "warehouse " + wh + ": ownership markers are written on local folders and S3 only", nil
	}
	dir, err := filepath.Abs(wh)
	if err != nil {
		return nil, "", err
	}
	return localMarker(filepath.Join(dir, ns, gates.OwnerMarkerName)), "", nil
}

// localMarker is the marker on disk. It is never read or replaced through
// a symbolic link.
type localMarker string

func (m localMarker) location() string { return string(m) }

func (m localMarker) read(context.Context) ([]byte, bool, error) {
	fi, err := os.Lstat(string(m))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// No marker (a warehouse that is a file fails gate 2's target check).
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", m)
	}
	f, err := os.Open(string(m))
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, markerMaxBytes+1))
	if err == nil && len(b) > markerMaxBytes {
		err = fmt.Errorf("%s is larger than %d bytes", m, markerMaxBytes)
	}
	return b, err == nil, err
}

// temp writes b to a temporary file beside the marker (0644: the lake's
// files are readable by its readers; the marker holds no secret).
func (m localMarker) temp(b []byte) (string, error) {
	dir := filepath.Dir(string(m))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+gates.OwnerMarkerName+".tmp-*")
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	ok = true
	return f.Name(), nil
}

func (m localMarker) create(_ context.Context, b []byte) (bool, error) {
	tmp, err := m.temp(b)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	// A hard link fails when the marker exists: two workspaces claiming at
	// once cannot both win.
	if err := os.Link(tmp, string(m)); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

func (m localMarker) replace(_ context.Context, b []byte) error {
	if fi, err := os.Lstat(string(m)); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", m)
	}
	tmp, err := m.temp(b)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, string(m)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (m localMarker) remove(context.Context) error {
	err := os.Remove(string(m))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// s3Marker is the marker object on S3.
type s3Marker struct {
	c *s3x.Client
	u s3x.URI
}

func (m s3Marker) location() string { return m.u.String() }

func (m s3Marker) read(ctx context.Context) ([]byte, bool, error) {
	r, err := m.c.Get(ctx, m.u.Bucket, m.u.Key)
	if s3x.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, markerMaxBytes+1))
	if err == nil && len(b) > markerMaxBytes {
		err = fmt.Errorf("%s is larger than %d bytes", m.u, markerMaxBytes)
	}
	return b, err == nil, err
}

// create puts the marker when none is there and reads it back: S3 has no
// portable create-if-absent, so of two workspaces racing the one whose
// marker is read back wins and the other is refused.
func (m s3Marker) create(ctx context.Context, b []byte) (bool, error) {
	if _, ok, err := m.read(ctx); err != nil || ok {
		return false, err
	}
	if err := m.replace(ctx, b); err != nil {
		return false, err
	}
	got, ok, err := m.read(ctx)
	if err != nil {
		return false, err
	}
	return ok && bytes.Equal(got, b), nil
}

func (m s3Marker) replace(ctx context.Context, b []byte) error {
	return m.c.Put(ctx, m.u.Bucket, m.u.Key, bytes.NewReader(b), nil)
}

func (m s3Marker) remove(ctx context.Context) error { return m.c.Delete(ctx, m.u.Bucket, m.u.Key) }

// ownerState reads the marker and compares it with the workspace's id. It
// writes nothing (gate 2 calls it).
func ownerState(ctx context.Context, ws Workspace, p *plan.Plan) (gates.OwnerState, markerStore, error) {
	abs, err := filepath.Abs(ws.Dir)
	if err != nil {
		return gates.OwnerState{}, nil, err
	}
	st := gates.OwnerState{Workspace: abs}
	store, na, err := ownerStore(ctx, ws, p)
	if err != nil || na != "" {
		st.NotApplicable = na
		return st, nil, err
	}
	st.Location = store.location()
	id, _, err := WorkspaceID(ws)
	if err != nil {
		return st, store, err
	}
	st.WorkspaceID = id
	b, ok, err := store.read(ctx)
	if err != nil || !ok {
		return st, store, err
	}
	var m ownerMarker
	if err := json.Unmarshal(b, &m); err != nil || m.WorkspaceID == "" {
		return st, store, fmt.Errorf("%s is not a Lima ownership marker (no workspace_id)", st.Location)
	}
	st.Claimed, st.Owner = true, m.LakeOwner
	st.Ours = id != "" && m.WorkspaceID == id
	return st, store, nil
}

// newMarker is this workspace's marker, claimed now.
func newMarker(ws Workspace, p *plan.Plan, id string, now time.Time) ([]byte, error) {
	abs, err := filepath.Abs(ws.Dir)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	m := ownerMarker{Version: 1, LakeOwner: gates.LakeOwner{WorkspaceID: id, Workspace: abs, Host: host, ClaimedAt: now.UTC().Format(time.RFC3339)},
		Prefix: p.Platform.Prefix, Namespace: p.Namespace()}
	b, err := json.MarshalIndent(m, "", "  ")
	return append(b, '\n'), err
}

// ownerRefused is the precondition error for a lake another workspace owns.
func ownerRefused(ws Workspace, p *plan.Plan, st gates.OwnerState, verb string) error {
	return fmt.Errorf("%w: %s was refused, nothing was written: %s; %s", ErrPrecondition, verb, gates.OwnerRefusal(st), gates.AdoptFix(ws.PlanPath(), p.Platform.Prefix))
}

// checkOwner refuses a lake another workspace owns; with claim it claims
// an unclaimed lake for this workspace (creating the workspace's id).
func checkOwner(ctx context.Context, ws Workspace, p *plan.Plan, verb string, claim bool) error {
	st, store, err := ownerState(ctx, ws, p)
	if err != nil {
		return fmt.Errorf("%w: %s was refused: lake ownership: %w", ErrPrecondition, verb, err)
	}
	if store == nil || st.Ours {
		return nil
	}
	if st.Claimed {
		return ownerRefused(ws, p, st, verb)
	}
	if !claim {
		return nil
	}
	id, err := ensureWorkspaceID(ws)
	if err != nil {
		return fmt.Errorf("%w: %s was refused: the workspace id: %w", ErrPrecondition, verb, err)
	}
	b, err := newMarker(ws, p, id, time.Now())
	if err != nil {
		return err
	}
	ok, err := store.create(ctx, b)
	if err != nil {
		return fmt.Errorf("%w: %s was refused: claim the lake (write %s): %w", ErrPrecondition, verb, store.location(), err)
	}
	if !ok { // another workspace claimed it meanwhile
		st, _, err := ownerState(ctx, ws, p)
		if err != nil {
			return fmt.Errorf("%w: %s was refused: lake ownership: %w", ErrPrecondition, verb, err)
		}
		if !st.Ours {
			return ownerRefused(ws, p, st, verb)
		}
	}
	return nil
}

// AdoptResult says what Adopt found and did.
type AdoptResult struct {
	// Location is the marker's path or URI.
	Location string `json:"location"`
	// Previous is the owner before (nil: the lake was unclaimed).
	Previous *gates.LakeOwner `json:"previous,omitempty"`
	// Owner is the owner now (this workspace).
	Owner gates.LakeOwner `json:"owner"`
	// Changed is false when the lake was this workspace's already.
	Changed bool `json:"changed"`
}

// Adopt makes this workspace the lake's owner, whoever owned it, once
// confirm is the plan's prefix typed exactly (gates.ErrNotConfirmed
// otherwise: nothing written). It rewrites the marker, naming the previous
// owner in adopted_from. The tables, files and catalog entries are not
// touched: the other workspace's catalog still lists them, and any verb
// that writes from there is refused from now on.
func Adopt(ctx context.Context, ws Workspace, p *plan.Plan, confirm string) (*AdoptResult, error) {
	st, store, err := ownerState(ctx, ws, p)
	if err != nil {
		return nil, fmt.Errorf("%w: lake ownership: %w", ErrPrecondition, err)
	}
	if store == nil {
		return nil, fmt.Errorf("%w: %s", ErrUsage, st.NotApplicable)
	}
	res := &AdoptResult{Location: st.Location}
	if st.Claimed {
		prev := st.Owner
		res.Previous = &prev
	}
	if confirm != p.Platform.Prefix {
		return res, fmt.Errorf("%w: the prefix was not typed exactly (want %q)", gates.ErrNotConfirmed, p.Platform.Prefix)
	}
	unlock, err := Lock(ctx, ws, 0)
	if err != nil {
		return res, err
	}
	defer unlock()
	if st.Ours {
		res.Owner = st.Owner
		return res, nil
	}
	id, err := ensureWorkspaceID(ws)
	if err != nil {
		return res, err
	}
	b, err := newMarker(ws, p, id, time.Now())
	if err != nil {
		return res, err
	}
	if res.Previous != nil {
		var m ownerMarker
		if err := json.Unmarshal(b, &m); err != nil {
			return res, err
		}
		m.AdoptedFrom = res.Previous
		if b, err = json.MarshalIndent(m, "", "  "); err != nil {
			return res, err
		}
		b = append(b, '\n')
	}
	if err := store.replace(ctx, b); err != nil {
		return res, fmt.Errorf("write %s: %w", store.location(), err)
	}
	now, _, err := ownerState(ctx, ws, p)
	if err != nil {
		return res, err
	}
	if !now.Ours {
		return res, fmt.Errorf("the marker %s was written but reads back as %s", store.location(), gates.OwnerDescription(now.Owner))
	}
	res.Owner, res.Changed = now.Owner, true
	return res, nil
}
