// Package report writes a case's reports from the case database:
// report.xlsx (the workbook, with the Regulator sheet to file),
// report.html (one self-contained page with inline SVG charts), and the
// evidence tables as Parquet and Arrow IPC files for analysts' own tools.
//
// Every figure is a query on the case database (queries/report_*.sql, and
// the out_*.sql queries behind the CSV outputs), so the workbook, the page,
// the exports and the CSV files cannot disagree. Logged text (prompts,
// responses, raw rejected lines) is never selected.
package report

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/internal/filing"
)

// Result lists what Write produced.
type Result struct {
	Files []string // paths written, in a fixed order

	AffectedRequests int64
	RecipientTenants int64
	SourceTenants    int64
	CrossExposures   int64
	// SeriesPoints of SeriesTotal requests are drawn in the prompt-length chart.
	SeriesPoints, SeriesTotal int64
}

// Write writes report.xlsx, report.html and the Parquet/Arrow exports into
// outDir from the case database. asOf dates the report and decides whether
// the 72-hour deadline is met; the same case and asOf give the same bytes.
func Write(ctx context.Context, db *sql.DB, logger *slog.Logger, inc *incident.Incident, outDir string, asOf time.Time) (*Result, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	asOf = asOf.UTC()
	// The Regulator sheet states the regulator notice's facts in its
	// words: custom wording its language lacks stops the report as it
	// stops the draft, rather than leakmap's own words standing in.
	if err := filing.CheckWording(inc, nil, ""); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	start := time.Now()
	// The evidence tables' Parquet files (DuckDB's writer, from their
	// sorted queries) are written first; the workbook's sheets, the Arrow
	// files and the page then read those files rather than sorting the
	// tables again. The case's figures load once the exposures are sorted,
	// while the smaller tables are written: the exposures' sort is the
	// report's peak of memory (1.7 GB at 10M requests), and the figures'
	// queries beside it took the peak from 1.8 to 2.4 GB.
	var exports []string
	tables := ledgerTables()
	exported := make(chan error, 1)
	sorted := make(chan struct{})
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		sortedDone := sync.OnceFunc(func() { close(sorted) })
		defer sortedDone()
		for i, t := range evidenceTables() {
			p, err := exportParquet(ectx, db, t, outDir)
			if err != nil {
				exported <- err
				return
			}
			a := filepath.Join(outDir, t.file+".arrow")
			exports = append(exports, p, a)
			tables = slices.Insert(tables, i, t.exported(p, a))
			if t.file == "exposures" {
				sortedDone()
			}
		}
		logger.Debug("report: parquet written", "elapsed", time.Since(start).Round(time.Millisecond))
		exported <- nil
	}()
	<-sorted
	d, err := loadCase(ctx, db, inc, asOf)
	if err != nil {
		cancel()
	}
	if perr := <-exported; err == nil {
		err = perr
	}
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	res := &Result{
		AffectedRequests: d.summary.AffectedRequests, RecipientTenants: d.summary.RecipientTenants,
		SourceTenants: d.summary.SourceTenants, CrossExposures: d.summary.CrossExposures,
		SeriesPoints: int64(len(d.series.Points)), SeriesTotal: d.series.Total,
	}
	logger.Debug("report: case loaded", "affected_requests", res.AffectedRequests, "elapsed", time.Since(start).Round(time.Millisecond))

	xlsx := filepath.Join(outDir, "report.xlsx")
	if err := writeWorkbook(ctx, db, d, xlsx, tables); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	res.Files = append(res.Files, xlsx)
	logger.Debug("report: workbook and arrow written", "file", xlsx, "elapsed", time.Since(start).Round(time.Millisecond))

	htmlPath := filepath.Join(outDir, "report.html")
	var names []string
	for _, f := range append([]string{xlsx}, exports...) {
		names = append(names, filepath.Base(f))
	}
	var buf bytes.Buffer
	if err := writeHTML(ctx, db, d, &buf, names, tables); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(htmlPath, buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	res.Files = append(res.Files, htmlPath)
	res.Files = append(res.Files, exports...)
	logger.Info("report written", "dir", outDir, "files", len(res.Files),
		"affected_requests", res.AffectedRequests, "elapsed", time.Since(start).Round(time.Millisecond))
	return res, nil
}
