package analysis

import "testing"

func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name            string
		rows            []req
		prefill, decode int64
		contamination   string
		timeline        string
		wantTriggers    []string
		wantExposures   []string // nil: not checked
		wantTenants     []string // nil: not checked
		wantWarnings    int64
		wantShrinks     int64
	}{
		{
			// Window [10:00, 11:00): start included, end excluded; a prompt
			// equal to the pool is no trigger; another model's huge prompt,
			// rejected (4xx) and failed (5xx) huge requests are neither
			// triggers nor sources; no status logged counts as served. No
			// decode instance anywhere, so every source is possible.
			name: "window, threshold, scope, status",
			rows: []req{
				{id: "wbefore", ts: -0.5, end: 1, tenant: "t-wb", prompt: 101},
				{id: "w0", ts: 0, end: 1, tenant: "t-w0", prompt: 101},
				{id: "eq", ts: 10, end: 11, tenant: "t-eq", prompt: 100},
				{id: "big-other", ts: 20, end: 21, tenant: "t-bo", model: "other-model", prompt: 5000000},
				{id: "rej", ts: 30, end: 31, tenant: "t-rej", prompt: 5000000, status: 400},
				{id: "fail", ts: 31, end: 32, tenant: "t-fail", prompt: 5000000, status: 503},
				{id: "nostatus", ts: 40, end: 41, tenant: "t-ns", prompt: 5000000},
				{id: "ok200", ts: 50, end: 51, tenant: "t-ok", prompt: 101, status: 200},
				{id: "last", ts: 3599.999999, end: 3600, tenant: "t-last", prompt: 101, status: 201},
				{id: "wend", ts: 3600, end: 3601, tenant: "t-we", prompt: 101},
				// After the fix: over-long requests are rejected (4xx) and
				// hold nothing; a later huge served one is out of the window.
				{id: "rej-after-fix", ts: 3700, end: 3700.1, tenant: "t-raf", prompt: 5000000, status: 400},
				{id: "huge-after-fix", ts: 3710, end: 3711, tenant: "t-haf", prompt: 900, status: 200},
			},
			prefill: 100, decode: 1000,
			wantTriggers: []string{"w0 unknown=NULL cap=100", "nostatus unknown=NULL cap=100", "ok200 unknown=NULL cap=100", "last unknown=NULL cap=100"},
			wantExposures: []string{
				"wbefore>w0 possible",
				"eq>nostatus possible", "w0>nostatus possible", "wbefore>nostatus possible",
				"eq>ok200 possible", "nostatus>ok200 possible", "w0>ok200 possible", "wbefore>ok200 possible",
			},
		},
		{
			// The prefill pool of p1 grows to 200 at 10:30 (inclusive); other
			// and unknown prefill instances keep the default 100.
			name: "capacity change mid-window",
			rows: []req{
				{id: "p1-early", ts: 100, end: 101, tenant: "a", prompt: 150, prefill: "p1"},
				{id: "p1-at-change", ts: 1800, end: 1801, tenant: "a", prompt: 150, prefill: "p1"},
				{id: "p1-late", ts: 1900, end: 1901, tenant: "a", prompt: 150, prefill: "p1"},
				{id: "p1-late-big", ts: 1901, end: 1902, tenant: "a", prompt: 201, prefill: "p1"},
				{id: "p2-late", ts: 1902, end: 1903, tenant: "a", prompt: 150, prefill: "p2"},
				{id: "nopre", ts: 1903, end: 1904, tenant: "a", prompt: 150},
			},
			prefill: 100, decode: 1000,
			timeline:     "p1,prefill,200,2026-09-01T10:30:00Z\nd1,decode,5000,2026-09-01T10:00:00Z\n",
			wantTriggers: []string{"p1-early unknown=NULL cap=100", "p1-late-big unknown=NULL cap=200", "p2-late unknown=NULL cap=100", "nopre unknown=NULL cap=100"},
		},
		{
			// page_size 4, policy sorted, a 12-slot pool. X (another model,
			// 5 tokens -> 8 slots) and S (3 -> 4 slots) fill it; a rejected
			// huge request holds nothing. T1 (no logged text) gets all 12 and
			// overwrites 2: X and S are its sources. T2 then gets the same 12
			// slots and overwrites 1: X and S are still the owners, and T1
			// (same tenant: self-exposure) owns the one slot T2 did not write.
			name: "page size, previous owners stay owners, self-exposure, no text",
			rows: []req{
				{id: "X", ts: 0, end: 2, tenant: "tx", model: "other-model", prompt: 5, decode: "d1", promptText: "x text"},
				{id: "R", ts: 1, end: 3, tenant: "tr", prompt: 1000, status: 429, decode: "d1"},
				{id: "S", ts: 1, end: 4, tenant: "ts", prompt: 2, completion: 1, decode: "d1"},
				{id: "T1", ts: 5, end: 6, tenant: "tt", prompt: 11, completion: 1, decode: "d1"},
				{id: "T2", ts: 7, end: 8, tenant: "tt", prompt: 12, completion: 0, decode: "d1"},
			},
			prefill: 10, decode: 12, contamination: "  allocator: sorted\n  page_size: 4",
			wantTriggers: []string{"T1 unknown=0 cap=10", "T2 unknown=0 cap=10"},
			wantExposures: []string{
				"S>T1 probable slots=4", "X>T1 probable slots=6",
				"S>T2 probable slots=4", "T1>T2 probable self slots=1", "X>T2 probable slots=6",
			},
			wantTenants: []string{
				"ts source probable 0 1 2026-09-01T10:00:01Z 2026-09-01T10:00:01Z",
				"tt recipient probable 2 0 2026-09-01T10:00:05Z 2026-09-01T10:00:07Z",
				"tx source probable 0 1 2026-09-01T10:00:00Z 2026-09-01T10:00:00Z",
			},
		},
		{
			// The decode pool of d1 grows from 4 to 8 slots at t=5, the very
			// time T arrives (growth comes first). B at t=1 finds no free
			// slot: a replay warning. T gets A's 4 slots (fifo) then 3
			// never-written ones, and overwrites 1.
			name: "decode pool growth, over-allocation",
			rows: []req{
				{id: "A", ts: 0, end: 2, tenant: "ta", prompt: 3, completion: 1, decode: "d1"},
				{id: "B", ts: 1, end: 6, tenant: "tb", prompt: 4, decode: "d1"},
				{id: "T", ts: 5, end: 7, tenant: "tt", prompt: 7, decode: "d1"},
			},
			prefill: 5, decode: 4, contamination: "  allocator: fifo",
			timeline:      "d1,decode,8,2026-09-01T10:00:05Z\n",
			wantTriggers:  []string{"T unknown=3 cap=5"},
			wantExposures: []string{"A>T probable slots=3"},
			wantWarnings:  1,
		},
		{
			// A zero-length request (end_ts = ts) is freed right after its
			// own allocation; a capacity row that would shrink the decode
			// pool is ignored (and counted). fifo: T gets the 4 never-written
			// slots first, then A's.
			name: "zero-length request, pool shrink ignored",
			rows: []req{
				{id: "A", ts: 0, end: 0, tenant: "ta", prompt: 3, completion: 1, decode: "d1"},
				{id: "T", ts: 1, end: 2, tenant: "tt", prompt: 8, completion: 0, decode: "d1"},
			},
			prefill: 5, decode: 8, contamination: "  allocator: fifo",
			timeline:      "d1,decode,4,2026-09-01T10:00:00.5Z\n",
			wantTriggers:  []string{"T unknown=3 cap=5"},
			wantExposures: []string{"A>T probable slots=4"},
			wantShrinks:   1,
		},
		{
			// Content evidence. T has no decode instance: every source with a
			// strong shared run is confirmed (whatever its instance), and the
			// rest of the same model in the lookback is possible. U is on
			// d1: S2 shares a long run but ran on d2, so it is no source; the
			// unplaceable S3 (no end_ts) and T (no decode) are possible.
			name: "confirmed, unknown decode instance",
			rows: []req{
				{id: "S1", ts: 0, end: 1, tenant: "a", prompt: 5, decode: "d1", promptText: "The quick brown fox jumps over the lazy dog while seven wizards quietly hex jolly kings"},
				{id: "S2", ts: 2, end: 3, tenant: "b", prompt: 5, decode: "d2", promptText: "zebra quagga okapi giraffe lion tiger panther jaguar lynx ocelot serval caracal"},
				{id: "S3", ts: 3, end: -1, tenant: "c", prompt: 5, decode: "", promptText: "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"},
				{id: "S4", ts: 4, end: 5, tenant: "d", prompt: 5, decode: "d1", promptText: "alpha beta gamma delta"},
				{id: "T", ts: 10, end: 11, tenant: "t", prompt: 20, resp: "...Quick brown FOX, jumps over! the lazy dog while seven wizards; zebra quagga okapi giraffe lion tiger panther jaguar lynx ocelot serval caracal. Alpha beta gamma delta epsilon zeta eta theta iota kappa"},
				{id: "U", ts: 12, end: 13, tenant: "u", prompt: 20, decode: "d1", resp: "zebra quagga okapi giraffe lion tiger panther jaguar lynx ocelot serval caracal"},
			},
			prefill: 10, decode: 100,
			wantTriggers: []string{"T unknown=NULL cap=10", "U unknown=19 cap=10"},
			wantExposures: []string{
				"S1>T confirmed shingles=7 run=11 rare=7", "S2>T confirmed shingles=8 run=12 rare=8", "S3>T confirmed shingles=6 run=10 rare=6", "S4>T possible",
				"S3>U possible", "T>U possible",
			},
			wantTenants: []string{
				"a source confirmed 0 1 2026-09-01T10:00:00Z 2026-09-01T10:00:00Z",
				"b source confirmed 0 1 2026-09-01T10:00:02Z 2026-09-01T10:00:02Z",
				"c source confirmed 0 1 2026-09-01T10:00:03Z 2026-09-01T10:00:03Z",
				"d source possible 0 1 2026-09-01T10:00:04Z 2026-09-01T10:00:04Z",
				"t both confirmed 1 1 2026-09-01T10:00:10Z 2026-09-01T10:00:10Z",
				"u recipient possible 1 0 2026-09-01T10:00:12Z 2026-09-01T10:00:12Z",
			},
		},
		{
			// Residency: sources on the trigger's decode instance that ended
			// in [ts - 30s, ts] (both bounds included).
			name: "residency",
			rows: []req{
				{id: "old", ts: 0, end: 19, tenant: "a", prompt: 5, decode: "d1"},
				{id: "edge", ts: 15, end: 20, tenant: "b", prompt: 5, decode: "d1"},
				{id: "in", ts: 20, end: 50, tenant: "c", prompt: 5, decode: "d1"},
				{id: "running", ts: 30, end: 60, tenant: "d", prompt: 5, decode: "d1"},
				{id: "other", ts: 30, end: 40, tenant: "e", prompt: 5, decode: "d2"},
				{id: "T", ts: 50, end: 55, tenant: "t", prompt: 20, decode: "d1"},
			},
			prefill: 10, decode: 100, contamination: "  model: residency\n  residency_lookback: 30s",
			wantTriggers:  []string{"T unknown=NULL cap=10"},
			wantExposures: []string{"edge>T probable", "in>T probable"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := newCase(t, tc.rows)
			cont := tc.contamination
			if cont == "" {
				cont = "  allocator: sorted"
			}
			sum := runCase(t, db, testIncident(t, tc.prefill, tc.decode, cont, tc.timeline))
			equalLines(t, "triggers", triggers(t, db), tc.wantTriggers)
			if tc.wantExposures != nil {
				equalLines(t, "exposures", compact(exposureLines(t, db, true)), tc.wantExposures)
			}
			if tc.wantTenants != nil {
				equalLines(t, "tenants", tenants(t, db), tc.wantTenants)
			}
			if sum.ReplayWarnings != tc.wantWarnings {
				t.Errorf("replay warnings %d, want %d", sum.ReplayWarnings, tc.wantWarnings)
			}
			if sum.PoolShrinks != tc.wantShrinks {
				t.Errorf("pool shrinks %d, want %d", sum.PoolShrinks, tc.wantShrinks)
			}
			if sum.Triggers != len(tc.wantTriggers) {
				t.Errorf("summary triggers %d, want %d", sum.Triggers, len(tc.wantTriggers))
			}
		})
	}
}
