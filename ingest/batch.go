package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/queries"
)

// A fleet's engine logs are thousands of small hourly parts: loaded one
// transaction each, the per-file statements (custody row, hashes,
// duplicate search, commit) would cost more than the records. So the
// files of non-canonical layouts load many to a transaction: all of a
// batch or none of it, which keeps each file all or nothing.
const (
	maxBatchFiles = 1000
	maxBatchBytes = 256 << 20
)

// recordFile is a checked file of a records-target source.
type recordFile struct {
	fi *fileInfo
	m  *Mapping
}

func batchBytes(b []recordFile) int64 {
	var n int64
	for _, f := range b {
		n += f.fi.size
	}
	return n
}

// sourceSink appends a file's records to source_records and its rejects to
// rejected_rows.
type sourceSink struct {
	fileID                             int64
	m                                  *Mapping
	rows, rejects                      *duckdb.Appender
	read, appended, rejected, dupLines int64
	reasons                            map[string]int64 // reject reason -> records
	next                               int64            // ordinal of nested records (rowAt)
}

func (s *sourceSink) row(line int64, v values) error { return s.rowAt(line, line, v) }

// rowAt appends a record whose id is not its line: records nested in one
// JSON document share lines, so they are numbered in file order.
func (s *sourceSink) rowAt(id, line int64, v values) error {
	if id > maxLine || line > maxLine {
		return fmt.Errorf("line %d: more lines than a file may have", line)
	}
	s.read++
	s.appended++
	return s.rows.AppendRow(s.fileID<<32|id, s.m.label, s.m.layoutName(), s.m.role,
		v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15],
		uint64(0), s.fileID, line)
}

func (s *sourceSink) reject(line int64, reason, raw string) error {
	s.read++
	s.rejected++
	if s.reasons == nil {
		s.reasons = map[string]int64{}
	}
	s.reasons[reason]++
	return s.rejects.AppendRow(s.fileID, line, reason, raw)
}

func (s *sourceSink) duplicateLine() {
	s.read++
	s.dupLines++
}

// loadRecordFiles loads a batch of files into source_records in one
// transaction, skipping files whose bytes the case already holds.
func loadRecordFiles(ctx context.Context, db *sql.DB, logger *slog.Logger, batch []recordFile, prog *progress) ([]FileResult, error) {
	start := time.Now()
	known := map[string]bool{} // sha256
	names := map[string][]string{}
	rows, err := db.QueryContext(ctx, queries.Get("ingest_known_files"))
	if err != nil {
		return nil, fmt.Errorf("ingest_known_files: %w", err)
	}
	for rows.Next() {
		var sha, name, path string
		if err := rows.Scan(&sha, &name, &path); err != nil {
			rows.Close()
			return nil, err
		}
		known[sha] = true
		names[name] = append(names[name], sha)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	results := make([]FileResult, len(batch))
	var todo []int
	for i, rf := range batch {
		fi := rf.fi
		fr := FileResult{Path: fi.path, SHA256: fi.sha256, Format: fi.format, Compression: fi.compression,
			Preset: rf.m.name, Size: fi.size, Source: rf.m.label, Role: rf.m.role}
		if known[fi.sha256] {
			fr.AlreadyLoaded = true
			prog.add(fi.size)
		} else {
			for _, sha := range names[fi.name] {
				fr.NameReused = fr.NameReused || sha != fi.sha256
			}
			known[fi.sha256] = true
			names[fi.name] = append(names[fi.name], fi.sha256)
			todo = append(todo, i)
		}
		results[i] = fr
	}
	if len(todo) == 0 {
		return results, nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
				logger.Debug("rollback", "err", err)
			}
		}
	}()
	ids := make([]int64, 0, len(todo))
	idRows, err := conn.QueryContext(ctx, queries.Get("ingest_next_file_ids"), len(todo))
	if err != nil {
		return nil, fmt.Errorf("ingest_next_file_ids: %w", err)
	}
	for idRows.Next() {
		var id int64
		if err := idRows.Scan(&id); err != nil {
			idRows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	idRows.Close()
	if len(ids) != len(todo) {
		return nil, fmt.Errorf("ingest: asked for %d file ids, got %d", len(todo), len(ids))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	sinks := make([]*sourceSink, len(todo))
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return errors.New("ingest: not a DuckDB connection")
		}
		recs, err := duckdb.NewAppender(c, "", "main", "source_records")
		if err != nil {
			return fmt.Errorf("source_records appender: %w", err)
		}
		rejs, err := duckdb.NewAppender(c, "", "main", "rejected_rows")
		if err != nil {
			recs.Close()
			return fmt.Errorf("rejected_rows appender: %w", err)
		}
		var ferr error
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		pre := prefetch(pctx, batch, todo, prog)
		for k, i := range todo {
			rf := batch[i]
			s := &sourceSink{fileID: ids[k], m: rf.m, rows: recs, rejects: rejs}
			sinks[k] = s
			r, ahead, err := pre.take(pctx, i)
			switch {
			case err != nil:
				ferr = err
			case ahead:
				ferr = r.replay(s)
			default:
				ferr = readFile(ctx, rf.fi, rf.m, prog, rf.m.instance(rf.fi.name), c, s)
			}
			if ferr != nil {
				break
			}
		}
		cancel()
		return errors.Join(ferr, recs.Close(), rejs.Close())
	})
	if err != nil {
		return nil, err
	}
	lo, hi := ids[0], ids[len(ids)-1]
	if _, err := conn.ExecContext(ctx, queries.Get("ingest_records_hash"), lo, hi); err != nil {
		return nil, fmt.Errorf("ingest_records_hash: %w", err)
	}
	if _, err := conn.ExecContext(ctx, queries.Get("ingest_records_0_dups")); err != nil {
		return nil, fmt.Errorf("ingest_records_0_dups: %w", err)
	}
	if _, err := conn.ExecContext(ctx, queries.Get("ingest_records_1_dups"), lo, hi); err != nil {
		return nil, fmt.Errorf("ingest_records_1_dups: %w", err)
	}
	dups := map[int64]int64{}
	drows, err := conn.QueryContext(ctx, queries.Get("ingest_records_2_dups_count"))
	if err != nil {
		return nil, fmt.Errorf("ingest_records_2_dups_count: %w", err)
	}
	for drows.Next() {
		var id, n int64
		if err := drows.Scan(&id, &n); err != nil {
			drows.Close()
			return nil, err
		}
		dups[id] = n
	}
	drows.Close()
	if len(dups) > 0 {
		if _, err := conn.ExecContext(ctx, queries.Get("ingest_records_3_drop_dups")); err != nil {
			return nil, fmt.Errorf("ingest_records_3_drop_dups: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, queries.Get("ingest_batch_files_0")); err != nil {
		return nil, fmt.Errorf("ingest_batch_files_0: %w", err)
	}
	custody := make([][]driver.Value, 0, len(todo))
	for k, i := range todo {
		s, rf := sinks[k], batch[i]
		if err := refuseAllRejected(rf.fi, rf.m, s); err != nil {
			return nil, err
		}
		r := &results[i]
		d := dups[s.fileID]
		r.Read, r.Loaded, r.Rejected, r.Duplicates = s.read, s.appended-d, s.rejected, s.dupLines+d
		r.Damage = rf.fi.damage
		if r.Read != r.Loaded+r.Rejected+r.Duplicates {
			return nil, fmt.Errorf("%s: read %d != loaded %d + rejected %d + duplicates %d", r.Path, r.Read, r.Loaded, r.Rejected, r.Duplicates)
		}
		custody = append(custody, []driver.Value{s.fileID, rf.fi.path, rf.fi.name, rf.fi.size,
			rf.fi.sha256, rf.fi.format, rf.fi.compression, rf.m.name, r.Read, r.Loaded, r.Rejected, r.Duplicates, r.NameReused})
	}
	// One statement for the batch's custody rows: one insert per file cost
	// more than the small files' records.
	err = conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", "ingest_batch_files")
		if err != nil {
			return fmt.Errorf("custody appender: %w", err)
		}
		for _, row := range custody {
			if err := a.AppendRow(row...); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, queries.Get("ingest_batch_files_1")); err != nil {
		return nil, fmt.Errorf("ingest_batch_files_1: %w", err)
	}
	if testHookBeforeCommit != nil {
		testHookBeforeCommit(batch[todo[0]].fi.path)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	committed = true
	logger.Debug("loaded source files", "files", len(todo), "took", time.Since(start).Round(time.Millisecond))
	return results, nil
}

// refuseAllRejected stops the load of a file whose every record was
// rejected for one missing required field: the layout does not fit the
// file (DESIGN.md: never "N of N rejected" and exit 0).
func refuseAllRejected(fi *fileInfo, m *Mapping, s *sourceSink) error {
	if s.appended > 0 || s.rejected == 0 {
		return nil
	}
	reason, n := "", int64(0)
	for r, c := range s.reasons {
		if c > n || (c == n && r < reason) {
			reason, n = r, c
		}
	}
	field, ok := missingField(reason)
	if !ok {
		return nil
	}
	return errs.Input("%s: %s", fi.path, refusal(m, field, nil))
}
