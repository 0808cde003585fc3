package sheetcsv

import (
	"strings"
	"testing"
)

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://evil.test","r")`: `'=HYPERLINK("http://evil.test","r")`,
		"+1+1":                               "'+1+1",
		"-2+3":                               "'-2+3",
		"@SUM(A1:A9)":                        "'@SUM(A1:A9)",
		"\t=1":                               "'\t=1",
		"\r=1":                               "'\r=1",
		"t-alpha":                            "t-alpha",
		"'=already":                          "'=already",
		"":                                   "",
		"2026-09-01T10:00:00Z":               "2026-09-01T10:00:00Z",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.Write([]string{"tenant_id", "n"})
	w.WriteMixed([]string{"=1+2", "-5"}, []bool{true, false})
	w.WriteMixed([]string{"-tenant", "-5"}, []bool{true, false})
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	want := "tenant_id,n\n'=1+2,-5\n'-tenant,-5\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
