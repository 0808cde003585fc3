package notify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The outbox's writer waits for room when the messages queued reach
// outboxQueueBytes, lets a larger message through alone, and writes every
// message whole, from several workers at once.
func TestOutboxWriterBoundsItsQueue(t *testing.T) {
	dir := t.TempDir()
	w := newOutboxWriter(dir, nil)
	sizes := []int{outboxQueueBytes/2 + 1, outboxQueueBytes/2 + 1, outboxQueueBytes + 5, 10, outboxQueueBytes / 3}
	var most int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for worker := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, n := range sizes {
				w.write(fmt.Sprintf("m-%d-%d.eml", worker, i), bytes.Repeat([]byte{byte('a' + i)}, n))
				w.queued.mu.Lock()
				q := w.queued.used
				w.queued.mu.Unlock()
				mu.Lock()
				most = max(most, q)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if most > outboxQueueBytes+5 {
		t.Errorf("%d bytes queued at once, want at most %d", most, outboxQueueBytes+5)
	}
	for worker := range 2 {
		for i, n := range sizes {
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("m-%d-%d.eml", worker, i)))
			if err != nil || len(b) != n || b[n-1] != byte('a'+i) {
				t.Fatalf("m-%d-%d.eml: %d bytes (%v), want %d", worker, i, len(b), err, n)
			}
		}
	}
}
