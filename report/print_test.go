package report

import (
	"archive/zip"
	"context"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leakmap/leakmap/analysis"
	"github.com/leakmap/leakmap/casedb"
	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/simulate"
)

// needTool finds a program the print tests use; without it they fail where
// the tools are required (CI, or LEAKMAP_REQUIRE_TOOLS) and skip elsewhere.
func needTool(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" || os.Getenv("LEAKMAP_REQUIRE_TOOLS") != "" {
		t.Fatalf("%s is not installed (.ci/run installs chromium, libreoffice-calc and poppler-utils)", names[0])
	}
	t.Skipf("%s not installed", names[0])
	return ""
}

// printedCase writes the report of a small simulated case, with its real
// ingest ledger, and returns the output folder and the ingested files'
// paths and SHA-256.
func printedCase(t *testing.T) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := simulate.DefaultConfig()
	cfg.Requests, cfg.Tenants, cfg.Noise = 1500, 30, false
	sum, err := simulate.Generate(ctx, nil, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dbPath := loadClean(t, ctx, dir, filepath.Join(t.TempDir(), "case.duckdb"))
	db, err := casedb.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	inc, err := incident.Load(sum.Incident)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, inc); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Write(ctx, db, nil, inc, out, *inc.AsOf); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	rows, err := db.Query(`SELECT path, sha256 FROM ingest_files`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, h string
		rows.Scan(&p, &h)
		files[p] = h
	}
	return out, files
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(name), err, out)
	}
	return string(out)
}

func pdfPages(t *testing.T, pdf string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)`).FindStringSubmatch(run(t, needTool(t, "pdfinfo"), pdf))
	if m == nil {
		t.Fatalf("pdfinfo: no page count for %s", pdf)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// pageToPNG turns one page into a PNG, checks it is not blank, and keeps it
// under LEAKMAP_PRINT_DIR when set (to look at).
func pageToPNG(t *testing.T, pdf string, page int, name string) {
	t.Helper()
	base := filepath.Join(t.TempDir(), name)
	p := strconv.Itoa(page)
	run(t, needTool(t, "pdftoppm"), "-r", "60", "-png", "-singlefile", "-f", p, "-l", p, pdf, base)
	f, err := os.Open(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b, ink := img.Bounds(), 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				ink++
			}
		}
	}
	if ink < 200 {
		t.Errorf("%s page %d is blank (%d inked samples)", name, page, ink)
	}
	if dst := os.Getenv("LEAKMAP_PRINT_DIR"); dst != "" {
		f.Seek(0, io.SeekStart)
		data, _ := io.ReadAll(f)
		os.WriteFile(filepath.Join(dst, name+".png"), data, 0o644)
	}
}

// tierFragments finds a tier word cut across lines ("proba" / "ble").
var tierFragments = regexp.MustCompile(`(?m)(^|\s)(conf|confi|confir|confirm|confirme|prob|proba|probab|probabl|poss|possi|possib|possibl)(\s|$)`)

// TestPrintedHTML prints report.html from Chromium as a person would, and
// reads the PDF back: a sensible page count, no tier value split mid-word,
// every SHA-256 of the custody table in two halves at most and every path
// segment whole.
func TestPrintedHTML(t *testing.T) {
	chromium := needTool(t, "chromium", "chromium-browser", "google-chrome")
	needTool(t, "pdftotext")
	out, files := printedCase(t)
	pdf := filepath.Join(t.TempDir(), "report.pdf")
	page, _ := filepath.Abs(filepath.Join(out, "report.html"))
	run(t, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--no-pdf-header-footer", "--print-to-pdf="+pdf, "file://"+page)
	n := pdfPages(t, pdf)
	t.Logf("report.html printed on %d pages", n)
	if n < 4 || n > 40 {
		t.Errorf("report.html prints on %d pages, want 4..40", n)
	}
	text := run(t, needTool(t, "pdftotext"), pdf, "-")
	if m := tierFragments.FindString(text); m != "" {
		t.Errorf("a tier value is split mid-word in the printout: %q", strings.TrimSpace(m))
	}
	for path, sum := range files {
		if !strings.Contains(text, sum[:32]) || !strings.Contains(text, sum[32:]) {
			t.Errorf("SHA-256 %s of %s is broken into pieces in the printout", sum, path)
		}
		for _, seg := range strings.Split(path, "/") {
			if seg != "" && !strings.Contains(text, seg) {
				t.Errorf("path segment %q of %s is broken in the printout", seg, path)
			}
		}
	}
	pageToPNG(t, pdf, 1, "html-page-1")
	pageToPNG(t, pdf, n, "html-page-last")
}

// wordRE reads one word of pdftotext -bbox: its box and its text.
var wordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)

// TestPrintedWorkbook converts report.xlsx to PDF with LibreOffice, as a
// person printing it would: a page count within bounds, the Summary's title
// and figures not covered by the chart (whole in the text), and the Ingest
// sheet's SHA-256 whole and at a readable size (at least 6 pt high).
func TestPrintedWorkbook(t *testing.T) {
	soffice := needTool(t, "soffice", "libreoffice")
	pdftotext := needTool(t, "pdftotext")
	out, files := printedCase(t)
	lo := t.TempDir()
	run(t, soffice, "--headless", "-env:UserInstallation=file://"+t.TempDir(), "--convert-to", "pdf", "--outdir", lo, filepath.Join(out, "report.xlsx"))
	pdf := filepath.Join(lo, "report.pdf")
	n := pdfPages(t, pdf)
	t.Logf("report.xlsx printed on %d pages", n)
	if n < 3 || n > 120 {
		t.Errorf("report.xlsx prints on %d pages, want 3..120", n)
	}
	first := strings.Join(strings.Fields(run(t, pdftotext, "-f", "1", "-l", "1", pdf, "-")), " ")
	for _, want := range []string{"Cross-tenant data in glm-5.3 responses (simulated)", "Affected requests (triggers)"} {
		if !strings.Contains(first, want) {
			t.Errorf("Summary page lacks %q whole (covered or cut)", want)
		}
	}
	bbox := run(t, pdftotext, "-bbox", pdf, "-")
	heights := map[string]float64{}
	for _, m := range wordRE.FindAllStringSubmatch(bbox, -1) {
		y0, _ := strconv.ParseFloat(m[2], 64)
		y1, _ := strconv.ParseFloat(m[4], 64)
		heights[m[5]] = y1 - y0
	}
	for path, sum := range files {
		h, ok := heights[sum]
		if !ok {
			t.Errorf("SHA-256 of %s is not whole in the printed Ingest sheet", path)
			continue
		}
		if h < 6 {
			t.Errorf("the Ingest sheet prints its SHA-256 %.1f pt high: shrunk past reading", h)
		}
	}
	pageToPNG(t, pdf, 1, "xlsx-page-1")
}

// The Summary chart carries its values, so a viewer that does not
// recalculate still draws its bars.
func TestChartCachedValues(t *testing.T) {
	db, inc := newCase(t)
	out, _ := writeReport(t, db, inc)
	z, err := zip.OpenReader(filepath.Join(out, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	d, err := loadCase(context.Background(), db, inc, testAsOf)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range z.File {
		if f.Name != "xl/charts/chart1.xml" {
			continue
		}
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		s := string(b)
		if !strings.Contains(s, `<numCache><formatCode>General</formatCode><ptCount val="`+strconv.Itoa(len(d.days))+`">`) || len(d.days) == 0 {
			t.Fatalf("chart has no cached values for its %d days:\n%s", len(d.days), s)
		}
		for i, x := range d.days {
			if !strings.Contains(s, `<pt idx="`+strconv.Itoa(i)+`"><v>`+strconv.FormatInt(x.AffectedRequests, 10)+`</v></pt>`) ||
				!strings.Contains(s, `<v>`+x.Day.Format("01-02")+`</v>`) {
				t.Errorf("chart cache lacks day %s = %d", x.Day.Format("01-02"), x.AffectedRequests)
			}
		}
		return
	}
	t.Fatal("no chart in report.xlsx")
}
