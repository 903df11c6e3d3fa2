package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

// ARCHITECTURE.md records the AWS Glue trigger equivalent to the plan's
// schedule; the expected UTC hour is worked out here with the time package.
func TestArchitectureRecordsTheGlueTrigger(t *testing.T) {
	for _, c := range []struct {
		cron, tz string
		want     func() string
	}{
		{"30 2 * * *", "Asia/Seoul", func() string {
			loc, _ := time.LoadLocation("Asia/Seoul")
			u := time.Date(2026, 3, 1, 2, 30, 0, 0, loc).UTC()
			return fmt.Sprintf("AWS Glue trigger (UTC): `cron(%d %d * * ? *)`", u.Minute(), u.Hour())
		}},
		{"0 6 * * 1-5", "", func() string { return "AWS Glue trigger (UTC): `cron(0 6 ? * MON-FRI *)`" }},
		{"0 2 1 * *", "Asia/Seoul", func() string { return "AWS Glue trigger: cannot be one trigger" }},
		{"", "", func() string { return "Not scheduled" }},
	} {
		dir := t.TempDir()
		p, err := plan.Parse([]byte("schema_version: 1\nplatform: {prefix: gl}\nsources: {in: {kind: files, path: in}}\ntables:\n  t:\n    source: {name: in, files: [\"*.csv\"]}\n"), "platform.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p.Schedule.Cron, p.Schedule.Timezone = c.cron, c.tz
		if err := WriteDocs(dir, p, nil, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "ARCHITECTURE.md"))
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		if !strings.Contains(doc, "<!-- lima:begin schedule -->") || !strings.Contains(doc, c.want()) {
			t.Errorf("cron %q %s: ARCHITECTURE.md lacks %q:\n%s", c.cron, c.tz, c.want(), doc)
		}
	}
}
