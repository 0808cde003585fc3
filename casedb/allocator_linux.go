//go:build linux && cgo

package casedb

/*
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

// The bundled jemalloc's control call (DuckDB links it with this prefix).
extern int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// leakmap_je_set_decay sets the dirty and muzzy decay times of every arena
// and the default of arenas made later; 0 when all were set.
static int leakmap_je_set_decay(long long ms) {
	ssize_t v = (ssize_t)ms;
	unsigned n = 0;
	size_t len = sizeof(n);
	char name[64];
	int failed = 0;
	if (duckdb_je_mallctl("arenas.narenas", &n, &len, NULL, 0) != 0) return -1;
	failed |= duckdb_je_mallctl("arenas.dirty_decay_ms", NULL, NULL, &v, sizeof(v));
	failed |= duckdb_je_mallctl("arenas.muzzy_decay_ms", NULL, NULL, &v, sizeof(v));
	for (unsigned i = 0; i < n; i++) {
		// An arena that was never used does not exist yet: nothing to set.
		snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &v, sizeof(v));
		snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &v, sizeof(v));
	}
	return failed;
}

// leakmap_je_get reads a decay time; -3 when it cannot be read.
static long long leakmap_je_get(const char *name) {
	ssize_t v = -2;
	size_t len = sizeof(v);
	if (duckdb_je_mallctl(name, &v, &len, NULL, 0) != 0) return -3;
	return (long long)v;
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"
)

var (
	allocatorOnce sync.Once
	allocatorErr  error // what the one attempt found, returned to every Open
)

// allocatorDecayMS is how long DuckDB's bundled jemalloc keeps freed pages
// before giving them back to the system. DuckDB starts it with a second
// (dirty, then lazily freed pages, both still counted in the process's
// memory), and a busy join frees and allocates far more than memory_limit
// in a second. Measured at a 3 GiB limit (see docs/performance.md): at
// 10M requests 1 s peaked at 3.5-3.8 GiB, 100 ms at 3.39-3.40 GiB, 0 at
// 3.32-3.35 GiB with twice the page faults; at 30M (one run each) 100 ms
// peaked at 4,132 MiB in 130 s, 20 ms at 3,856 MiB in 144 s, 0 at 3,461
// MiB in 177 s. 20 ms keeps the 30M analysis under 4 GiB for ~10%.
const allocatorDecayMS = 20

// configureAllocator sets allocatorDecayMS on every arena and as the
// default of arenas made later. It is process-wide and set once, after the
// first database has started the allocator. A user's own
// DUCKDB_JE_MALLOC_CONF is left to rule.
func configureAllocator() error {
	allocatorOnce.Do(func() {
		if _, own := os.LookupEnv("DUCKDB_JE_MALLOC_CONF"); own {
			return
		}
		if C.leakmap_je_set_decay(allocatorDecayMS) != 0 {
			allocatorErr = fmt.Errorf("set the allocator's decay times")
		}
	})
	return allocatorErr
}

// allocatorDecay reports the decay times (ms) of arena 0 and of arenas
// made later; negative when they cannot be read.
func allocatorDecay() (arenaDirty, arenaMuzzy, newDirty, newMuzzy int64) {
	read := func(name string) int64 {
		n := C.CString(name)
		defer C.free(unsafe.Pointer(n))
		return int64(C.leakmap_je_get(n))
	}
	return read("arena.0.dirty_decay_ms"), read("arena.0.muzzy_decay_ms"),
		read("arenas.dirty_decay_ms"), read("arenas.muzzy_decay_ms")
}
