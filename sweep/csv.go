package sweep

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/leakmap/leakmap/internal/sheetcsv"
	"github.com/leakmap/leakmap/queries"
)

// Files are the files WriteCSV writes, in order.
var Files = []string{"sweep.csv", "sweep_days.csv"}

// WriteCSV writes sweep.csv and sweep_days.csv into dir (created if needed)
// from the last sweep: DESIGN.md's columns and order, text cells
// neutralised for spreadsheets (sheetcsv), NULL as an empty field.
func WriteCSV(ctx context.Context, db *sql.DB, logger *slog.Logger, dir string) error {
	files := []sheetcsv.File{{Name: Files[0], Query: queries.Get("out_sweep")}, {Name: Files[1], Query: queries.Get("out_sweep_days")}}
	if err := sheetcsv.WriteFolder(ctx, db, logger, dir, files); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}
