package flow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgconn"
	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fileuri"
)

// Preconditions runs gate 2 for the plan in the workspace: sources
// reachable and readable, target writable, catalog and state store
// reachable, disk, memory and clock. It writes nothing but a probe file
// that it removes again; the catalog is opened read-only and a SQLite
// state store or catalog that does not exist yet is not created.
func Preconditions(ctx context.Context, ws Workspace, p *plan.Plan) []gates.Finding {
	return gates.Preconditions(ctx, p, ProbeFor(ws, p))
}

// ProbeFor wires gate 2 to a workspace: its folders, the SQLite catalog
// (opened read-only) and the state store (through OpenLedger).
func ProbeFor(ws Workspace, p *plan.Plan) gates.Probe {
	return gates.Probe{
		Workspace: ws.Dir,
		Warehouse: ws.Warehouse(p),
		StateDir:  ws.StateDir(),
		Catalog:   func(ctx context.Context) (gates.StoreState, error) { return probeCatalog(ctx, ws, p) },
		State:     func(ctx context.Context) (gates.StoreState, error) { return probeState(ctx, ws, p) },
		Owner: func(ctx context.Context) (gates.OwnerState, error) {
			st, _, err := ownerState(ctx, ws, p)
			return st, err
		},
	}
}

// PreconditionError is a failed gate 2: nothing was written. It unwraps
// to ErrPrecondition (exit 4).
type PreconditionError struct {
	// Findings are the failed checks, each with its evidence and fix.
	Findings []gates.Finding
}

// Error names every failed check with its evidence and fix, on one line.
func (e *PreconditionError) Error() string {
	parts := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		parts[i] = f.Name + ": " + f.Detail
		if f.Fix != "" {
			parts[i] += " (fix: " + f.Fix + ")"
		}
	}
	return fmt.Sprintf("%s: gate 2 found %d problem(s), nothing was written — %s; lima-tui check shows every check",
		ErrPrecondition, len(e.Findings), strings.Join(parts, "; "))
}

// Unwrap returns ErrPrecondition.
func (e *PreconditionError) Unwrap() error { return ErrPrecondition }

// checkPreconditions runs gate 2 for a run: the tables it loads (all when
// none are named). A failure is a *PreconditionError.
func checkPreconditions(ctx context.Context, o RunOptions) error {
	p := o.Plan
	if len(o.Tables) > 0 {
		c := *p
		c.Tables = map[string]*plan.Table{}
		for name, t := range p.Tables {
			if slices.Contains(o.Tables, name) {
				c.Tables[name] = t
			}
		}
		p = &c
	}
	if failed := gates.FailedFindings(Preconditions(ctx, o.Workspace, p)); len(failed) > 0 {
		return &PreconditionError{Findings: failed}
	}
	return nil
}

// probeCatalog opens the SQLite catalog read-only and looks up the plan's
// namespace. A catalog that does not exist yet is reported Missing, not
// created.
func probeCatalog(ctx context.Context, ws Workspace, p *plan.Plan) (gates.StoreState, error) {
	path := ws.CatalogPath(p)
	st := gates.StoreState{Path: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.Missing = true
		return st, nil
	case err != nil:
		return st, err
	case fi.IsDir():
		return st, fmt.Errorf("%s is a folder, not a SQLite catalog file", path)
	}
	uri, err := fileuri.FromPath(path)
	if err != nil {
		return st, err
	}
	db, err := sql.Open("sqlite", uri+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return st, err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return st, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('iceberg_tables', 'iceberg_namespace_properties')`).Scan(&n); err != nil {
		return st, err
	}
	if n < 2 {
		st.Evidence = fmt.Sprintf("opened the SQLite catalog %s read-only: %s, without the catalog tables yet (the first run creates them)", path, probeSizeText(fi.Size()))
		return st, nil
	}
	cat, err := sqlcat.NewCatalog("lima", db, sqlcat.SQLite, iceberg.Properties{"init_catalog_tables": "false"})
	if err != nil {
		return st, err
	}
	ns := table.Identifier{p.Namespace()}
	if st.NamespaceExists, err = cat.CheckNamespaceExists(ctx, ns); err != nil {
		return st, err
	}
	if st.NamespaceExists {
		for _, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return st, err
			}
			st.Tables++
		}
	}
	st.Evidence = fmt.Sprintf("opened the SQLite catalog %s read-only (%s) and looked up namespace %s", path, probeSizeText(fi.Size()), p.Namespace())
	return st, nil
}

func probeSizeText(n int64) string { return strconv.FormatInt(n, 10) + " bytes" }

// probeState opens the state store with OpenLedger and closes it again. A
// SQLite store that does not exist yet is reported Missing, not created.
// A PostgreSQL failure is explained without the DSN: whether the server's
// address accepts TCP connections at all.
func probeState(ctx context.Context, ws Workspace, p *plan.Plan) (gates.StoreState, error) {
	if p.Storage.State != "postgres" {
		path := ws.StatePath()
		st := gates.StoreState{Path: path}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			st.Missing = true
			return st, nil
		}
		s, err := OpenLedger(ctx, ws, p)
		if err != nil {
			return st, errors.New(strings.TrimPrefix(err.Error(), ErrPrecondition.Error()+": "))
		}
		s.Close()
		st.Evidence = fmt.Sprintf("opened the SQLite state store %s (OpenLedger: schema migrated to the current version)", path)
		return st, nil
	}
	env := p.Storage.StateDSNEnv
	schema := p.Storage.StateSchema
	if schema == "" {
		schema = "lima"
	}
	s, err := OpenLedger(ctx, ws, p)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), ErrPrecondition.Error()+": ")
		if dsn := os.Getenv(env); dsn != "" {
			msg += "; " + probeDialText(ctx, dsn)
		}
		return gates.StoreState{}, errors.New(msg)
	}
	s.Close()
	return gates.StoreState{Evidence: fmt.Sprintf("connected to the PostgreSQL state store from $%s (schema %s; OpenLedger: schema migrated to the current version)", env, schema)}, nil
}

// probeDialText says whether the DSN's server accepts a TCP connection, naming
// host and port only (never the DSN, which may hold a password).
func probeDialText(ctx context.Context, dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "the DSN does not parse"
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return "the server is reached through the socket folder " + cfg.Host
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	d := net.Dialer{Timeout: 3 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			return fmt.Sprintf("TCP connect to %s: %v", addr, op.Err)
		}
		return fmt.Sprintf("TCP connect to %s failed", addr)
	}
	c.Close()
	return fmt.Sprintf("TCP connect to %s works, so the server refused the login, the database or the schema", addr)
}
