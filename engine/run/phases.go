package run

import "time"

// Phases is where one table's wall time went, as consecutive or
// non-overlapping stretches of the table's own timeline, so they add up to
// no more than the table's wall time (the rest — the stage's set-up, the
// history's finish — is StageOther).
//
// The source is read and cast on one goroutine while the sink writes
// Parquet on another: Read and CastCheck are that reader's time in the
// source and in casting, and WriteWait is how long the load waited on the
// writer (the reader blocked on the full channel of batches, then the
// writer's tail after the last batch). WriteBusy is the writer's own busy
// time, concurrent with Read and CastCheck: it is not part of the sum.
//
// A file load with several cast workers (etl.parallel, parallel.go) reads
// and casts ahead of the loader on other goroutines: there Read is the
// loader's wait for the next cast chunk (the reader and the workers
// behind it), and CastCheck the loader's own, sequential part — settling
// the cast rows in order (watermark, recorded fixes, the key check, the
// exceptions, the stats) and building the batches.
type Phases struct {
	// Open: list the input, resolve and sample the columns, open the
	// table, look for the load id.
	Open time.Duration
	// Land: copy the input to raw/ before reading it.
	Land time.Duration
	// Read: the reader in the source — open, decode, split records (with
	// parallel cast workers: the wait for the next cast chunk).
	Read time.Duration
	// CastCheck: the reader casting, normalizing and checking rows,
	// holding failed rows and building the Arrow batches.
	CastCheck time.Duration
	// WriteWait: the load waiting on the Parquet writer.
	WriteWait time.Duration
	// StageOther: the rest of the stage (loader set-up, the keys of an
	// incremental load, the history's staged files).
	StageOther time.Duration
	// Commit: the mode's last checks, the history's and the table's
	// commits, publishing the exceptions.
	Commit time.Duration
	// Gate4: the reconciliation of the committed snapshot (set by the
	// caller that runs gate 4; the load itself does not).
	Gate4 time.Duration
	// WriteBusy: the writer's busy time (concurrent; not in the sum).
	WriteBusy time.Duration
}

// Sum is the sequential phases' total (WriteBusy, concurrent, left out).
func (p Phases) Sum() time.Duration {
	return p.Open + p.Land + p.Read + p.CastCheck + p.WriteWait + p.StageOther + p.Commit + p.Gate4
}

// stageTimes are the stage's inner stretches a load measures (fileLoad);
// the lifecycle turns the stage's wall time not covered by them into
// StageOther.
type stageTimes struct {
	land, read, castCheck, writeWait, writeBusy time.Duration
}

func (s stageTimes) covered() time.Duration { return s.land + s.read + s.castCheck + s.writeWait }
