package gates

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// closedPort is a loopback port nothing listens on: one the kernel just
// handed out and that was closed again.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestGate2SQLServerOracleWithoutServer: no SQL Server or Oracle server
// can run on the test machines, so gate 2 is tested on the paths that need
// none: an unset DSN variable, a DSN the driver refuses, and a server that
// does not answer (a closed loopback port). Each fails with a fix, the
// table checks are skipped, and neither the DSN nor its password shows.
func TestGate2SQLServerOracleWithoutServer(t *testing.T) {
	port := strconv.Itoa(closedPort(t))
	const pw = "s3cretpw"
	dsns := map[string]string{
		"LIMA_TEST_MSSQL_DOWN":  "sqlserver://lima:" + pw + "@127.0.0.1:" + port + "?database=erp&dial+timeout=3",
		"LIMA_TEST_ORACLE_DOWN": "oracle://lima:" + pw + "@127.0.0.1:" + port + "/ORCLPDB1?CONNECTION TIMEOUT=3",
		"LIMA_TEST_MSSQL_BAD":   "sqlserver://lima:" + pw + "@127.0.0.1:" + port + "?encrypt=perhaps",
	}
	for k, v := range dsns {
		t.Setenv(k, v)
	}
	p := &plan.Plan{
		Sources: map[string]*plan.Source{
			"msdown":   {Kind: plan.SourceSQLServer, DSNEnv: "LIMA_TEST_MSSQL_DOWN"},
			"oradown":  {Kind: plan.SourceOracle, DSNEnv: "LIMA_TEST_ORACLE_DOWN"},
			"msbad":    {Kind: plan.SourceSQLServer, DSNEnv: "LIMA_TEST_MSSQL_BAD"},
			"msunset":  {Kind: plan.SourceSQLServer, DSNEnv: "LIMA_TEST_UNSET_MSSQL_DSN_VARIABLE"},
			"oraunset": {Kind: plan.SourceOracle, DSNEnv: "LIMA_TEST_UNSET_ORACLE_DSN_VARIABLE"},
		},
		Tables: map[string]*plan.Table{
			"orders": {Source: &plan.TableSource{Name: "msdown", Table: "orders", Schema: "dbo"}},
			"lines":  {Source: &plan.TableSource{Name: "oradown", Table: "LINES"}},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var pr Probe
	check := func(name string) Finding { return pr.checkDatabaseSource(ctx, name, p.Sources[name]) }

	for _, name := range []string{"msunset", "oraunset"} {
		f := check(name)
		if f.Status != Fail || !strings.Contains(f.Detail, p.Sources[name].DSNEnv+" (sources."+name+".dsn_env) is not set") ||
			!strings.Contains(f.Fix, "export the DSN of the "+p.Sources[name].Kind+" database") {
			t.Errorf("%s: %+v", name, f)
		}
	}
	if f := check("msbad"); f.Status != Fail || !strings.Contains(f.Detail, "not a valid sqlserver DSN") || !strings.Contains(f.Fix, "sqlserver://") {
		t.Errorf("msbad: %+v", f)
	}
	findings := []Finding{check("msbad")}
	for _, name := range []string{"msdown", "oradown"} {
		f := check(name)
		findings = append(findings, f)
		if f.Status != Fail || !strings.HasPrefix(f.Detail, "connect: ") || !strings.Contains(f.Detail, "127.0.0.1:"+port) || f.Fix == "" {
			t.Errorf("%s: %+v", name, f)
		}
	}
	for _, name := range []string{"orders", "lines"} {
		f := pr.checkDatabaseTable(ctx, p, name)
		findings = append(findings, f)
		if f.Status != Skip || !strings.Contains(f.Detail, "does not connect") {
			t.Errorf("table %s: %+v", name, f)
		}
	}
	for _, f := range findings {
		for _, dsn := range dsns {
			if strings.Contains(f.Detail+f.Fix, pw) || strings.Contains(f.Detail+f.Fix, dsn) {
				t.Errorf("finding %s shows the DSN or its password: %+v", f.Name, f)
			}
		}
	}
}
