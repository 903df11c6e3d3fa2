package icesink

// Table maintenance (lima-tui maintain): snapshot expiry with iceberg-go's
// Transaction.ExpireSnapshots, and orphan removal planned with iceberg-go's
// Table.PlanOrphanFiles but executed here, narrowed to what Lima may
// delete.
//
// Expiry keeps the newest KeepAtLeast snapshots of the lineage (at least
// RetainLast, and as deep as the caller's Protect needs) plus every
// snapshot younger than MaxAge, like Iceberg's own procedure; the current
// snapshot is always kept. The facts of the snapshots that go — their load
// ids and lima.* properties, and their file lists — are carried forward
// into the table property sink.PropRetired in the same commit. iceberg-go
// then deletes the manifest lists, manifests and data files that only the
// expired snapshots referenced (its post-commit step).
//
// Orphan removal deletes a file only when it is in the table's data/ or
// metadata/ folder, is a regular file (never a symbolic link), is older
// than the safety window, no snapshot or metadata file references it (by
// iceberg-go's reachability, and again by its base name against every
// manifest entry, deleted ones included), and carries a name Lima or
// iceberg-go gives its files (a UUID in it, a known extension). Any other
// unreferenced file is foreign: reported, never deleted.

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/internal/faultpoint"
	"github.com/lima-lake/lima/internal/fileuri"
)

// ExpirePolicy configures Expire.
type ExpirePolicy struct {
	RetainLast int
	MaxAge     time.Duration
	// Protect reports whether a commit of the lineage must stay (with
	// every newer one): the lineage is kept back to the oldest protected
	// commit.
	Protect func(c sink.Commit) (bool, string)
	// ListProps are the file-list properties carried forward as lists.
	ListProps []string
	DryRun    bool
	Now       time.Time
}

// ExpireResult is what Expire did (or, dry, would do).
type ExpireResult struct {
	SnapshotsBefore int `json:"snapshots_before"`
	Expired         int `json:"snapshots_expired"`
	Kept            int `json:"snapshots_kept"`
	// KeptFor names why snapshots beyond retain_last stay.
	KeptFor []string `json:"kept_for,omitempty"`
	// FilesRemoved and BytesRemoved are the files that went with the
	// expired snapshots (manifest lists, manifests, data and delete files).
	FilesRemoved int   `json:"files_removed"`
	BytesRemoved int64 `json:"bytes_removed"`
}

// Expire expires the table's snapshots by the policy.
func Expire(ctx context.Context, tbl *table.Table, pol ExpirePolicy) (*table.Table, ExpireResult, error) {
	var r ExpireResult
	meta := tbl.Metadata()
	snaps := meta.Snapshots()
	r.SnapshotsBefore = len(snaps)
	cur := meta.CurrentSnapshot()
	if cur == nil || len(snaps) <= 1 {
		r.Kept = len(snaps)
		return tbl, r, finishEarlierExpiry(ctx, tbl, pol, &r)
	}
	if pol.RetainLast < 1 {
		pol.RetainLast = 1
	}
	if pol.Now.IsZero() {
		pol.Now = time.Now()
	}
	var lineage []table.Snapshot
	for s := cur; s != nil; {
		lineage = append(lineage, *s)
		if s.ParentSnapshotID == nil {
			break
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	keep := pol.RetainLast
	for i, s := range lineage {
		if pol.Protect == nil {
			break
		}
		if ok, why := pol.Protect(commitOf(&s)); ok && i+1 > keep {
			keep = i + 1
			r.KeptFor = append(r.KeptFor, fmt.Sprintf("snapshot %d: %s", s.SnapshotID, why))
		}
	}
	// The snapshots iceberg-go may expire: beyond keep in the lineage and
	// older than MaxAge (less a minute, so that this set holds every one
	// its own clock expires), and those off the lineage as old.
	cutoff := pol.Now.Add(-pol.MaxAge + time.Minute).UnixMilli()
	kept := map[int64]bool{}
	for i, s := range lineage {
		if i >= keep && s.TimestampMs < cutoff {
			break
		}
		kept[s.SnapshotID] = true
	}
	var going []table.Snapshot
	for _, s := range snaps {
		if !kept[s.SnapshotID] && (s.TimestampMs < cutoff || slices.ContainsFunc(lineage, func(l table.Snapshot) bool { return l.SnapshotID == s.SnapshotID })) {
			going = append(going, s)
		}
	}
	if len(going) == 0 {
		r.Kept = len(snaps)
		return tbl, r, finishEarlierExpiry(ctx, tbl, pol, &r)
	}
	if pol.DryRun {
		r.Expired, r.Kept = len(going), len(snaps)-len(going)
		return tbl, r, nil
	}
	retired, err := sink.ParseRetired(tbl.Properties()[sink.PropRetired])
	if err != nil {
		return tbl, r, err
	}
	sort.Slice(going, func(i, j int) bool { return going[i].TimestampMs > going[j].TimestampMs }) // newest first
	for i := range going {
		if err := retired.Add(commitOf(&going[i]), pol.ListProps); err != nil {
			return tbl, r, err
		}
	}
	enc, err := retired.Encode()
	if err != nil {
		return tbl, r, err
	}
	before, err := tableFiles(tbl)
	if err != nil {
		return tbl, r, err
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{sink.PropRetired: enc}); err != nil {
		return tbl, r, err
	}
	// The files only the expired snapshots used are removed below, not by
	// iceberg-go's post-commit step: that one also removes the files of
	// its manifests' DELETED entries, which an earlier expiry may already
	// have removed — and fails the whole maintain on the missing file.
	if err := tx.ExpireSnapshots(table.WithRetainLast(keep), table.WithOlderThan(pol.MaxAge), table.WithPostCommit(false)); err != nil {
		return tbl, r, err
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		return tbl, r, fmt.Errorf("expire snapshots: %w", err)
	}
	if _, _, err := removeExpiredFiles(ctx, tbl, after); err != nil {
		return after, r, fmt.Errorf("expire snapshots: committed; removing the files only the expired snapshots used: %w", err)
	}
	left := after.Metadata().Snapshots()
	r.Kept = len(left)
	r.Expired = len(snaps) - len(left)
	// Every snapshot that went had its facts carried (going is a superset).
	for _, s := range snaps {
		if after.Metadata().SnapshotByID(s.SnapshotID) == nil && !slices.ContainsFunc(going, func(g table.Snapshot) bool { return g.SnapshotID == s.SnapshotID }) {
			return after, r, fmt.Errorf("snapshot %d was expired without its facts carried forward", s.SnapshotID)
		}
	}
	if now, err := tableFiles(after); err == nil {
		for p, size := range before {
			if _, ok := now[p]; !ok {
				r.FilesRemoved++
				r.BytesRemoved += size
			}
		}
	}
	return after, r, nil
}

// FaultMidExpiredFiles kills the process after the first file of the
// expired snapshots is removed, FaultAfterExpireCommit right after the
// expiry committed, before any is (LIMA_FAULTPOINT, crash tests).
const (
	FaultAfterExpireCommit = "maintain-after-expire-commit"
	FaultMidExpiredFiles   = "maintain-mid-expired-files"
)

// finishEarlierExpiry removes, when an expiry has nothing to expire, what
// only the snapshots of an earlier one used that its process, killed, left
// behind (see removeExpiredFiles).
func finishEarlierExpiry(ctx context.Context, tbl *table.Table, pol ExpirePolicy, r *ExpireResult) error {
	if pol.DryRun {
		return nil
	}
	n, size, err := removeExpiredFiles(ctx, nil, tbl)
	r.FilesRemoved += n
	r.BytesRemoved += size
	if err != nil {
		return fmt.Errorf("finish an earlier expiry: remove the files only its snapshots used: %w", err)
	}
	return nil
}

// removeExpiredFiles removes what only snapshots the table's metadata no
// longer has used: their manifest lists, the manifests no kept snapshot
// lists, and the files of those manifests' entries that no kept manifest
// lists as live.
//
// The snapshots that went are found in the table's earlier metadata
// versions (the metadata log, pre's in-memory metadata too when given):
// every snapshot one of them has and the current metadata has not was
// removed by a committed expiry. What only such snapshots referenced was
// committed by Lima, so no writer still in flight owns it, and nothing
// current references it: it is removed whatever its age. So a maintain
// killed between its expiry commit and the end of this cleanup leaves
// nothing behind for long — the next maintain finishes the cleanup, though
// those files are younger than the orphan window, which would keep them.
//
// Files go in the order data and delete files, manifests, manifest lists,
// each group only once the one before is gone: a manifest list still there
// means its snapshot's cleanup may be unfinished, one gone means it is
// done. A file already gone is fine (an earlier expiry, or one killed
// halfway, removed it), so the step can always be run again.
func removeExpiredFiles(ctx context.Context, pre, post *table.Table) (removed int, bytes int64, err error) {
	fs, err := post.FS(ctx)
	if err != nil {
		return 0, 0, err
	}
	current := post.Metadata()
	var goneSnaps []table.Snapshot
	seenSnap := map[int64]bool{}
	addGone := func(m table.Metadata) {
		for _, s := range m.Snapshots() {
			if seenSnap[s.SnapshotID] || current.SnapshotByID(s.SnapshotID) != nil {
				continue
			}
			seenSnap[s.SnapshotID] = true
			goneSnaps = append(goneSnaps, s)
		}
	}
	if pre != nil {
		addGone(pre.Metadata())
	}
	for e := range current.PreviousFiles() {
		if pre != nil && e.MetadataFile == pre.MetadataLocation() {
			continue
		}
		m, err := readMetadata(fs, e.MetadataFile)
		if errors.Is(err, iofs.ErrNotExist) {
			continue // removed by its owner's policy: nothing to learn from it
		}
		if err != nil {
			return 0, 0, fmt.Errorf("read the earlier metadata %s: %w", e.MetadataFile, err)
		}
		addGone(m)
	}
	if len(goneSnaps) == 0 {
		return 0, 0, nil
	}
	keptManifests := map[string]bool{}
	var kept []iceberg.ManifestFile
	for _, s := range current.Snapshots() {
		mans, err := s.Manifests(fs)
		if err != nil {
			return 0, 0, err
		}
		for _, m := range mans {
			if !keptManifests[m.FilePath()] {
				keptManifests[m.FilePath()] = true
				kept = append(kept, m)
			}
		}
	}
	var lists, manifests []string
	files := map[string]int64{}
	seen := map[string]bool{}
	for _, s := range goneSnaps {
		mans, err := s.Manifests(fs)
		if errors.Is(err, iofs.ErrNotExist) {
			continue // its manifest list went last: its cleanup is done
		}
		if err != nil {
			return 0, 0, err
		}
		if s.ManifestList != "" {
			lists = append(lists, s.ManifestList)
		}
		for _, m := range mans {
			if keptManifests[m.FilePath()] || seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			var entries []iceberg.ManifestEntry
			err := func() error {
				for e, err := range m.Entries(fs, false) {
					if err != nil {
						return err
					}
					entries = append(entries, e)
				}
				return nil
			}()
			if errors.Is(err, iofs.ErrNotExist) {
				continue // removed by a cleanup killed halfway: its files went before it
			}
			if err != nil {
				return 0, 0, err
			}
			manifests = append(manifests, m.FilePath())
			for _, e := range entries {
				files[e.DataFile().FilePath()] = e.DataFile().FileSizeBytes()
			}
		}
	}
	if len(lists) == 0 {
		return 0, 0, nil
	}
	for _, m := range kept {
		for e, err := range m.Entries(fs, false) {
			if err != nil {
				return 0, 0, err
			}
			if e.Status() != iceberg.EntryStatusDELETED {
				delete(files, e.DataFile().FilePath())
			}
		}
	}
	for s := range current.Statistics() {
		delete(files, s.StatisticsPath)
	}
	faultpoint.Hit(FaultAfterExpireCommit)
	for _, group := range [][]string{slices.Sorted(maps.Keys(files)), manifests, lists} {
		var errs error
		for _, f := range group {
			err := fs.Remove(f)
			if errors.Is(err, iofs.ErrNotExist) {
				continue
			}
			if err != nil {
				errs = errors.Join(errs, err)
				continue
			}
			removed++
			bytes += files[f]
			faultpoint.Hit(FaultMidExpiredFiles)
		}
		if errs != nil {
			return removed, bytes, errs // the next group waits: it is the evidence of this one
		}
	}
	return removed, bytes, nil
}

// readMetadata reads a table metadata file.
func readMetadata(fs icebergio.IO, loc string) (table.Metadata, error) {
	f, err := fs.Open(loc)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return table.ParseMetadata(f)
}

// tableFiles lists the regular files below the table's location and their
// sizes.
func tableFiles(tbl *table.Table) (map[string]int64, error) {
	fs, err := tbl.FS(context.Background())
	if err != nil {
		return nil, err
	}
	walker, ok := fs.(icebergio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("icesink: the file system of %s cannot list its files (%T)", tbl.Location(), fs)
	}
	out := map[string]int64{}
	err = walker.WalkDir(tbl.Location(), func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !isFile(d) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		out[p] = info.Size()
		return nil
	})
	return out, err
}

// OrphanResult is what RemoveOrphans did (or, dry, would do).
type OrphanResult struct {
	Removed      int   `json:"orphan_files_removed"`
	RemovedBytes int64 `json:"orphan_bytes_removed"`
	// Paths are the orphans removed (or, dry, to remove).
	Paths []string `json:"orphan_files,omitempty"`
	// Foreign are unreferenced files Lima did not name, or outside the
	// table's data/ and metadata/ folders: kept.
	Foreign []string `json:"foreign_files,omitempty"`
	// Links are symbolic links found among the unreferenced files: kept.
	Links []string `json:"symlinks,omitempty"`
}

var (
	uuidRe    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	limaNamed = map[string][]string{
		"data":     {".parquet"},
		"metadata": {".avro", ".metadata.json"},
	}
)

// named reports whether rel (relative to the table's location) is in data/
// or metadata/ and carries a name Lima or iceberg-go writes.
func named(rel string) bool {
	folder, _, ok := strings.Cut(rel, "/")
	exts, known := limaNamed[folder]
	if !ok || !known {
		return false
	}
	base := path.Base(rel)
	if !uuidRe.MatchString(base) {
		return false
	}
	for _, e := range exts {
		if strings.HasSuffix(base, e) {
			return true
		}
	}
	return false
}

// RemoveOrphans removes the table's orphan files older than olderThan.
func RemoveOrphans(ctx context.Context, tbl *table.Table, olderThan time.Duration, dryRun bool) (OrphanResult, error) {
	var r OrphanResult
	pl, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(olderThan))
	if err != nil {
		return r, fmt.Errorf("plan the orphan files: %w", err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return r, err
	}
	// A second, independent reference check by base name: every file any
	// manifest of any snapshot names (deleted entries too), every manifest
	// and manifest list, every metadata file the log names.
	refs, err := allReferencedNames(fs, tbl)
	if err != nil {
		return r, fmt.Errorf("read the manifests: %w", err)
	}

	loc := strings.TrimSuffix(tbl.Location(), "/")
	locPath := loc // the orphan planner may give local paths: the location's path, unescaped
	if fileuri.Is(loc) {
		if p, err := fileuri.ToPath(loc); err == nil {
			locPath = p
		}
	}
	for _, f := range pl.OrphanFiles() {
		rel, ok := strings.CutPrefix(f.Path, loc+"/")
		if !ok {
			rel, ok = strings.CutPrefix(f.Path, locPath+"/")
		}
		if !ok {
			r.Foreign = append(r.Foreign, f.Path)
			continue
		}
		if !strings.Contains(f.Path, "://") {
			// A local file: never a symbolic link (nor anything not regular).
			st, err := os.Lstat(f.Path)
			if err != nil {
				continue // gone meanwhile
			}
			if st.Mode()&os.ModeSymlink != 0 {
				r.Links = append(r.Links, f.Path)
				continue
			}
			if !st.Mode().IsRegular() {
				r.Foreign = append(r.Foreign, f.Path)
				continue
			}
		}
		if !named(rel) {
			r.Foreign = append(r.Foreign, f.Path)
			continue
		}
		if refs[path.Base(f.Path)] {
			continue // referenced after all: never removed
		}
		r.Paths = append(r.Paths, f.Path)
		r.RemovedBytes += f.SizeBytes
		if dryRun {
			r.Removed++
			continue
		}
		if err := fs.Remove(f.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return r, fmt.Errorf("remove %s: %w", f.Path, err)
		}
		r.Removed++
		faultpoint.Hit(FaultMidOrphans)
	}
	return r, nil
}

// allReferencedNames are the base names of every file the table's current
// metadata references: the data and delete files of every manifest entry
// of every snapshot (deleted ones too), the manifests and manifest lists,
// the metadata file and those its log names, the statistics files.
func allReferencedNames(fs icebergio.IO, tbl *table.Table) (map[string]bool, error) {
	refs, err := referencedNames(fs, tbl)
	if err != nil {
		return nil, err
	}
	for _, s := range tbl.Metadata().Snapshots() {
		refs[path.Base(s.ManifestList)] = true
		mans, err := s.Manifests(fs)
		if err != nil {
			return nil, err
		}
		for _, m := range mans {
			refs[path.Base(m.FilePath())] = true
		}
	}
	for e := range tbl.Metadata().PreviousFiles() {
		refs[path.Base(e.MetadataFile)] = true
	}
	for st := range tbl.Metadata().Statistics() {
		refs[path.Base(st.StatisticsPath)] = true
	}
	refs[path.Base(tbl.MetadataLocation())] = true
	return refs, nil
}

// everReferencedNames are allReferencedNames and the base names of the
// manifest lists and manifests of every snapshot an earlier metadata
// version the log names has (a manifest list already gone, or an earlier
// metadata file, is skipped: nothing to learn from it).
func everReferencedNames(fs icebergio.IO, tbl *table.Table) (map[string]bool, error) {
	refs, err := allReferencedNames(fs, tbl)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		seen[s.SnapshotID] = true
	}
	for e := range tbl.Metadata().PreviousFiles() {
		m, err := readMetadata(fs, e.MetadataFile)
		if errors.Is(err, iofs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the earlier metadata %s: %w", e.MetadataFile, err)
		}
		for _, s := range m.Snapshots() {
			if seen[s.SnapshotID] {
				continue
			}
			seen[s.SnapshotID] = true
			refs[path.Base(s.ManifestList)] = true
			mans, err := s.Manifests(fs)
			if errors.Is(err, iofs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, m := range mans {
				refs[path.Base(m.FilePath())] = true
			}
		}
	}
	return refs, nil
}

// FaultMidOrphans kills the process after the first orphan is removed
// (LIMA_FAULTPOINT, crash tests).
const FaultMidOrphans = "maintain-mid-orphans"
