package plan

import "strings"

// RawEnabled reports whether source files are landed under raw/:
// storage.raw when set; otherwise on for a warehouse on S3 (the landing
// zone of an AWS lake, where the files other systems drop must be kept as
// they arrived) and off for a local warehouse (the files stay in their
// folder).
func (p *Plan) RawEnabled() bool {
	if p.Storage.Raw != nil {
		return *p.Storage.Raw
	}
	w := strings.ToLower(p.Warehouse())
	return strings.HasPrefix(w, "s3://") || strings.HasPrefix(w, "s3a://")
}
