// Package cdcref is the tests' reference for change capture: a plain map
// that applies change files with the documented semantics (engine/run/cdc.go),
// written independently of the loader, and a generator of random change
// streams (CSV files: op, seq, id, name, amount) that include every anomaly.
package cdcref

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Header is the change files' header.
const Header = "op,seq,id,name,amount"

// Row is a change row as the generator wrote it.
type Row struct {
	op     string
	seq    int
	id     int
	name   string
	amount int
}

// Replay applies change files with the documented semantics, written
// independently of the loader: a plain map, one change at a time.
type Replay struct {
	// Rows is the table: id → name, amount.
	Rows    map[int][2]string
	applied map[string]string // file → content hash
	hashes  map[string]bool
	posSeq  int
	posFile string
	hasPos  bool
	// History counts the applied changes (the versions history keeps).
	History int
}

func NewReplay() *Replay {
	return &Replay{Rows: map[int][2]string{}, applied: map[string]string{}, hashes: map[string]bool{}}
}

// Counts are a batch's accounting: rows read, applied (loaded: one per
// key touched), skipped (header, superseded in the batch), held back, and
// the anomalies by rule.
type Counts struct {
	Read, Loaded, Skipped, Quarantined int64
	Rules                              map[string]int64
}

func (r *Replay) Apply(files map[string]string) Counts {
	cnt := Counts{Rules: map[string]int64{}}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	type item struct {
		Row
		file string
		pos  int
	}
	var items []item
	newHashes := map[string]bool{} // applied in this batch
	batchSeen := map[string]bool{}
	pos := 0
	for _, n := range names {
		sum := fmt.Sprintf("%x", sha256.Sum256([]byte(files[n])))
		if old, ok := r.applied[n]; ok && old == sum {
			continue
		}
		_, nameSeen := r.applied[n]
		if r.hashes[sum] || nameSeen || batchSeen[sum] {
			cnt.Rules["change_file_seen_twice"]++
			r.applied[n] = sum
			batchSeen[sum] = true
			continue
		}
		batchSeen[sum] = true
		newHashes[sum] = true
		lines := strings.Split(strings.TrimSuffix(files[n], "\n"), "\n")
		cnt.Read += int64(len(lines))
		cnt.Skipped++ // header
		for _, ln := range lines[1:] {
			pos++
			f := strings.Split(ln, ",")
			if f[0] != "I" && f[0] != "U" && f[0] != "D" {
				cnt.Rules["change_invalid"]++
				continue
			}
			seq, _ := strconv.Atoi(f[1])
			id, _ := strconv.Atoi(f[2])
			am, _ := strconv.Atoi(f[4])
			items = append(items, item{Row{f[0], seq, id, f[3], am}, n, pos})
		}
	}
	for n := range batchSeen {
		r.hashes[n] = true
	}
	for _, n := range names {
		sum := fmt.Sprintf("%x", sha256.Sum256([]byte(files[n])))
		if newHashes[sum] {
			r.applied[n] = sum
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].seq != items[j].seq {
			return items[i].seq < items[j].seq
		}
		return items[i].pos < items[j].pos // files are numbered in name order
	})
	touched := map[int]bool{}
	applied := 0
	for i, it := range items {
		if r.hasPos && (it.seq < r.posSeq || (it.seq == r.posSeq && it.file < r.posFile)) {
			cnt.Rules["change_sequence_backwards"]++
			continue
		}
		_, exists := r.Rows[it.id]
		switch {
		case it.op == "I" && exists:
			cnt.Rules["change_insert_existing_key"]++
		case it.op == "U" && !exists:
			cnt.Rules["change_update_unknown_key"]++
		case it.op == "D" && !exists:
			later := false
			for _, jt := range items[i+1:] {
				if jt.id == it.id && jt.op == "I" {
					later = true
				}
			}
			if later {
				cnt.Rules["change_delete_before_insert"]++
			} else {
				cnt.Rules["change_delete_unknown_key"]++
			}
		case it.op == "D":
			delete(r.Rows, it.id)
			touched[it.id] = true
			applied++
		default:
			r.Rows[it.id] = [2]string{it.name, strconv.Itoa(it.amount)}
			touched[it.id] = true
			applied++
		}
		r.posSeq, r.posFile, r.hasPos = it.seq, it.file, true
	}
	for _, n := range cnt.Rules {
		cnt.Quarantined += n
	}
	cnt.Quarantined -= cnt.Rules["change_file_seen_twice"] // file exceptions hold no rows
	cnt.Loaded = int64(len(touched))
	cnt.Skipped += int64(applied - len(touched))
	r.History += applied
	return cnt
}

// Gen writes the files of one batch of a random stream into files
// (all files of the stream so far) and returns the names it added.
func Gen(rng *rand.Rand, files map[string]string, nextFile *int, seq *int) {
	nf := 1 + rng.IntN(3)
	for f := 0; f < nf; f++ {
		*nextFile++
		name := fmt.Sprintf("c%04d.csv", *nextFile)
		switch x := rng.IntN(20); {
		case x == 0 && len(files) > 0: // the same content again under a new name
			var names []string
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			files[name] = files[names[rng.IntN(len(names))]]
			continue
		case x == 1 && len(files) > 0: // an applied file rewritten
			var names []string
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			n := names[rng.IntN(len(names))]
			files[n] += "U," + strconv.Itoa(*seq) + ",1,rewritten,1\n"
			continue
		}
		var b strings.Builder
		b.WriteString("op,seq,id,name,amount\n")
		rows := rng.IntN(12)
		for r := 0; r < rows; r++ {
			op := []string{"I", "I", "U", "U", "D", "X"}[rng.IntN(6)]
			if rng.IntN(4) != 0 {
				op = op[:1]
			}
			s := *seq
			switch rng.IntN(10) {
			case 0:
				s -= rng.IntN(30) // may go below the committed position
			case 1: // a tie
			default:
				*seq += 1 + rng.IntN(3)
				s = *seq
			}
			if op == "X" {
				op = "Z"
			}
			fmt.Fprintf(&b, "%s,%d,%d,n%d,%d\n", op, s, 1+rng.IntN(12), rng.IntN(100), rng.IntN(1000)-200)
		}
		files[name] = b.String()
	}
}
