package ingest

import (
	"io"
	"log/slog"
	"os"
)

// ExpandPaths turns files, folders and globs into files by the same rules as
// ingest (links followed, hidden entries skipped, an argument that yields no
// file is an error), for other readers of log files such as
// package preflight.
func ExpandPaths(paths []string, logger *slog.Logger) ([]string, []Skipped, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return expand(paths, logger)
}

// OpenDecompressed opens a file's content, gunzipped or zstd-decoded when
// its magic bytes say so (the extension is not trusted).
func OpenDecompressed(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	magic := make([]byte, 4)
	n, _ := io.ReadFull(f, magic)
	f.Close()
	return openContent(path, detectCompression(magic[:n]))
}
