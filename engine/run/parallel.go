package run

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sqldb"
)

// The parallel read of a file or database load. One goroutine reads the
// units in order and packs their rows into chunks (for a database table it
// also takes the source totals before the first row, writes the raw/
// extract and marks the rows an upsert's later version supersedes, all in
// read order, as readUnit does); one worker per core projects, casts
// and checks the rows of a chunk (castRow: what depends on the row alone);
// the loader takes the chunks back in input order and settles each row as
// the sequential path does (settle: watermark, recorded fixes, the key
// check, the exceptions, the stats, the batches). So every observable
// result — the rows and their order in the lake, the exceptions, their
// row numbers and identities, which copy of a duplicate key wins, the
// counts, fixes and control totals — is the sequential path's.
//
// Memory is bounded: at most chunksInFlight chunks of parallelChunkRows
// rows exist; they are reused.

// parallelChunkRows is the rows of a chunk (tests shrink it to put chunk
// boundaries everywhere).
var parallelChunkRows = 1024

// castWorkers is how many workers cast a load's rows, files or a database
// table alike (1: the sequential path).
func castWorkers(p *plan.Plan) int {
	if p != nil && p.ETL.Parallel > 0 {
		return p.ETL.Parallel
	}
	return min(runtime.GOMAXPROCS(0), 8)
}

// chunkCast, when set (tests), is called once per chunk a worker cast.
var chunkCast func()

// unitRead is one file of the parallel read: its unit and how the plan's
// columns map to its fields.
type unitRead struct {
	u     source.Unit
	idx   []int
	extra []extraCol
}

// rowCast is a worker's outcome of one data row of a chunk; its cells,
// values and fixes are in the chunk's flat buffers.
type rowCast struct {
	castFailed, hasNull bool
	// all are the cast's errors or the failed checks (a slice of its own:
	// a held row keeps it).
	all          []clean.CellError
	fixLo, fixHi int
	// key is the hash of the row's key cells (keyed: the row passed its
	// cast and checks and the table has a key): the loader touches its
	// key set slots a chunk at a time before settling the rows.
	key   [2]uint64
	keyed bool
}

// chunk is a run of consecutive rows of one unit.
type chunk struct {
	unit *unitRead
	rows []source.Row
	// super[i]: row i is superseded by the next row of an upsert's read
	// (sqldb.Reader.Superseded): skipped, neither cast nor settled.
	super []bool
	res   []rowCast
	// Row i's projected values, null flags and cells are [i*n, (i+1)*n)
	// of these (n: the plan's columns).
	vals  []string
	nulls []bool
	cells []clean.Cell
	fixes []clean.PendingFix
	// end marks the unit's last chunk; err is then its unit-level failure
	// (open, header, read), nil at a clean end.
	end bool
	err error
	// fail is a worker's panic, as an error.
	fail error
	done chan struct{}
}

// pipeline connects the reader, the workers and the loader.
type pipeline struct {
	l        *loader
	n        int // the plan's columns
	work     chan *chunk
	order    chan *chunk
	free     chan *chunk
	made     int
	inFlight int
	// err: why the reader stopped early (written before order is closed).
	err error
}

func (p *pipeline) get(ctx context.Context) *chunk {
	select {
	case c := <-p.free:
		return c
	default:
	}
	if p.made < p.inFlight {
		p.made++
		return &chunk{done: make(chan struct{}, 1)}
	}
	select {
	case c := <-p.free:
		return c
	case <-ctx.Done():
		return nil
	}
}

func (p *pipeline) put(c *chunk) {
	clear(c.rows) // let the rows' strings go
	c.rows, c.super, c.res, c.fixes = c.rows[:0], c.super[:0], c.res[:0], c.fixes[:0]
	c.unit, c.end, c.err, c.fail = nil, false, nil, nil
	p.free <- c
}

// send hands a chunk to the loader (in order) and to a worker. Neither
// channel can be full: they hold as many chunks as exist.
func (p *pipeline) send(c *chunk) {
	p.order <- c
	if len(c.rows) == 0 {
		c.done <- struct{}{}
		return
	}
	p.work <- c
}

// read reads the units in order into chunks.
func (p *pipeline) read(ctx context.Context, src source.Source, units []source.Unit, so source.Options) {
	defer close(p.order)
	defer close(p.work)
	defer func() {
		if r := recover(); r != nil {
			p.err = fmt.Errorf("internal error while reading: %v", r)
		}
	}()
	for _, u := range units {
		ur := &unitRead{u: u}
		c := p.get(ctx)
		if c == nil {
			p.err = ctx.Err()
			return
		}
		c.unit = ur
		rd, err := src.Open(ctx, u, so)
		if err != nil {
			c.end, c.err = true, err
			p.send(c)
			continue
		}
		if ur.idx, ur.extra, err = headerMap(p.l.rs.srcNames, rd.Columns(), nil, nil); err != nil {
			rd.Close()
			c.end, c.err = true, err
			p.send(c)
			continue
		}
		dbr, _ := rd.(*sqldb.Reader)
		if dbr != nil {
			// Before the first row: the same snapshot the rows come from
			// (the loader reads what this sets only after the chunk below
			// reaches it).
			if err := p.l.sourceTotals(ctx, u, dbr); err != nil {
				rd.Close()
				c.end, c.err = true, err
				p.send(c)
				continue
			}
		}
		for n := 0; ; n++ {
			if n&1023 == 0 && ctx.Err() != nil {
				rd.Close()
				p.err = ctx.Err()
				return
			}
			row, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				c.err = err
				break
			}
			if p.l.extract != nil {
				if err := p.l.extract.add(row); err != nil {
					rd.Close()
					p.err = err // the load fails, as readUnit's does
					return
				}
			}
			c.rows = append(c.rows, row)
			c.super = append(c.super, dbr != nil && p.l.supersededRow(rd))
			if len(c.rows) >= parallelChunkRows {
				p.send(c)
				if c = p.get(ctx); c == nil {
					rd.Close()
					p.err = ctx.Err()
					return
				}
				c.unit = ur
			}
		}
		rd.Close()
		c.end = true
		p.send(c)
	}
}

// cast is a worker: it casts the chunks it is given with its fork of the
// loader's caster.
func (p *pipeline) cast(cs *clean.Caster) {
	var kbuf []byte
	for c := range p.work {
		func() {
			defer func() {
				if r := recover(); r != nil {
					c.fail = fmt.Errorf("internal error while casting: %v", r)
				}
			}()
			p.castChunk(cs, c, &kbuf)
			if chunkCast != nil {
				chunkCast()
			}
		}()
		c.done <- struct{}{}
	}
}

func (p *pipeline) castChunk(cs *clean.Caster, c *chunk, kbuf *[]byte) {
	n, rows := p.n, len(c.rows)
	c.res = slices.Grow(c.res[:0], rows)[:rows]
	if cap(c.vals) < rows*n {
		c.vals = make([]string, rows*n)
		c.nulls = make([]bool, rows*n)
		c.cells = make([]clean.Cell, rows*n)
	}
	idx := c.unit.idx
	for i := range c.rows {
		row := &c.rows[i]
		r := &c.res[i]
		*r = rowCast{fixLo: len(c.fixes), fixHi: len(c.fixes)}
		if row.Kind != source.Data || c.super[i] {
			continue
		}
		vals, nulls := projectInto(idx, *row, c.vals[i*n:(i+1)*n], c.nulls[i*n:(i+1)*n])
		r.hasNull = nulls != nil
		errs := cs.Cast(vals, nulls)
		cells := cs.Cells()
		if errs != nil {
			r.castFailed, r.all = true, slices.Clone(errs)
		} else {
			r.all = clean.Evaluate(p.l.checks, cells, vals, nil)
			if len(r.all) == 0 && len(p.l.keyCols) > 0 {
				r.key, r.keyed = p.l.keyHashInto(kbuf, cells), true
			}
		}
		copy(c.cells[i*n:(i+1)*n], cells)
		c.fixes = cs.AppendPending(c.fixes)
		r.fixHi = len(c.fixes)
	}
}

// readParallel reads the units with workers casting ahead of the loader,
// and settles their rows in input order; emit sends the batch when it is
// full.
func (l *loader) readParallel(ctx context.Context, src source.Source, units []source.Unit, so source.Options, workers int, emit func() error) error {
	pctx, cancel := context.WithCancel(ctx)
	inFlight := 2*workers + 2
	p := &pipeline{l: l, n: len(l.rs.cols), inFlight: inFlight,
		work: make(chan *chunk, inFlight), order: make(chan *chunk, inFlight), free: make(chan *chunk, inFlight)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.read(pctx, src, units, so)
	}()
	finished := make(chan struct{}, workers)
	for range workers {
		go func() {
			defer func() { finished <- struct{}{} }()
			p.cast(l.caster.Fork())
		}()
	}
	err := l.settleChunks(ctx, p, emit)
	cancel()
	for c := range p.order { // the reader stops at its next chunk
		<-c.done
	}
	<-done
	for range workers {
		<-finished
	}
	if err == nil && p.err != nil {
		err = p.err
	}
	return err
}

// settleChunks is the loader's side: the chunks in input order, each row
// accounted for and settled as readUnit and row do it.
func (l *loader) settleChunks(ctx context.Context, p *pipeline, emit func() error) error {
	var cur *unitRead
	var fr FileResult
	n := p.n
	l.tick(&l.st.castCheck)
	for c := range p.order {
		<-c.done
		l.tick(&l.st.read) // waiting on the reader and the workers
		if c.fail != nil {
			return c.fail
		}
		if c.unit != cur {
			cur = c.unit
			u := cur.u
			fr = FileResult{Name: u.Name, OriginalName: u.OriginalName, Bytes: u.Size, Status: "read"}
			l.idx, l.extra = cur.idx, cur.extra
		}
		if err := ctx.Err(); err != nil {
			l.tr.Files = append(l.tr.Files, fr)
			return err
		}
		// The key set's slots of the chunk's keys, read in one loop whose
		// reads overlap, are in the CPU cache when settle probes them.
		for i := range c.res {
			if c.res[i].keyed {
				l.touched ^= l.keys.Touch(c.res[i].key)
			}
		}
		for i := range c.rows {
			row := c.rows[i]
			fr.RowsRead++
			l.tr.RowsRead++
			l.prog.RowsRead.Add(1)
			l.prog.Bytes.Add(int64(len(row.Raw) + 1))
			if c.super[i] {
				l.skip(SkipSuperseded)
				continue
			}
			if done, err := l.nonData(ctx, row); err != nil {
				l.tr.Files = append(l.tr.Files, fr)
				return err
			} else if done {
				continue
			}
			r := &c.res[i]
			lo, hi := i*n, (i+1)*n
			l.caster.Restore(c.cells[lo:hi], c.fixes[r.fixLo:r.fixHi])
			var nulls []bool
			if r.hasNull {
				nulls = c.nulls[lo:hi:hi]
			}
			l.preKey, l.preKeyed = r.key, r.keyed
			err := l.settle(ctx, row, c.vals[lo:hi:hi], nulls, r.castFailed, r.all)
			l.preKeyed = false
			if err != nil {
				l.tr.Files = append(l.tr.Files, fr)
				return err
			}
			if l.caster.Len() >= l.o.BatchRows {
				if err := emit(); err != nil {
					l.tr.Files = append(l.tr.Files, fr)
					return err
				}
			}
		}
		if c.end {
			var err error
			if c.err != nil {
				fr, err = l.fileError(ctx, &fr, cur.u, c.err)
			}
			l.tr.Files = append(l.tr.Files, fr)
			if err != nil {
				return err
			}
		}
		p.put(c)
		l.tick(&l.st.castCheck)
	}
	return nil
}
