package sweep

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leakmap/leakmap/internal/sheetcsv"
	"github.com/leakmap/leakmap/queries"
)

// Files are the files WriteCSV writes, in order.
var Files = []string{"sweep.csv", "sweep_days.csv"}

// WriteCSV writes sweep.csv and sweep_days.csv into dir (created if needed)
// from the last sweep: DESIGN.md's columns and order, text cells
// neutralised for spreadsheets (sheetcsv), NULL as an empty field.
func WriteCSV(ctx context.Context, db *sql.DB, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: output folder: %w", err)
	}
	for i, q := range []string{"out_sweep", "out_sweep_days"} {
		if err := sheetcsv.WriteQuery(ctx, db, queries.Get(q), filepath.Join(dir, Files[i])); err != nil {
			return fmt.Errorf("sweep: %s: %w", Files[i], err)
		}
	}
	return nil
}
