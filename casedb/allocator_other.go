//go:build !linux || !cgo

package casedb

// configureAllocator does nothing: DuckDB bundles jemalloc on Linux only.
func configureAllocator() error { return nil }
