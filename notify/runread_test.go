package notify

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestRunReaderGivesBackWhatItRead: a run read through with a small
// release step reads back every byte written, and on Linux holds at the
// end no more disk than one step (and a block) of it.
func TestRunReaderGivesBackWhatItRead(t *testing.T) {
	defer func(was int64) { runRelease = was }(runRelease)
	runRelease = 64 << 10
	const rec = 24
	data := make([]byte, rec*43_690) // about 1 MiB
	r := rand.New(rand.NewPCG(5, 8))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "run")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	run, err := openRun(path)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	var got []byte
	var b [rec]byte
	for range len(data) / rec {
		if err := run.readFull(b[:]); err != nil {
			t.Fatal(err)
		}
		got = append(got, b[:]...)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the run read back differs from the one written")
	}
	if runtime.GOOS != "linux" {
		return
	}
	if run.stuck {
		t.Skip("this file system cannot punch holes")
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if held := st.Blocks * 512; held > runRelease+4096 {
		t.Fatalf("the run still holds %d bytes of disk after it was read, want at most %d", held, runRelease+4096)
	}
	if st.Size != int64(len(data)) {
		t.Fatalf("the run's size changed: %d, want %d", st.Size, len(data))
	}
}
