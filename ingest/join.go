package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/leakmap/leakmap/errs"
	"github.com/leakmap/leakmap/queries"
)

// Default join tolerances (DESIGN.md "Real logs").
const (
	DefaultRoomTolerance    = 30 * time.Second
	DefaultGatewayTolerance = 2 * time.Second
)

// JoinOptions are the join's tolerances; zero takes the default.
type JoinOptions struct {
	// RoomTolerance: how far apart the prefill and decode records of one
	// bootstrap_room may start (rooms are random and repeat over weeks).
	RoomTolerance time.Duration
	// GatewayTolerance: how far apart a gateway record and an engine record
	// sharing no id may start to be one call (clocks differ by machine).
	GatewayTolerance time.Duration
}

func (o JoinOptions) withDefaults() JoinOptions {
	if o.RoomTolerance <= 0 {
		o.RoomTolerance = DefaultRoomTolerance
	}
	if o.GatewayTolerance <= 0 {
		o.GatewayTolerance = DefaultGatewayTolerance
	}
	return o
}

// JoinCount is one line of the join report, summed over sources.
type JoinCount struct {
	Role, Outcome, Reason string
	Records               int64
}

// JoinResult is what the join did.
type JoinResult struct {
	Options  JoinOptions
	Requests int64       // requests the join wrote
	Counts   []JoinCount // by role (gateway, prefill, decode, engine), outcome, reason
}

// Join rebuilds the joined part of requests from every source record of
// the case (DESIGN.md "Real logs"): the requests, joined_requests,
// request_sources and join_report it made before are replaced, in one
// transaction, so a later ingest that adds files joins everything again.
// Canonical rows (loaded straight into requests) are never touched.
//
// prefill ↔ decode: the same bootstrap_room, start times within
// RoomTolerance, the only candidate on both sides; gateway ↔ engine: a
// shared id, else the same model, equal prompt and completion sizes and
// start times within GatewayTolerance, each the other's only nearest
// candidate. Anything less is reported ambiguous and not joined; every
// record still makes or joins a request.
func Join(ctx context.Context, db *sql.DB, logger *slog.Logger, opts JoinOptions) (*JoinResult, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.RoomTolerance < 0 || opts.GatewayTolerance < 0 {
		return nil, errs.Usage("join: tolerances must not be negative (room %v, gateway %v)", opts.RoomTolerance, opts.GatewayTolerance)
	}
	opts = opts.withDefaults()
	start := time.Now()
	// The load's garbage (parsed records, read-ahead files) would stay in
	// the process beside the join's memory_limit: Go returns freed memory
	// to the system only slowly. Give it back before DuckDB takes its
	// share (at 1M calls the peak was the limit plus the load's heap).
	debug.FreeOSMemory()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	defer conn.Close()
	exec := func(name string, args ...any) error {
		t := time.Now()
		if _, err := conn.ExecContext(ctx, queries.Get(name), args...); err != nil {
			return fmt.Errorf("join: %s: %w", name, err)
		}
		logger.Debug("join step", "query", name, "elapsed", time.Since(t).Round(time.Millisecond))
		return nil
	}
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return nil, fmt.Errorf("join: begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
		// The temp tables hold a copy of every record: drop them with the
		// join, not with the connection's next user.
		for _, t := range []string{"join_params", "join_rec", "join_pd", "join_units", "join_gid", "join_gtime", "join_calls"} {
			conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS temp."+t)
		}
	}()
	steps := []struct {
		name string
		args []any
	}{
		{"join_00_params_table", nil},
		{"join_01_params", []any{opts.RoomTolerance.Microseconds(), opts.GatewayTolerance.Microseconds(),
			opts.RoomTolerance.String(), opts.GatewayTolerance.String()}},
		{"join_02_records", nil},
		{"join_03_rooms", nil},
		{"join_04_units", nil},
		{"join_05_gateway_ids", nil},
		{"join_06_gateway_times", nil},
		{"join_07_calls", nil},
		{"join_08_clear_requests", nil},
		{"join_09_clear_joined", nil},
		{"join_10_clear_sources", nil},
		{"join_11_clear_report", nil},
		{"join_12_requests", nil},
		{"join_13_joined", nil},
		{"join_14_sources", nil},
		{"join_15_report", nil},
	}
	for _, s := range steps {
		if err := exec(s.name, s.args...); err != nil {
			return nil, err
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return nil, fmt.Errorf("join: commit: %w", err)
	}
	committed = true

	res := &JoinResult{Options: opts}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM joined_requests").Scan(&res.Requests); err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	rows, err := conn.QueryContext(ctx, queries.Get("join_16_summary"))
	if err != nil {
		return nil, fmt.Errorf("join: join_16_summary: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c JoinCount
		if err := rows.Scan(&c.Role, &c.Outcome, &c.Reason, &c.Records); err != nil {
			return nil, fmt.Errorf("join: join_16_summary: %w", err)
		}
		res.Counts = append(res.Counts, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("join: join_16_summary: %w", err)
	}
	logger.Info("joined source records", "requests", res.Requests, "elapsed", time.Since(start).Round(time.Millisecond))
	return res, nil
}

// hasSourceRecords reports whether the case holds a real-layout record.
func hasSourceRecords(ctx context.Context, db *sql.DB) (bool, error) {
	var ok bool
	if err := db.QueryRowContext(ctx, queries.Get("join_has_records")).Scan(&ok); err != nil {
		return false, fmt.Errorf("join: %w", err)
	}
	return ok, nil
}

// Summary is the join in one line, role by role, e.g.
// "join: gateway 4,000 matched / 12 unmatched (no engine record 12) · decode ...".
func (r *JoinResult) Summary() string {
	if r == nil {
		return ""
	}
	type tally struct {
		n       map[string]int64
		reasons map[string][]string
	}
	var roles []string
	by := map[string]*tally{}
	for _, c := range r.Counts {
		t := by[c.Role]
		if t == nil {
			t = &tally{n: map[string]int64{}, reasons: map[string][]string{}}
			by[c.Role] = t
			roles = append(roles, c.Role)
		}
		t.n[c.Outcome] += c.Records
		if c.Outcome != "matched" {
			t.reasons[c.Outcome] = append(t.reasons[c.Outcome], c.Reason+" "+thousands(c.Records))
		}
	}
	var parts []string
	for _, role := range roles {
		t := by[role]
		var p []string
		for _, o := range []string{"matched", "unmatched", "ambiguous"} {
			if t.n[o] == 0 && o != "matched" {
				continue
			}
			s := thousands(t.n[o]) + " " + o
			if rs := t.reasons[o]; len(rs) > 0 {
				s += " (" + strings.Join(rs, ", ") + ")"
			}
			p = append(p, s)
		}
		parts = append(parts, role+" "+strings.Join(p, " / "))
	}
	if len(parts) == 0 {
		return "join: no source records"
	}
	return fmt.Sprintf("join: %s -> %s requests", strings.Join(parts, " · "), thousands(r.Requests))
}

// thousands writes n with comma separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
