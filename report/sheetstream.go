package report

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	kflate "github.com/klauspost/compress/flate"
	"github.com/xuri/excelize/v2"
)

// A streamed table's sheets are laid out by excelize (filter, print setup,
// widths, frozen header, header row) with no data rows; their rows are then
// written straight into the sheets' zip entries, each deflated by its own
// goroutine, and the workbook assembled from excelize's parts and these.

// zipLevel is the deflate level of the streamed sheets, klauspost's
// fastest: on the 1M case's Exposures sheet (158 MB of XML) it deflates at
// twice the speed of level 5 for a 15 % bigger entry (13.9 % of the XML
// against 12.1 %), and deflating is most of the workbook's CPU time.
var zipLevel = 1

// flushAt is the size of the XML blocks handed to a sheet's compressor.
const flushAt = 1 << 20

// streamedPart is one sheet of a streamed table.
type streamedPart struct {
	sheet          string
	entry          string // its zip entry, xl/worksheets/sheetN.xml
	prefix, suffix []byte // excelize's XML before and from </sheetData>

	file        *os.File // the deflated entry
	crc         uint32
	size, csize uint64

	blocks   chan []byte
	done     chan error
	finished bool
	err      error
}

// streamedTable is a table whose rows go to one or more sheets.
type streamedTable struct {
	t     table
	total int
	parts []*streamedPart
}

// layoutTable counts a table's rows and lays out its sheets in f, each
// with its header row only.
func layoutTable(ctx context.Context, f *excelize.File, st *styles, db *sql.DB, t table) (*streamedTable, error) {
	var total int
	if err := db.QueryRowContext(ctx, t.countSQL()).Scan(&total); err != nil {
		return nil, err
	}
	nparts := max(1, (total+maxSheetRows-1)/maxSheetRows)
	hdr := make([]any, len(t.cols))
	widths := make([]float64, len(t.cols))
	for i, c := range t.cols {
		hdr[i] = excelize.Cell{StyleID: st.header, Value: c.name}
		widths[i] = c.width
	}
	lastCol, _ := excelize.ColumnNumberToName(len(t.cols))
	tb := &streamedTable{t: t, total: total}
	for p := range nparts {
		name := t.sheet
		if p > 0 {
			name = fmt.Sprintf("%s (%d)", t.sheet, p+1)
		}
		if _, err := f.NewSheet(name); err != nil {
			return nil, err
		}
		n := min(maxSheetRows, total-p*maxSheetRows)
		// The filter must be on the worksheet before streaming starts:
		// the stream writer writes the sheet's other parts as they are then.
		if err := f.AutoFilter(name, fmt.Sprintf("A1:%s%d", lastCol, max(n+1, 2)), nil); err != nil {
			return nil, err
		}
		if err := printSetup(f, name, widths...); err != nil {
			return nil, err
		}
		sw, err := f.NewStreamWriter(name)
		if err != nil {
			return nil, err
		}
		for i, c := range t.cols {
			if err := sw.SetColWidth(i+1, i+1, c.width); err != nil {
				return nil, err
			}
		}
		if err := sw.SetPanes(frozenHeader()); err != nil {
			return nil, err
		}
		if err := sw.SetRow("A1", hdr); err != nil {
			return nil, err
		}
		if err := sw.Flush(); err != nil {
			return nil, err
		}
		tb.parts = append(tb.parts, &streamedPart{sheet: name})
	}
	return tb, nil
}

// findParts reads excelize's workbook zip for each streamed sheet's entry
// and its XML around the (empty) rows.
func findParts(zr *zip.Reader, tables []*streamedTable) error {
	files := map[string]*zip.File{}
	for _, zf := range zr.File {
		files[zf.Name] = zf
	}
	read := func(name string) ([]byte, error) {
		zf := files[name]
		if zf == nil {
			return nil, fmt.Errorf("workbook has no %s", name)
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	wb, err := read("xl/workbook.xml")
	if err != nil {
		return err
	}
	rels, err := read("xl/_rels/workbook.xml.rels")
	if err != nil {
		return err
	}
	var w struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			ID   string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var r struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := xml.Unmarshal(wb, &w); err != nil {
		return fmt.Errorf("xl/workbook.xml: %w", err)
	}
	if err := xml.Unmarshal(rels, &r); err != nil {
		return fmt.Errorf("xl/_rels/workbook.xml.rels: %w", err)
	}
	target := map[string]string{}
	for _, rel := range r.Rels {
		t := rel.Target
		if path.IsAbs(t) {
			t = t[1:]
		} else {
			t = path.Join("xl", t)
		}
		target[rel.ID] = t
	}
	entry := map[string]string{}
	for _, s := range w.Sheets {
		entry[s.Name] = target[s.ID]
	}
	for _, tb := range tables {
		for _, p := range tb.parts {
			p.entry = entry[p.sheet]
			x, err := read(p.entry)
			if err != nil {
				return fmt.Errorf("sheet %s: %w", p.sheet, err)
			}
			i := bytes.LastIndex(x, []byte("</sheetData>"))
			if i < 0 {
				return fmt.Errorf("sheet %s: no sheetData in %s", p.sheet, p.entry)
			}
			p.prefix, p.suffix = x[:i], x[i:]
		}
	}
	return nil
}

// start opens the part's deflated file in dir and its compressor.
func (p *streamedPart) start(dir string) error {
	f, err := os.CreateTemp(dir, ".report-sheet-*.tmp")
	if err != nil {
		return err
	}
	p.file = f
	p.blocks = make(chan []byte, 4)
	p.done = make(chan error, 1)
	go func() {
		cw := &countWriter{w: bufio.NewWriterSize(f, 1<<20)}
		zw, err := kflate.NewWriter(cw, zipLevel)
		crc := crc32.NewIEEE()
		write := func(b []byte) {
			if err == nil {
				crc.Write(b)
				p.size += uint64(len(b))
				_, err = zw.Write(b)
			}
		}
		write(p.prefix)
		for b := range p.blocks {
			write(b)
			blockPool.Put(b[:0])
		}
		write(p.suffix)
		if err == nil {
			err = zw.Close()
		}
		if err == nil {
			err = cw.w.(*bufio.Writer).Flush()
		}
		p.crc, p.csize = crc.Sum32(), uint64(cw.n)
		p.done <- err
	}()
	return nil
}

// finish ends the part's XML and waits for its compressor; later calls
// return the first one's result.
func (p *streamedPart) finish() error {
	if !p.finished {
		p.finished = true
		close(p.blocks)
		p.err = <-p.done
	}
	return p.err
}

// remove deletes the part's file.
func (p *streamedPart) remove() {
	if p.file != nil {
		p.file.Close()
		os.Remove(p.file.Name())
	}
}

// writeRaw copies the deflated entry into w.
func (p *streamedPart) writeRaw(w *zip.Writer, fh zip.FileHeader) error {
	fh.Method = zip.Deflate
	fh.CRC32, fh.CompressedSize64, fh.UncompressedSize64 = p.crc, p.csize, p.size
	fh.Flags &^= 0x8 // sizes known: no data descriptor
	fh.Extra = nil
	dst, err := w.CreateRaw(&fh)
	if err != nil {
		return err
	}
	if _, err := p.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = io.Copy(dst, bufio.NewReaderSize(p.file, 1<<20))
	return err
}

var blockPool = sync.Pool{New: func() any { return make([]byte, 0, flushAt+64<<10) }}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// fill streams the table's query into its parts' entries, in order,
// maxSheetRows rows a sheet.
func (tb *streamedTable) fill(ctx context.Context, db *sql.DB, st *styles, dir string) (err error) {
	for _, p := range tb.parts {
		if err := p.start(dir); err != nil {
			return err
		}
	}
	part, row := 0, 1 // the sheet being written, and its last row written
	written := 0
	buf := blockPool.Get().([]byte)
	defer func() {
		// Every compressor ends, whatever happened.
		if p := tb.parts[part]; !p.finished && len(buf) > 0 {
			p.blocks <- buf
		}
		for _, p := range tb.parts {
			if ferr := p.finish(); err == nil {
				err = ferr
			}
		}
	}()
	rf := newRowFormatter(tb.t.cols, st)
	var sink *arrowSink
	defer func() {
		if sink != nil {
			if serr := sink.close(err == nil); err == nil {
				err = serr
			}
		}
	}()
	batch := func(rec arrow.RecordBatch) error {
		if sink != nil {
			if err := sink.write(rec); err != nil {
				return err
			}
		}
		if err := rf.bind(rec); err != nil {
			return err
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			if row-1 == maxSheetRows {
				if part+1 == len(tb.parts) {
					return fmt.Errorf("more rows than the %d counted", tb.total)
				}
				tb.parts[part].blocks <- buf
				buf = blockPool.Get().([]byte)
				if err := tb.parts[part].finish(); err != nil {
					return err
				}
				part, row = part+1, 1
			}
			row++
			buf = rf.row(buf, row, r)
			written++
			if len(buf) >= flushAt {
				tb.parts[part].blocks <- buf
				buf = blockPool.Get().([]byte)
			}
		}
		return ctx.Err()
	}
	pieces, err := tb.t.pieces(ctx, db)
	if err != nil {
		return err
	}
	var first *arrow.Schema
	for _, q := range pieces {
		if err = arrowQuery(ctx, db, q, func(schema *arrow.Schema) error {
			if first != nil {
				if !schema.Equal(first) {
					return fmt.Errorf("the pieces' schemas differ: %s, then %s", first, schema)
				}
				return nil
			}
			first = schema
			if tb.t.arrowOut == "" {
				return nil
			}
			var err error
			sink, err = newArrowSink(tb.t.arrowOut, schema)
			return err
		}, batch); err != nil {
			return err
		}
	}
	if written != tb.total {
		return fmt.Errorf("wrote %d rows, the query counted %d", written, tb.total)
	}
	return nil
}

// fillTables fills every streamed table, the tables in parallel.
func fillTables(ctx context.Context, db *sql.DB, st *styles, tables []*streamedTable, dir string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for i, tb := range tables {
		wg.Go(func() {
			if errs[i] = tb.fill(ctx, db, st, dir); errs[i] != nil {
				errs[i] = fmt.Errorf("%s sheet: %w", tb.t.sheet, errs[i])
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// partsByEntry indexes the streamed parts by zip entry.
func partsByEntry(tables []*streamedTable) map[string]*streamedPart {
	m := map[string]*streamedPart{}
	for _, tb := range tables {
		for _, p := range tb.parts {
			m[p.entry] = p
		}
	}
	return m
}

func removeParts(tables []*streamedTable) {
	for _, tb := range tables {
		for _, p := range tb.parts {
			p.remove()
		}
	}
}

// arrowSink writes an Arrow IPC file from the batches streamed into a
// sheet, in its own goroutine, as DuckDB gives them, its buffers
// LZ4-compressed (LZ4_FRAME, which every Arrow IPC reader that reads
// compressed files reads, as it does ZSTD): on the 1M case's exposures
// zstd took 1.09 s of CPU for 14.0 MB, LZ4 0.21 s for 19.6 MB (the
// uncompressed file is 61 MB), and zstd was the workbook phase's biggest
// single cost.
type arrowSink struct {
	path, tmp string
	out       *os.File
	w         *ipc.FileWriter
	recs      chan arrow.RecordBatch
	done      chan error
}

func newArrowSink(path string, schema *arrow.Schema) (*arrowSink, error) {
	s := &arrowSink{path: path, tmp: path + ".tmp", recs: make(chan arrow.RecordBatch, 8), done: make(chan error, 1)}
	var err error
	if s.out, err = os.Create(s.tmp); err != nil {
		return nil, err
	}
	if s.w, err = ipc.NewFileWriter(s.out, ipc.WithSchema(schema), ipc.WithLZ4(),
		// A batch's columns compressed side by side; each buffer is
		// compressed on its own, so the bytes are those of one compressor.
		ipc.WithCompressConcurrency(runtime.GOMAXPROCS(0))); err != nil {
		s.out.Close()
		os.Remove(s.tmp)
		return nil, err
	}
	go func() {
		var err error
		for rec := range s.recs {
			if err == nil {
				err = s.w.Write(rec)
			}
			rec.Release()
		}
		s.done <- err
	}()
	return s, nil
}

// write queues a batch (its NULL slots zeroed, see zeroNulls).
func (s *arrowSink) write(rec arrow.RecordBatch) error {
	z, err := zeroNulls(rec)
	if err != nil {
		return err
	}
	s.recs <- z
	return nil
}

// close ends the file; it is renamed into place when ok and nothing failed.
func (s *arrowSink) close(ok bool) error {
	close(s.recs)
	err := <-s.done
	if cerr := s.w.Close(); err == nil {
		err = cerr
	}
	if cerr := s.out.Close(); err == nil {
		err = cerr
	}
	if err == nil && ok {
		err = os.Rename(s.tmp, s.path)
	}
	if err != nil || !ok {
		os.Remove(s.tmp)
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", filepath.Base(s.path), err)
	}
	return nil
}
