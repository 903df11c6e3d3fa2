package run

import (
	"context"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

func TestOpenDatabaseMissingEnv(t *testing.T) {
	t.Setenv("LIMA_TEST_UNSET_DSN", "")
	s := &plan.Source{Kind: plan.SourcePostgres, DSNEnv: "LIMA_TEST_UNSET_DSN"}
	_, err := openDatabase(context.Background(), t.TempDir(), "erp", s, &plan.TableSource{Name: "erp", Table: "orders"})
	if err == nil || !strings.Contains(err.Error(), "LIMA_TEST_UNSET_DSN is not set") {
		t.Fatalf("err = %v", err)
	}
	// A DSN that cannot be parsed is reported without quoting it.
	t.Setenv("LIMA_TEST_BAD_DSN", "root:s3cret@tcp(db:3306/erp")
	s = &plan.Source{Kind: plan.SourceMySQL, DSNEnv: "LIMA_TEST_BAD_DSN"}
	_, err = openDatabase(context.Background(), t.TempDir(), "erp", s, &plan.TableSource{Name: "erp", Table: "orders"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v", err)
	}
}
