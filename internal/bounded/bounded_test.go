package bounded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("a: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "x%d: &l%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestCheckYAML(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"plain", "id: x\nnotices:\n  en:\n    measures_taken: [a, b]\n", ""},
		{"a few aliases", "base: &w [one, two]\nen: {taken: *w}\nfr: {taken: *w}\n", ""},
		{"quoted brackets", "title: \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n", ""},
		{"commented brackets", "id: x # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n", ""},
		{"bomb of 6 levels", bomb(6), "alias"},
		{"bomb of 9 levels", bomb(9), "alias"},
		{"deep flow", "a: " + strings.Repeat("[", 65) + strings.Repeat("]", 65), "nested"},
		{"deep dashes", "a:\n" + strings.Repeat("- ", 70) + "x\n", "nested"},
		{"deep alias", "a: &d " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\nb: " + strings.Repeat("[", 30) + "*d" + strings.Repeat("]", 30), "nested"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckYAML([]byte(c.yaml))
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	if b, err := ReadFile(p, 5); err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q %v", b, err)
	}
	if _, err := ReadFile(p, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero", 1<<20); !errors.Is(err, ErrTooLarge) {
			t.Errorf("/dev/zero: %v", err)
		}
	}
}
