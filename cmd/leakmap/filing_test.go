package main

import (
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/internal/catalog"
	"github.com/xuri/excelize/v2"
)

// The regulator notice and the Regulator sheet state the same filing: the
// notice's filing type, figures, notice counts, deadline and delay reasons
// are the sheet's values written in the notice's sentences, and the
// sheet's counts reconcile (drafted = ready + blocked + cannot notify).
func TestRegulatorNoticeEqualsSheet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	// as_of two days past the deadline: the late wording and reasons too.
	for _, asOf := range []string{"", "2026-09-14T09:00:00Z"} {
		args := []string{"demo", "--out", out}
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("demo exit %d\n%s\n%s", code, stdout, stderr)
		}
		if asOf != "" {
			sim := filepath.Join(out, "simulated")
			code, stdout, stderr = runCLI(t, "notify", "draft", "--db", filepath.Join(out, "case.duckdb"), "--incident", filepath.Join(sim, "incident.yaml"),
				"--tenants", filepath.Join(sim, "tenants.csv"), "--out", filepath.Join(out, "outbox"), "--as-of", asOf)
			if code == 0 {
				code, stdout, stderr = runCLI(t, "report", "--db", filepath.Join(out, "case.duckdb"), "--incident", filepath.Join(sim, "incident.yaml"), "--out", out, "--as-of", asOf)
			}
			if code != 0 {
				t.Fatalf("redraft as of %s: exit %d\n%s\n%s", asOf, code, stdout, stderr)
			}
		}
		checkNoticeEqualsSheet(t, out)
	}
}

func checkNoticeEqualsSheet(t *testing.T, out string) {
	t.Helper()
	c := catalog.Get("fr") // the demo's provider is in FR
	f, err := excelize.OpenFile(filepath.Join(out, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Regulator", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	sheet := map[string]string{}
	for _, r := range rows {
		if len(r) > 2 {
			sheet[r[1]] = r[2]
		}
	}
	get := func(key string) string {
		v, ok := sheet[c.MustT("sheet."+key)]
		if !ok {
			t.Fatalf("Regulator sheet has no %s row", key)
		}
		return v
	}
	num := func(key string) int64 {
		n, err := strconv.ParseInt(get(key), 10, 64)
		if err != nil {
			t.Fatalf("sheet %s = %q, not a count", key, get(key))
		}
		return n
	}
	text := regulatorText(t, filepath.Join(out, "outbox", "regulator.eml"))
	want := []string{
		c.MustT("regulator.filing", "filing", get("filing_type")),
		c.MustT("regulator.nature.customers_total", "n", num("tenants_total")),
		c.MustT("regulator.nature.customers_sources", "n", num("source_tenants")),
		c.MustT("regulator.nature.customers_recipients", "n", num("recipient_tenants")),
		c.MustT("regulator.nature.records_exposed", "n", num("exposed_requests")),
		c.MustT("regulator.nature.records_affected", "n", num("affected_requests")),
		c.MustT("regulator.nature.evidence_self", "n", num("self_exposures")),
	}
	for _, tier := range []string{"confirmed", "probable", "possible"} {
		n, err := strconv.ParseInt(sheet[c.MustT("sheet.tier_exposures", "tier", c.MustT("tier."+tier))], 10, 64)
		if err != nil {
			t.Fatalf("sheet tier %s: %v", tier, err)
		}
		want = append(want, c.MustT("regulator.nature.evidence_"+tier, "n", n))
	}
	drafted, ready, blocked, cannot := num("tenant_notices"), num("notices_ready"), num("notices_blocked"), num("notices_cannot")
	if drafted != ready+blocked+cannot || drafted == 0 {
		t.Errorf("sheet: %d tenant notices drafted, %d ready + %d blocked + %d cannot notify", drafted, ready, blocked, cannot)
	}
	want = append(want, c.MustT("regulator.communication.text",
		"drafted", c.MustT("regulator.communication.drafted", "n", drafted), "ready", c.MustT("regulator.communication.ready", "n", ready),
		"blocked", c.MustT("regulator.communication.blocked", "n", blocked), "cannot", c.MustT("regulator.communication.cannot", "n", cannot)))
	if get("communication") != want[len(want)-1] {
		t.Errorf("sheet communication %q, notice %q", get("communication"), want[len(want)-1])
	}
	serial, err := strconv.ParseFloat(get("deadline"), 64)
	if err != nil {
		t.Fatal(err)
	}
	deadline, _ := excelize.ExcelDateToTime(serial, false)
	want = append(want, c.MustT("regulator.deadline.deadline", "deadline", deadline.Round(time.Second)))
	if reasons := get("delay_reasons"); reasons != c.MustT("sheet.not_applicable") && reasons != c.MustT("sheet.reasons_missing") {
		want = append(want, c.MustT("regulator.deadline.reasons", "reasons", reasons))
	} else if reasons == c.MustT("sheet.not_applicable") && !strings.Contains(text, c.MustT("regulator.deadline.met", "date", deadline)[:20]) {
		t.Errorf("sheet says the deadline is met, the notice does not")
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("regulator notice lacks the sheet's %q", w)
		}
	}
}

// regulatorText is the decoded text/plain part of the regulator notice.
func regulatorText(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	msg, err := mail.ReadMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(ctype string, r io.Reader) string
	walk = func(ctype string, r io.Reader) string {
		mt, params, _ := mime.ParseMediaType(ctype)
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(r, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err != nil {
					return ""
				}
				if s := walk(p.Header.Get("Content-Type"), p); s != "" {
					return s
				}
			}
		}
		if mt == "text/plain" {
			b, _ := io.ReadAll(quotedprintable.NewReader(r))
			return string(b)
		}
		return ""
	}
	return walk(msg.Header.Get("Content-Type"), msg.Body)
}
