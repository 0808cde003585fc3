package csvtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadAndColumn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(p, []byte("id,tenant\nr1,t1\nr2,\"t,2\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := Read(t, p)
	if got, want := len(rows), 2; got != want {
		t.Fatalf("rows = %d, want %d", got, want)
	}
	if got, want := ReadColumn(t, p, "tenant"), []string{"t1", "t,2"}; !slices.Equal(got, want) {
		t.Errorf("tenant = %q, want %q", got, want)
	}
}
