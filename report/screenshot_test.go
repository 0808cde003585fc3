package report

import (
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// chromiumArgs renders a page headless to a PNG; no network, no profile.
func chromiumArgs(profile, png, url string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--screenshot=" + png, "--window-size=1280,2000", url}
}

// TestScreenshot renders report.html in headless Chromium and checks the
// picture is not blank. Without Chromium it fails on CI and skips elsewhere.
func TestScreenshot(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (CI installs Debian's chromium)")
		}
		t.Skip("chromium not installed")
	}
	db, inc := newCase(t)
	out, _ := writeReport(t, db, inc)
	shot := filepath.Join(t.TempDir(), "report.png")
	page, _ := filepath.Abs(filepath.Join(out, "report.html"))
	cmd := exec.Command(bin, chromiumArgs(t.TempDir(), shot, "file://"+page)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, msg)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	var ink, red int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
			// The trigger colour (#b3261e) of the charts.
			if r>>8 > 150 && g>>8 < 80 && bl>>8 < 80 {
				red++
			}
		}
	}
	total := b.Dx() * b.Dy()
	t.Logf("%dx%d screenshot: %.1f%% non-white, %d red pixels", b.Dx(), b.Dy(), 100*float64(ink)/float64(total), red)
	if ink < total/50 {
		t.Errorf("screenshot is nearly blank: %d of %d pixels not white", ink, total)
	}
	if red < 1000 {
		t.Errorf("screenshot shows %d red pixels: the charts did not render", red)
	}
	if dst := os.Getenv("REPORT_SCREENSHOT"); dst != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(dst, data, 0o644)
	}
}
