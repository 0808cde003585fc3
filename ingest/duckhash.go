package ingest

import (
	"context"
	"database/sql"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"

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
			var set hashSet
			for k := w; k < len(ib.b); k += workers {
				reps[w] = set.repeats(ib.b[k], reps[w])
			}
		})
	}
	wg.Wait()
	return slices.Concat(reps...)
}

// hashSet finds the repeats of one bucket: open addressing on the low
// bits (the top ones are the bucket's); a slot is empty unless its stamp
// is this bucket's (seen: stamp; seen and reported: stamp+1), so the set
// is never cleared between buckets.
type hashSet struct {
	keys   []uint64
	stamps []uint32
	stamp  uint32
}

// repeats appends to rep each value of the blocks that occurs more than
// once, once.
func (s *hashSet) repeats(blocks [][]uint64, rep []uint64) []uint64 {
	n := 0
	for _, hs := range blocks {
		n += len(hs)
	}
	size := 2
	for size < 2*n {
		size *= 2
	}
	if size > len(s.keys) {
		s.keys, s.stamps, s.stamp = make([]uint64, size), make([]uint32, size), 0
	}
	s.stamp += 2
	mask := uint64(size - 1)
	for _, hs := range blocks {
		for _, h := range hs {
			for i := h & mask; ; i = (i + 1) & mask {
				switch st := s.stamps[i]; {
				case st != s.stamp && st != s.stamp+1:
					s.keys[i], s.stamps[i] = h, s.stamp
				case s.keys[i] != h:
					continue
				case st == s.stamp:
					s.stamps[i] = s.stamp + 1
					rep = append(rep, h)
				}
				break
			}
		}
	}
	return rep
}
