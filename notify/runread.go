package notify

import (
	"bufio"
	"io"
	"os"
)

// runRelease is how much of a spilled run is read before its disk is given
// back: a fraction of a run (a texts' run is 48 MiB; a variable for the
// tests).
var runRelease int64 = 4 << 20

// runReader reads a spilled run once, front to back, and gives the disk
// under what it has read back to the file system as it goes (a hole
// punched behind it, where the system can): a merge then needs about the
// disk of its runs, not that of the runs and the merged file together (at
// 100M requests the texts' runs are about twice the texts file).
type runReader struct {
	f        *os.File
	r        *bufio.Reader
	read     int64 // bytes consumed
	released int64 // bytes given back
	stuck    bool  // the system cannot punch holes in this file
}

// openRun opens a run for reading and releasing (hence for writing too).
func openRun(path string) (*runReader, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &runReader{f: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
}

// readFull reads len(p) bytes of the run.
func (r *runReader) readFull(p []byte) error {
	if _, err := io.ReadFull(r.r, p); err != nil {
		return err
	}
	r.read += int64(len(p))
	if !r.stuck && r.read-r.released >= runRelease {
		upto := r.read &^ (4096 - 1) // whole blocks only: a partial one would be zeroed, not freed
		if punchHole(r.f, r.released, upto-r.released) != nil {
			r.stuck = true // a file system without holes: the run keeps its disk until removed
		}
		r.released = upto
	}
	return nil
}

func (r *runReader) Close() error { return r.f.Close() }
