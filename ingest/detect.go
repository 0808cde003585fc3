package ingest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Formats and compressions recorded in ingest_files.
const (
	formatJSONL   = "jsonl"
	formatCSV     = "csv"
	formatParquet = "parquet"
	formatEmpty   = "empty"

	compNone = "none"
	compGzip = "gzip"
	compZstd = "zstd"
)

// sniffSize is how much decompressed content format detection looks at.
const sniffSize = 256 << 10

// fileInfo is what is known of an input file before loading it.
type fileInfo struct {
	path, name  string
	size        int64
	sha256      string
	compression string
	format      string
	head        []byte // first sniffSize bytes of the decompressed content
	maxLine     int    // Options.MaxLineBytes
	damage      string // set by the read: the compressed stream broke ("truncated gzip stream")
}

// hashFile returns the file's size and SHA-256 (of the bytes on disk).
func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// detectCompression looks at magic bytes, not the extension.
func detectCompression(magic []byte) string {
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		return compGzip
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return compZstd
	}
	return compNone
}

// openContent opens the file's decompressed content.
func openContent(path, compression string) (io.ReadCloser, error) {
	return openContentWith(path, compression, func(r io.Reader) io.Reader { return r })
}

// decompress wraps r in the decoder of compression.
func decompress(r io.Reader, compression string) (io.ReadCloser, error) {
	switch compression {
	case compGzip:
		zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case compZstd:
		zr, err := zstd.NewReader(bufio.NewReaderSize(r, 1<<20), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return zr.IOReadCloser(), nil
	}
	return io.NopCloser(r), nil
}

type readCloser struct {
	io.Reader
	close func() error
	dmg   *streamDamage // compressed streams only
}

func (r *readCloser) Close() error { return r.close() }

// detect fills compression, format and head. want is Options.Format.
// A file that is not a log at all is an error naming what is wrong.
func detect(fi *fileInfo, want string) error {
	f, err := os.Open(fi.path)
	if err != nil {
		return err
	}
	magic := make([]byte, 4)
	n, _ := io.ReadFull(f, magic)
	f.Close()
	magic = magic[:n]
	fi.compression = detectCompression(magic)
	if fi.compression == compNone && bytes.Equal(magic, []byte("PAR1")) {
		fi.format = formatParquet
		if want != "auto" && want != formatParquet {
			return fmt.Errorf("is a Parquet file, not %s", want)
		}
		return nil
	}
	rc, err := openContent(fi.path, fi.compression)
	if err != nil {
		return fmt.Errorf("not a log: %w", err)
	}
	defer rc.Close()
	// A small plain file's head is the file: no 256 KiB to zero for each
	// of a fleet's thousands of hourly parts.
	bufSize := sniffSize
	if fi.compression == compNone && fi.size < sniffSize {
		bufSize = int(fi.size) + 1
	}
	head := make([]byte, bufSize)
	n, err = io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("not a log: %s content unreadable: %w", fi.compression, err)
	}
	fi.head = head[:n]
	if d := damageOf(rc); d != nil && d.err != nil {
		// The stream broke inside the head: its last line is cut, and is
		// judged (rejected) by the load, not here.
		if i := bytes.LastIndexByte(fi.head, '\n'); i >= 0 {
			fi.head = fi.head[:i+1]
		}
	}
	text := bytes.TrimPrefix(fi.head, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(text)
	if len(trimmed) == 0 {
		fi.format = formatEmpty
		return nil
	}
	if isBinary(fi.head, n == sniffSize) {
		return errors.New("not a log: binary content (not JSON Lines, CSV or Parquet)")
	}
	if what := textLog(text); what != "" {
		return errors.New("not a request log: " + what)
	}
	detected := formatCSV
	switch trimmed[0] {
	case '{':
		detected = formatJSONL
	case '[':
		return errors.New("not a log: a JSON array, not JSON Lines (one object per line)")
	default:
		first, _, _ := bytes.Cut(trimmed, []byte("\n"))
		if !bytes.ContainsRune(first, ',') {
			return errors.New("not a log: neither JSON Lines (no '{' at the start) nor CSV (no comma-separated header)")
		}
	}
	if want != "auto" && want != detected {
		// The user's word wins for text formats: a CSV-looking JSONL cannot
		// exist, but a one-column CSV can look like anything.
		if want == formatParquet {
			return fmt.Errorf("is %s content, not Parquet", detected)
		}
		detected = want
	}
	fi.format = detected
	return nil
}

// isBinary: more than 2% of the head is NUL, other control bytes or invalid
// UTF-8. A log with a few damaged lines is still a log (its bad lines are
// rejected one by one); a binary or an unknown compression is far above.
func isBinary(b []byte, partial bool) bool {
	bad := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' {
				bad++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			if partial && len(b)-i < utf8.UTFMax {
				break // a rune cut by the end of the head
			}
			bad++
		}
		i += size
	}
	return bad*50 > len(b)
}

// instanceFromName: a host's log is named after it ("decode-3.2026-09-02T08.jsonl.gz").
func instanceFromName(name string) fileInstance {
	host, _, _ := strings.Cut(name, ".")
	lower := strings.ToLower(host)
	switch {
	case host == "":
		return fileInstance{}
	case strings.Contains(lower, "prefill"):
		return fileInstance{prefill: host}
	case strings.Contains(lower, "decode"):
		return fileInstance{decode: host}
	}
	return fileInstance{prefill: host, decode: host}
}
