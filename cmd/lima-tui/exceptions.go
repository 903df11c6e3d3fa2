package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/ui"
	"github.com/lima-lake/lima/wizard"
)

const exceptionsUsage = `Usage:
  lima-tui exceptions [--owner O] [--table T] [--rule R] [--status S] [--overdue]   the browser (a terminal)
  lima-tui exceptions list [--owner O] [--table T] [--rule R] [--status S] [--overdue] [--limit N] [--after CURSOR] [--json]
  lima-tui exceptions show ID [--json]
  lima-tui exceptions assign ID... --owner O [--by NAME]
  lima-tui exceptions resolve ID --set col=value... [--note N] [--by NAME]
  lima-tui exceptions waive ID --reason R [--by NAME]
  lima-tui exceptions replay [--table T] [--id ID]... [--by NAME]
  lima-tui exceptions export --format csv|json [filters] [--out F]
All take --plan F (default platform.yaml).
`

func defaultBy() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

func cmdExceptions(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// No verb: the browser (it names the verbs when there is no terminal).
		return cmdBrowser(ctx, args, stdout, stderr)
	}
	verb, rest := args[0], args[1:]
	fs := newFlags("exceptions "+verb, stderr)
	planPath := fs.String("plan", "platform.yaml", "the plan")
	by := personVar(fs, "by", defaultBy(), "who does this: a `name`, recorded in the history")
	asJSON := fs.Bool("json", false, "JSON output")
	var f ledger.Filter
	fs.StringVar(&f.Owner, "owner", "", "filter by owner (assign: the new owner)")
	fs.StringVar(&f.Table, "table", "", "filter by table")
	fs.StringVar(&f.Rule, "rule", "", "filter by rule")
	fs.StringVar(&f.Status, "status", "", "filter by status: open, fixed, replayed, waived, superseded")
	fs.BoolVar(&f.Overdue, "overdue", false, "only exceptions past their deadline and not resolved")
	limit := fs.Int("limit", ledger.DefaultPageSize, "rows per page")
	after := fs.String("after", "", "continue after this cursor")
	var sets multi
	fs.Var(&sets, "set", "col=value: the fixed value (resolve; repeatable)")
	note := fs.String("note", "", "a note for the history")
	reason := fs.String("reason", "", "why (waive)")
	format := fs.String("format", "csv", "export format: csv or json")
	outPath := fs.String("out", "", "export to this file (default: stdout)")
	var replayIDs multi
	fs.Var(&replayIDs, "id", "replay only this fixed exception (replay; repeatable; default: every fixed one)")
	// Flags may follow the ids: parse ids and flags in any order.
	var pos []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return parseExit(err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if *limit < 0 {
		fmt.Fprintf(stderr, "lima-tui exceptions %s: --limit %d: give the rows per page, 1 to %d (0: the default %d)\n", verb, *limit, ledger.MaxPageSize, ledger.DefaultPageSize)
		return exitUsage
	}
	f.Now = time.Now()
	p, err := flow.LoadPlan(*planPath)
	if err != nil {
		return fail(stderr, err)
	}
	ws := flow.Workspace{Dir: filepath.Dir(*planPath)}
	st, err := flow.OpenLedger(ctx, ws, p)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	// What the ledger refuses as an invalid argument (a --status it does
	// not know, a --after that is no cursor) is the user's to correct: a
	// usage error, not a failure.
	fail := func(stderr io.Writer, err error) int {
		if errors.Is(err, ledger.ErrInvalid) {
			fmt.Fprintf(stderr, "lima-tui exceptions %s: %s\n", verb, ui.Sanitize(err.Error()))
			return exitUsage
		}
		return fail(stderr, err)
	}
	ids := func() ([]int64, bool) {
		var out []int64
		for _, s := range pos {
			id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
			if err != nil {
				fmt.Fprintf(stderr, "lima-tui exceptions %s: %q is not an exception id\n", verb, ui.Sanitize(s))
				return nil, false
			}
			out = append(out, id)
		}
		if len(out) == 0 {
			fmt.Fprintf(stderr, "lima-tui exceptions %s: give at least one exception id\n", verb)
			return nil, false
		}
		return out, true
	}
	switch verb {
	case "list":
		page, next, err := st.List(ctx, f, ledger.Page{After: ledger.Cursor(*after), Limit: *limit})
		if err != nil {
			return fail(stderr, err)
		}
		total, err := st.Count(ctx, f)
		if err != nil {
			return fail(stderr, err)
		}
		if *asJSON {
			b, _ := json.Marshal(struct {
				Total      int64              `json:"total"`
				Exceptions []ledger.Exception `json:"exceptions"`
				Next       ledger.Cursor      `json:"next,omitempty"`
			}{total, nonNil(page), next})
			fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
			return exitOK
		}
		fmt.Fprintf(stdout, "%d exception(s)", total)
		if len(page) < int(total) {
			fmt.Fprintf(stdout, ", showing %d", len(page))
		}
		fmt.Fprintln(stdout)
		fmt.Fprintf(stdout, "%7s  %-8s  %-14s  %-24s  %-14s  %-22s  %s\n", "id", "status", "table", "where", "rule", "owner", "due")
		for _, e := range page {
			due := "–"
			if !e.Deadline.IsZero() {
				due = e.Deadline.Local().Format("2006-01-02 15:04")
				if e.Overdue(f.Now) {
					due += " ! overdue"
				}
			}
			fmt.Fprintf(stdout, "%7d  %-8s  %-14s  %-24s  %-14s  %-22s  %s\n", e.ID, e.Status, ui.Sanitize(e.Table), ui.Sanitize(where(e)),
				ui.Sanitize(strings.Join(e.Rules(), ",")), ui.Sanitize(e.Owner), due)
		}
		if next != "" {
			fmt.Fprintf(stdout, "more: lima-tui exceptions list --after %s\n", next)
		}
		return exitOK
	case "show":
		idl, ok := ids()
		if !ok {
			return exitUsage
		}
		for _, id := range idl {
			e, err := st.Get(ctx, id)
			if err != nil {
				return fail(stderr, err)
			}
			hist, err := st.History(ctx, id)
			if err != nil {
				return fail(stderr, err)
			}
			if *asJSON {
				b, _ := json.Marshal(struct {
					ledger.Exception
					History []ledger.Event `json:"history"`
				}{e, hist})
				fmt.Fprintln(stdout, string(ui.EscapeJSON(b)))
				continue
			}
			printException(stdout, e, hist)
		}
		return exitOK
	case "assign":
		idl, ok := ids()
		if !ok || f.Owner == "" {
			fmt.Fprintln(stderr, "lima-tui exceptions assign: give ids and --owner")
			return exitUsage
		}
		if err := wizard.CheckName(strings.TrimSpace(f.Owner)); err != nil {
			fmt.Fprintf(stderr, "lima-tui exceptions assign: --owner %s: %v\n", ui.Sanitize(f.Owner), err)
			return exitUsage
		}
		if err := st.Assign(ctx, idl, f.Owner, *by); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "assigned %d exception(s) to %s\n", len(idl), ui.Sanitize(f.Owner))
		return exitOK
	case "resolve":
		idl, ok := ids()
		if !ok || len(idl) != 1 || len(sets) == 0 {
			fmt.Fprintln(stderr, "lima-tui exceptions resolve: give one id and at least one --set col=value")
			return exitUsage
		}
		fixed := map[string]string{}
		for _, s := range sets {
			k, v, ok := strings.Cut(s, "=")
			if !ok || k == "" {
				fmt.Fprintf(stderr, "lima-tui exceptions resolve: --set %q is not col=value\n", ui.Sanitize(s))
				return exitUsage
			}
			fixed[k] = v
		}
		if err := st.Resolve(ctx, idl[0], fixed, *by, *note); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "exception %d fixed; run `lima-tui exceptions replay` to load it\n", idl[0])
		return exitOK
	case "waive":
		idl, ok := ids()
		if !ok || strings.TrimSpace(*reason) == "" {
			fmt.Fprintln(stderr, "lima-tui exceptions waive: give ids and --reason")
			return exitUsage
		}
		for _, id := range idl {
			if err := st.Waive(ctx, id, *reason, *by); err != nil {
				return fail(stderr, err)
			}
		}
		fmt.Fprintf(stdout, "waived %d exception(s)\n", len(idl))
		return exitOK
	case "replay":
		if len(pos) > 0 {
			fmt.Fprintf(stderr, "lima-tui exceptions replay: unexpected argument %q: select exceptions with --id ID (repeatable)\n", ui.Sanitize(pos[0]))
			return exitUsage
		}
		var sel []int64
		for _, s := range replayIDs {
			id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
			if err != nil || id <= 0 {
				fmt.Fprintf(stderr, "lima-tui exceptions replay: --id %q is not an exception id\n", ui.Sanitize(s))
				return exitUsage
			}
			sel = append(sel, id)
		}
		out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, Table: f.Table, IDs: sel, By: *by})
		if err != nil {
			return fail(stderr, err)
		}
		printSummary(stderr, out.Report)
		fmt.Fprintln(stdout, out.ReportPath)
		return out.Report.ExitCode()
	case "export":
		var w io.Writer = stdout
		clean := func(s string) string { return s }
		if *outPath == "" && stdoutIsTerminal(stdout) {
			// On a terminal the data is shown, not kept: escaped.
			clean, w = ui.Sanitize, jsonEscaper{stdout}
		}
		if *outPath != "" {
			fh, err := os.OpenFile(*outPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return fail(stderr, err)
			}
			defer fh.Close()
			w = fh
		}
		if err := export(ctx, st, f, *format, w, clean); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	fmt.Fprintf(stderr, "lima-tui exceptions: unknown verb %q\n\n%s", ui.Sanitize(verb), exceptionsUsage)
	return exitUsage
}

func nonNil(e []ledger.Exception) []ledger.Exception {
	if e == nil {
		return []ledger.Exception{}
	}
	return e
}

func where(e ledger.Exception) string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	case e.Row > 0:
		return fmt.Sprintf("%s#%d", e.File, e.Row)
	}
	return e.File
}

func printException(w io.Writer, e ledger.Exception, hist []ledger.Event) {
	fmt.Fprintf(w, "exception %d — %s (%s)\n", e.ID, e.Status, e.Level)
	fmt.Fprintf(w, "  table     %s\n  where     %s\n  load      %s (run %s)\n", ui.Sanitize(e.Table), ui.Sanitize(where(e)), e.LoadID, e.RunID)
	if e.LastLoadID != "" && e.LastLoadID != e.LoadID {
		fmt.Fprintf(w, "  seen again in load %s (%s)\n", ui.Sanitize(e.LastLoadID), e.LastSeenAt.Local().Format(time.RFC3339))
	}
	if e.SupersededBy != "" {
		fmt.Fprintf(w, "  superseded by load %s: the row is no longer in the source\n", ui.Sanitize(e.SupersededBy))
	}
	if e.Key != "" {
		fmt.Fprintf(w, "  key       %s\n", ui.Sanitize(e.Key))
	}
	fmt.Fprintf(w, "  owner     %s\n", ui.Sanitize(e.Owner))
	if !e.Deadline.IsZero() {
		fmt.Fprintf(w, "  deadline  %s\n", e.Deadline.Local().Format(time.RFC3339))
	}
	enc := e.Encoding
	if enc == "" {
		enc = "utf-8"
	}
	fmt.Fprintf(w, "  raw (%s, %d bytes)\n    %s\n", enc, len(e.Raw), ui.Sanitize(string(e.Raw)))
	fmt.Fprintln(w, "  failures")
	for _, f := range e.Failures {
		col := f.Column
		if col == "" {
			col = "(row)"
		}
		fmt.Fprintf(w, "    %-14s %-14s %s\n", ui.Sanitize(col), ui.Sanitize(f.Rule), ui.Sanitize(f.Reason))
	}
	if len(e.Fixed) > 0 {
		fmt.Fprintln(w, "  fixed values")
		for k, v := range e.Fixed {
			fmt.Fprintf(w, "    %s = %s\n", ui.Sanitize(k), ui.Sanitize(v))
		}
	}
	fmt.Fprintln(w, "  history")
	for _, h := range hist {
		fmt.Fprintf(w, "    %s  %-9s %s", h.At.Local().Format("2006-01-02 15:04:05"), h.Action, ui.Sanitize(h.By))
		if h.Note != "" {
			fmt.Fprintf(w, " — %s", ui.Sanitize(h.Note))
		}
		fmt.Fprintln(w)
	}
}

// csvSafe keeps a spreadsheet from running a cell: a value starting with
// = + - @, a tab or a carriage return is prefixed with an apostrophe.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func export(ctx context.Context, st ledger.Store, f ledger.Filter, format string, w io.Writer, clean func(string) string) error {
	var cw *csv.Writer
	enc := json.NewEncoder(w)
	switch format {
	case "csv":
		cw = csv.NewWriter(w)
		cw.Write([]string{"id", "status", "table", "file", "line", "row", "key", "rules", "columns", "reasons", "owner", "deadline", "load_id", "raw"})
	case "json":
	default:
		return fmt.Errorf("%w: --format %q: use csv or json", flow.ErrUsage, format)
	}
	var after ledger.Cursor
	for {
		page, next, err := st.List(ctx, f, ledger.Page{After: after, Limit: ledger.MaxPageSize})
		if err != nil {
			return err
		}
		for _, e := range page {
			if cw == nil {
				if err := enc.Encode(e); err != nil {
					return err
				}
				continue
			}
			var cols, reasons []string
			for _, fl := range e.Failures {
				cols = append(cols, fl.Column)
				reasons = append(reasons, fl.Reason)
			}
			dl := ""
			if !e.Deadline.IsZero() {
				dl = e.Deadline.UTC().Format(time.RFC3339)
			}
			rec := []string{strconv.FormatInt(e.ID, 10), e.Status, e.Table, e.File, strconv.FormatInt(e.Line, 10), strconv.FormatInt(e.Row, 10), e.Key,
				strings.Join(e.Rules(), ","), strings.Join(cols, ","), strings.Join(reasons, "; "), e.Owner, dl, e.LoadID, string(e.Raw)}
			for i := range rec {
				rec[i] = clean(csvSafe(rec[i]))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		if next == "" || len(page) == 0 {
			break
		}
		after = next
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	return nil
}

var _ = errors.New

// stdoutIsTerminal reports whether w is a terminal (a variable for tests).
var stdoutIsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// jsonEscaper writes JSON with DEL, C1 and BiDi characters escaped.
type jsonEscaper struct{ w io.Writer }

func (j jsonEscaper) Write(b []byte) (int, error) {
	if _, err := j.w.Write(ui.EscapeJSON(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
