package ingest

import (
	"context"
	"database/sql"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"

	"github.com/leakmap/leakmap/internal/hashset"
	"github.com/leakmap/leakmap/queries"
)

// duckHash is DuckDB's hash() of a VARCHAR (Hash<string_t>: the bytes
// folded eight at a time, little-endian, the last ones zero-padded, then
// DuckDB's 64-bit finaliser). The Go reader hashes each request_id as it
// parses it, so that a first file's repeated ids are found without DuckDB
// reading every id back; the hashes land in ingest_shared beside the ones
// SQL computes, so they must be DuckDB's exactly: duckHashAgrees checks
// that against the database before they are used, and
// TestDuckHashIsDuckDBs on random texts.
func duckHash(b []byte) uint64 {
	const mul = 0xd6e8feb86659fd93
	h := uint64(0xe17a1465) ^ uint64(len(b))*0xc6a4a7935bd1e995
	for ; len(b) >= 8; b = b[8:] {
		h ^= binary.LittleEndian.Uint64(b)
		h *= mul
	}
	if len(b) > 0 {
		var tail [8]byte
		copy(tail[:], b)
		h ^= binary.LittleEndian.Uint64(tail[:])
		h *= mul
	}
	h ^= h >> 32
	h *= mul
	h ^= h >> 32
	h *= mul
	h ^= h >> 32
	return h
}

// duckHashProbes are texts of the lengths duckHash treats apart: empty,
// under a word, one word, the 12 bytes DuckDB keeps inline, over them,
// and a request id's usual length, in ASCII and not.
var duckHashProbes = []string{"", "a", "chatcmpl", "req-00000001", "req-000000012", "é—ü",
	"chatcmpl-0123456789abcdef0123456789abcdef", "trace·🔑·" + "0123456789"}

var (
	duckHashOnce sync.Once
	duckHashOK   bool
)

// duckHashAgrees reports whether duckHash gives DuckDB's hash() of the
// probes on this database (asked once per process; a failed query counts
// as disagreement, and the caller takes the SQL path).
func duckHashAgrees(ctx context.Context, conn *sql.Conn) bool {
	duckHashOnce.Do(func() {
		for _, s := range duckHashProbes {
			var h uint64
			if err := conn.QueryRowContext(ctx, queries.Get("ingest_hash_probe"), s).Scan(&h); err != nil || h != duckHash([]byte(s)) {
				return
			}
		}
		duckHashOK = true
	})
	return duckHashOK
}

// idBuckets holds request_id hashes by their top 8 bits, as the Go
// reader's chunks come in, so that finding the repeats takes one small
// set per bucket (in cache), no sort of the whole: for 5M hashes 60-100 ms
// in BenchmarkRepeatedHashes, where slices.Sort alone takes 0.5 s.
type idBuckets struct {
	b [256][][]uint64 // blocks of idBlock hashes: growing one would copy it
	n int
}

const idBlock = 4096

func (ib *idBuckets) add(ids []uint64) {
	for _, h := range ids {
		bl := ib.b[h>>56]
		if k := len(bl) - 1; k >= 0 && len(bl[k]) < idBlock {
			bl[k] = append(bl[k], h)
			continue
		}
		ib.b[h>>56] = append(bl, append(make([]uint64, 0, idBlock), h))
	}
	ib.n += len(ids)
}

// repeated returns each hash held more than once, once, in no set order;
// the buckets are shared among the CPUs.
func (ib *idBuckets) repeated() []uint64 {
	workers := min(runtime.GOMAXPROCS(0), 8)
	reps := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// A bucket's hashes once each (seen), its repeats once each
			// (reported): the top bits are the bucket's, the low ones pick
			// the slot.
			var seen, reported hashset.Stamped
			for k := w; k < len(ib.b); k += workers {
				n := 0
				for _, hs := range ib.b[k] {
					n += len(hs)
				}
				seen.Reset(n)
				reported.Reset(n)
				for _, hs := range ib.b[k] {
					for _, h := range hs {
						if !seen.Add(h) && reported.Add(h) {
							reps[w] = append(reps[w], h)
						}
					}
				}
			}
		})
	}
	wg.Wait()
	return slices.Concat(reps...)
}
