package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/leakmap/leakmap/internal/sheetcsv"
)

// WriteCSV writes affected_requests.csv, exposures.csv and tenants.csv into
// dir (created if needed), from queries/out_*.sql: the columns and order of
// DESIGN.md, a header line, NULL as an empty field. They are meant for
// spreadsheets: text cells that would run as a formula are neutralised
// (sheetcsv); numbers and times are written as they are.
func WriteCSV(ctx context.Context, db *sql.DB, logger *slog.Logger, dir string) error {
	if err := sheetcsv.WriteFolder(ctx, db, logger, dir, outputs); err != nil {
		return fmt.Errorf("analysis: %w", err)
	}
	return nil
}
