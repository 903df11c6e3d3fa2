package sink

import "context"

// DataFile is a staged data file as a distributed worker reports it and
// its commit adopts it: where it is, how many rows and bytes it holds.
type DataFile struct {
	Path    string `json:"path"`
	Records int64  `json:"record_count"`
	Bytes   int64  `json:"file_size_bytes"`
}

// FileLister is the optional capability of a Staged that names its data
// files (a worker lists them in its manifest).
type FileLister interface {
	DataFiles() []DataFile
}

// Adopter is the optional capability of a Table whose commit can take data
// files other processes staged: Adopt checks every file lies in the
// table's data folder and holds the stated rows and bytes, and returns
// them as one staging. Discarding it keeps the files (a later commit of
// the same load may still need them).
type Adopter interface {
	Adopt(ctx context.Context, files []DataFile) (Staged, error)
}

// LoadFileRemover is the optional capability of a sink whose distributed
// workers name their files with a write id that starts with a marker
// derived from the load id: RemoveLoadFiles removes the table's data files
// whose name carries marker and none of the write ids in keep, and that no
// snapshot references — the files of the load's losing or killed attempts,
// never anything else.
type LoadFileRemover interface {
	RemoveLoadFiles(ctx context.Context, table, marker string, keep []string) (int, error)
}
