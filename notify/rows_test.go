package notify

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakmap/leakmap/queries"
)

// The requests are read one tenant at a time, each tenant's in the query's
// order: the same rows as the query gives, none lost when a tenant of the
// list has none or a tenant with rows is not in the list; a list out of
// order is refused.
func TestRequestRowsEach(t *testing.T) {
	db, _ := openFixture(t)
	ctx := context.Background()
	tenants, err := loadCaseTenants(ctx, db)
	if err != nil || len(tenants) < 3 {
		t.Fatalf("%d tenants (%v)", len(tenants), err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, queries.Get("notify_request_rows_1_table")); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, "SELECT tenant_id, request_id FROM notify_request_rows")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for rows.Next() {
		var tenant, id string
		if err := rows.Scan(&tenant, &id); err != nil {
			t.Fatal(err)
		}
		want[tenant] = append(want[tenant], id)
	}
	rows.Close()
	if len(want) < 3 || len(want[tenants[1].ID]) == 0 {
		t.Fatalf("the fixture's requests: %v", want)
	}
	// The list without its second tenant, and with one that has no rows.
	list := append(slices.Clone(tenants[:1]), tenants[2:]...)
	list = append(list, caseTenant{ID: "zz-no-rows"})
	r, err := openRequestRows(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	if err := r.each(list, func(i int, rs []requestRow) bool {
		for _, x := range rs {
			got[list[i].ID] = append(got[list[i].ID], x.RequestID)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	r.close()
	delete(want, tenants[1].ID)
	for tenant, ids := range want {
		slices.Sort(ids) // the query's order is the cursor's; compared as sets
		slices.Sort(got[tenant])
		if !slices.Equal(got[tenant], ids) {
			t.Errorf("%s: %v, want %v", tenant, got[tenant], ids)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d tenants with rows, want %d", len(got), len(want))
	}

	r, _ = openRequestRows(ctx, db)
	defer r.close()
	swapped := []caseTenant{tenants[1], tenants[0]}
	if err := r.each(swapped, func(int, []requestRow) bool { return true }); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Errorf("a list out of order: %v", err)
	}
}

// parallelEachFed gives each item its own input, and a feed's error is the
// error of the first item it did not send.
func TestParallelEachFed(t *testing.T) {
	got := make([]int, 100)
	err := parallelEachFed(context.Background(), 100, func(send func(int, int) bool) error {
		for i := range 100 {
			if !send(i, i*i) {
				return nil
			}
		}
		return nil
	}, func() struct{} { return struct{}{} }, func(_ struct{}, i, v int) error { got[i] = v; return nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != i*i {
			t.Fatalf("item %d: %d", i, v)
		}
	}
	bad := errors.New("feed failed")
	err = parallelEachFed(context.Background(), 10, func(send func(int, int) bool) error {
		for i := range 4 {
			send(i, i)
		}
		return bad
	}, func() struct{} { return struct{}{} }, func(struct{}, int, int) error { return nil })
	if !errors.Is(err, bad) {
		t.Fatalf("got %v, want the feed's error", err)
	}
	err = parallelEachFed(context.Background(), 10, func(send func(int, int) bool) error {
		send(0, 0)
		return nil
	}, func() struct{} { return struct{}{} }, func(struct{}, int, int) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "1 of 10") {
		t.Fatalf("a feed that stopped early: %v", err)
	}
}

// parallelEachWeighed keeps the weight in flight within its bound, works
// on an item heavier than the bound alone, and still gives every item its
// own input, on more workers than the machine's cores.
func TestParallelEachWeighed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(6))
	const n, bound = 300, 100
	weights := make([]int, n)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range weights {
		weights[i] = r.IntN(40)
		if i%25 == 0 {
			weights[i] = bound + r.IntN(500) // heavier than the bound
		}
	}
	var mu sync.Mutex
	inFlight, most, heavyWithOthers, together := 0, 0, 0, 0
	got := make([]int, n)
	err := parallelEachWeighed(context.Background(), n, bound, func(i int) int { return weights[i] }, func(send func(int, int) bool) error {
		for i := range n {
			if !send(i, i) {
				return nil
			}
		}
		return nil
	}, func() struct{} { return struct{}{} }, func(_ struct{}, i, v int) error {
		w := min(max(weights[i], 1), bound)
		mu.Lock()
		inFlight += w
		most = max(most, inFlight)
		if weights[i] >= bound && inFlight != w {
			heavyWithOthers++
		}
		if inFlight > w {
			together++
		}
		mu.Unlock()
		time.Sleep(200 * time.Microsecond)
		mu.Lock()
		inFlight -= w
		mu.Unlock()
		got[i] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("item %d got input %d", i, v)
		}
	}
	if most > bound || heavyWithOthers > 0 {
		t.Fatalf("at most %d in flight (bound %d); a heavy item beside others %d times", most, bound, heavyWithOthers)
	}
	if together == 0 {
		t.Fatal("never two items at once: the gate serialises everything")
	}
}

// A caller whose pool holds one connection gets the same outbox: the
// requests' query is opened only once the manifest's are done (else the
// draft would wait forever for a second connection).
func TestDraftOnOneConnection(t *testing.T) {
	_, want := draftFixture(t)
	db, dir := openFixture(t)
	db.SetMaxOpenConns(1)
	done := make(chan struct{})
	var got *DraftResult
	var err error
	go func() {
		defer close(done)
		got, err = Draft(context.Background(), db, nil, testIncident(t, ""), dir, filepath.Join(t.TempDir(), "outbox"), testAsOf)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the draft on one connection did not finish")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range want.Notices {
		if readOutbox(t, want.Outbox, n.File) != readOutbox(t, got.Outbox, n.File) {
			t.Errorf("%s differs", n.File)
		}
	}
}

// A large result read in pieces gives every row once, in the table's
// order, across pieces of any size; its table is dropped at the end.
func TestPieceRows(t *testing.T) {
	db, _ := openFixture(t)
	db.SetMaxOpenConns(1) // one connection: the temp table is visible after
	ctx := context.Background()
	read := func(size int64) []string {
		var got []string
		err := eachPiece(ctx, db, "notify_request_rows", size, func(r scanner) error {
			var tenant, role, id, ts, tier string
			var own sql.NullBool
			if err := r.Scan(&tenant, &role, &id, &ts, &tier, &own); err != nil {
				return err
			}
			got = append(got, tenant+"/"+role+"/"+id)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := read(1 << 20)
	if len(want) < 5 {
		t.Fatalf("%d rows in the fixture", len(want))
	}
	for _, size := range []int64{1, 2, 3, int64(len(want)), int64(len(want)) + 1} {
		if got := read(size); !slices.Equal(got, want) {
			t.Fatalf("pieces of %d: %v, want %v", size, got, want)
		}
	}
	var left int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'notify_request_rows'").Scan(&left); err != nil || left != 0 {
		t.Fatalf("the table is left (%d, %v)", left, err)
	}
}
