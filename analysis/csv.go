package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leakmap/leakmap/internal/sheetcsv"
	"github.com/leakmap/leakmap/queries"
)

// WriteCSV writes affected_requests.csv, exposures.csv and tenants.csv into
// dir (created if needed), from queries/out_*.sql: the columns and order of
// DESIGN.md, a header line, NULL as an empty field. They are meant for
// spreadsheets: text cells that would run as a formula are neutralised
// (sheetcsv); numbers and times are written as they are.
func WriteCSV(ctx context.Context, db *sql.DB, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("analysis: output folder: %w", err)
	}
	for _, o := range outputs {
		if err := sheetcsv.WriteQuery(ctx, db, queries.Get(o.query), filepath.Join(dir, o.file)); err != nil {
			return fmt.Errorf("analysis: %s: %w", o.file, err)
		}
	}
	return nil
}
