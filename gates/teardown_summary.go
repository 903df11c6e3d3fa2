package gates

import (
	"fmt"
	"sort"
	"strings"
)

// Summary renders the blast radius for people, one fact per line. Table,
// file and namespace names come from the catalog and the disk: a terminal
// caller passes every line through its sanitizer.
func (inv *Inventory) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Gate 5 — teardown of %s: the blast radius\n", inv.Prefix)
	if inv.Empty() {
		b.WriteString("\nNothing to remove: no table, namespace, lake file, state or report of this plan is left.\n")
	}

	kind := inv.Catalog.Kind
	if kind == "" {
		kind = "catalog"
	}
	if inv.Catalog.Database != "" {
		fmt.Fprintf(&b, "\nCatalog (Glue Data Catalog, database %s)\n", inv.Catalog.Database)
	} else {
		fmt.Fprintf(&b, "\nCatalog (%s, %s)\n", kind, orNone(inv.Catalog.File))
	}
	switch {
	case inv.Catalog.DropNamespace:
		fmt.Fprintf(&b, "  namespace %s — dropped\n", inv.Namespace)
	case inv.Catalog.NamespaceExists:
		fmt.Fprintf(&b, "  namespace %s — kept (it holds tables Lima did not create)\n", inv.Namespace)
	default:
		fmt.Fprintf(&b, "  namespace %s — not in the catalog\n", inv.Namespace)
	}
	if len(inv.Tables) > 0 {
		fmt.Fprintf(&b, "  %-32s %9s %10s  %-22s %-22s %s\n", "table", "snapshots", "rows", "data files", "metadata files", "action")
		for _, t := range inv.Tables {
			rows := "?"
			if t.Rows >= 0 {
				rows = fmt.Sprint(t.Rows)
			}
			action := "drop + remove files"
			switch {
			case !t.Drop:
				action = "kept"
			case !t.RemoveFiles:
				action = "drop (files kept)"
			}
			fmt.Fprintf(&b, "  %-32s %9d %10s  %-22s %-22s %s\n", inv.Namespace+"."+t.Name, t.Snapshots, rows,
				countBytes(t.DataFiles, t.DataBytes), countBytes(t.MetadataFiles, t.MetadataBytes), action)
			if t.InCatalog {
				fmt.Fprintf(&b, "      its Glue table and %d partition(s) are deleted\n", t.Partitions)
			}
			if t.OtherFiles > 0 {
				fmt.Fprintf(&b, "      and %s of other files under its folder\n", countBytes(t.OtherFiles, t.OtherBytes))
			}
			if t.Note != "" {
				fmt.Fprintf(&b, "      ! %s\n", t.Note)
			}
		}
	}
	if inv.Catalog.RemoveFile {
		b.WriteString("  the catalog file holds nothing else and is removed with the state\n")
	}

	fmt.Fprintf(&b, "\nWarehouse (%s)\n", orNone(inv.Warehouse))
	shown := 0
	for _, a := range inv.Areas {
		if a.Kind == AreaNamespace {
			if a.Files == 0 && a.Symlinks == 0 {
				fmt.Fprintf(&b, "  %-32s the folder itself (no stray files beside the table folders)\n", a.Name)
			} else {
				fmt.Fprintf(&b, "  %-32s %s beside the table folders\n", a.Name, areaCounts(a))
			}
			shown++
		}
	}
	for _, p := range inv.Prefixes {
		if p.Kind == AreaTable || p.Kind == AreaNamespace {
			fmt.Fprintf(&b, "  %-32s %s under %s\n", p.Name, countBytes(p.Objects, p.Bytes), p.URI)
			shown++
		}
	}
	for _, a := range inv.Layers {
		if a.Exists {
			fmt.Fprintf(&b, "  %-32s %s\n", a.Name, areaCounts(a))
		} else {
			fmt.Fprintf(&b, "  %-32s 0 files (not there)\n", a.Name)
		}
		shown++
	}
	if shown == 0 {
		b.WriteString("  nothing\n")
	}

	fmt.Fprintf(&b, "\nState (%s)\n", orNone(inv.State.Where))
	var stateNames []string
	var stateFiles, stateBytes int64
	for _, a := range inv.Areas {
		if a.Kind == AreaState {
			stateNames = append(stateNames, a.Name)
			stateFiles += a.Files
			stateBytes += a.Bytes
		}
	}
	if len(stateNames) > 0 {
		fmt.Fprintf(&b, "  files: %s — %s\n", strings.Join(stateNames, ", "), countBytes(stateFiles, stateBytes))
	} else {
		b.WriteString("  files: none\n")
	}
	if inv.State.Open {
		fate := "removed with the state files"
		switch {
		case inv.State.Store == "postgres":
			fate = "KEPT (shared store)"
		case !inv.State.RowsRemoved:
			fate = "KEPT (the state folder is a symbolic link)"
		}
		fmt.Fprintf(&b, "  ledger rows: %d run(s), %d watermark(s), %d exception(s)%s, %d pending load(s) — %s\n",
			inv.State.Runs, inv.State.Watermarks, inv.State.Exceptions, byStatus(inv.State.ExceptionsByStatus), inv.State.PendingLoads, fate)
	} else {
		b.WriteString("  ledger rows: none (no state store)\n")
	}

	b.WriteString("\nReports\n")
	reported := false
	for _, a := range inv.Areas {
		if a.Kind == AreaReports {
			fmt.Fprintf(&b, "  %s: %d run folder(s), %s\n", a.Path, a.Entries, areaCounts(a))
			reported = true
		}
	}
	if !reported {
		b.WriteString("  none\n")
	}

	if inv.OwnerMarker != "" {
		fmt.Fprintf(&b, "\nOwnership\n  %s: this workspace's claim on the lake — removed last, once everything above is gone\n", inv.OwnerMarker)
	}

	fmt.Fprintf(&b, "\nIn all: %d table(s) dropped, %s removed", inv.Total.Tables, countBytes(inv.Total.Files, inv.Total.Bytes))
	if inv.Total.Symlinks > 0 {
		fmt.Fprintf(&b, ", %d link(s) removed as links (what they point to is kept)", inv.Total.Symlinks)
	}
	b.WriteString(".\n")

	b.WriteString("\nKept — a teardown never removes these:\n")
	for _, k := range inv.Kept {
		fmt.Fprintf(&b, "  %s — %s\n", k.Path, k.Reason)
	}
	b.WriteString("  (platform.yaml, README.md, ARCHITECTURE.md and the source data always stay)\n")

	var warns, blocks []Finding
	for _, f := range inv.Findings {
		switch f.Status {
		case Fail:
			blocks = append(blocks, f)
		case Warn:
			warns = append(warns, f)
		}
	}
	if len(warns) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, f := range warns {
			fmt.Fprintf(&b, "  ! %s: %s\n", f.Name, f.Detail)
		}
	}
	if len(blocks) > 0 {
		b.WriteString("\nBlocked — nothing can be removed until this is fixed:\n")
		for _, f := range blocks {
			fmt.Fprintf(&b, "  ✗ %s: %s\n", f.Name, f.Detail)
			if f.Fix != "" {
				fmt.Fprintf(&b, "    fix: %s\n", f.Fix)
			}
		}
	}
	return b.String()
}

// Summary renders what a teardown did, one fact per line (names are not
// sanitized; see Inventory.Summary).
func (r *TeardownResult) Summary() string {
	var b strings.Builder
	if r.Status == Pass {
		b.WriteString("Teardown complete.\n")
	} else {
		b.WriteString("Teardown not complete.\n")
	}
	if len(r.DroppedTables) > 0 {
		fmt.Fprintf(&b, "  dropped from the catalog: %s\n", strings.Join(r.DroppedTables, ", "))
	}
	if r.DroppedNamespace {
		b.WriteString("  dropped the namespace\n")
	}
	for _, p := range r.Removed {
		fmt.Fprintf(&b, "  removed %s\n", p)
	}
	fmt.Fprintf(&b, "  in all: %s removed\n", countBytes(r.RemovedFiles, r.RemovedBytes))
	if len(r.Kept) > 0 {
		b.WriteString("Kept:\n")
		for _, k := range r.Kept {
			fmt.Fprintf(&b, "  %s — %s\n", k.Path, k.Reason)
		}
	}
	for _, f := range r.Findings {
		if f.Status == Fail {
			fmt.Fprintf(&b, "  ✗ %s: %s\n", f.Name, f.Detail)
			if f.Fix != "" {
				fmt.Fprintf(&b, "    fix: %s\n", f.Fix)
			}
		}
	}
	return b.String()
}

func countBytes(files, bytes int64) string {
	return fmt.Sprintf("%d file%s (%s)", files, plural(int(min(files, 2)), "", "s"), HumanBytes(bytes))
}

func areaCounts(a AreaInventory) string {
	s := countBytes(a.Files, a.Bytes)
	if a.Symlinks > 0 {
		s += fmt.Sprintf(", %d link(s), not followed", a.Symlinks)
	}
	return s
}

func byStatus(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
