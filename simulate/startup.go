package simulate

// Engine start-up text logs, as SGLang writes them to its console:
//
//	real/engine/text/HOST.log        the server's current run
//	real/engine/text/HOST.log.N.gz   earlier runs, rotated at each restart (N=1 the latest)
//
// Each run starts with the main process's server_args line (its
// disaggregation_mode gives the role), every tensor-parallel rank's KV Cache
// line, rank 0's max_total_num_tokens/context_len line, then hourly traffic
// lines and, on prefill hosts, the "exceeds the maximum allowed length"
// error for every input the host refused (repeated by every rank). A host
// boots before the logs begin with the pool in force at LogStart, and
// restarts at each later row of the capacity timeline, so the start-up lines
// are the timeline itself: `leakmap preflight` must recover it. The truth:
//
//	truth/capacity_timeline.csv  instance,role,pool_tokens,valid_from
//	    every start of every host (what preflight's capacity.csv must be);
//	    equivalent to capacity.csv with the incident file's defaults.
//	truth/preflight_findings.csv  preflight's findings.csv: every period
//	    whose pool is below the model's context, with the inputs refused.
//
// This file only writes text: it shares no code with package preflight.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// modelContext is the longest context each model's servers accept; the
// long-context model's pool equals it (not below: no finding).
func (c *Config) modelContext(model int) int64 {
	switch model {
	case modelInScope:
		return c.MaxContextTokens
	case modelLong:
		return longPrefillPool
	}
	return 131072
}

var modelPaths = map[int]string{modelInScope: "zai-org/GLM-5.3", modelSmall: "zai-org/GLM-4.6-Air", modelLong: "moonshotai/Kimi-K3-Long"}

// startupLogs gathers what the text logs need while the rows stream by.
type startupLogs struct {
	hosts map[string]*textHost
}

type textHost struct {
	name, role string
	model      int
	hasModel   bool
	cuts       []cutInput
}

type cutInput struct {
	ts     int64
	prompt int64
	rid    string
}

// observeStartup notes the hosts a row touches and, on its prefill host, an
// input refused as longer than the pool (what the engine cut to one token).
func (g *generator) observeStartup(r *row) {
	if g.boot == nil {
		g.boot = &startupLogs{hosts: map[string]*textHost{}}
	}
	note := func(name, role string) *textHost {
		h := g.boot.hosts[name]
		if h == nil {
			h = &textHost{name: name, role: role}
			g.boot.hosts[name] = h
		}
		// A host shared by two models is the in-scope model's server.
		if !h.hasModel || r.model == modelInScope {
			h.model, h.hasModel = r.model, true
		}
		return h
	}
	if r.prefill != "" {
		h := note(r.prefill, "prefill")
		if r.prompt > g.prefillPoolAt(r.prefill, r.ts) {
			rid := r.prefillRid // the scheduler names the rid of the host's own request log
			if rid == "" {
				rid = fmt.Sprintf("pf-%016x", mix(r.n^g.key^0x637574))
			}
			h.cuts = append(h.cuts, cutInput{ts: r.ts, prompt: r.prompt, rid: rid})
		}
	}
	if r.decodeInst != "" {
		note(r.decodeInst, "decode")
	}
}

// textStart is one run of a server.
type textStart struct {
	at   time.Time // the max_total_num_tokens line
	pool int64
}

// starts is a host's runs: the boot, then one per later timeline row.
func (g *generator) textStarts(h *textHost, i int) []textStart {
	c := g.cfg
	boot := c.LogStart.Add(-6*time.Hour + time.Duration(i)*7*time.Minute)
	pool := c.PrefillPoolTokens
	if h.role == "decode" {
		pool = c.DecodePoolTokens
	}
	var later []textStart
	for _, ch := range g.timeline() {
		if ch.inst != h.name || ch.role != h.role {
			continue
		}
		if !ch.from.After(c.LogStart) {
			pool = ch.pool // in force from the first request: the boot's pool
			continue
		}
		later = append(later, textStart{ch.from, ch.pool})
	}
	sort.SliceStable(later, func(a, b int) bool { return later[a].at.Before(later[b].at) })
	return append([]textStart{{boot, pool}}, later...)
}

// writeStartup writes every host's text logs and the preflight truth.
func (g *generator) writeStartup() error {
	if g.boot == nil {
		return nil
	}
	dir := filepath.Join(g.dir, "real", "engine", "text")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.log*"))
	for _, f := range old {
		os.Remove(f)
	}
	names := make([]string, 0, len(g.boot.hosts))
	for n := range g.boot.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	var timeline, findings []string
	for i, name := range names {
		h := g.boot.hosts[name]
		starts := g.textStarts(h, i)
		ctx := g.cfg.modelContext(h.model)
		for k, s := range starts {
			var until time.Time
			if k+1 < len(starts) {
				until = starts[k+1].at
			}
			timeline = append(timeline, fmt.Sprintf("%s,%s,%d,%s", name, h.role, s.pool, fmtUTC(s.at.UnixMilli())))
			if s.pool < ctx {
				n := 0
				for _, cu := range h.cuts {
					if cu.ts >= s.at.UnixMilli() && (until.IsZero() || cu.ts < until.UnixMilli()) {
						n++
					}
				}
				u := ""
				if !until.IsZero() {
					u = fmtUTC(until.UnixMilli())
				}
				findings = append(findings, fmt.Sprintf("%s,%s,%d,%d,%s,%s,pool_below_context,%d", name, h.role, s.pool, ctx, fmtUTC(s.at.UnixMilli()), u, n))
			}
			// Runs are rotated at each restart: the latest is HOST.log.
			file := name + ".log"
			if back := len(starts) - 1 - k; back > 0 {
				file = fmt.Sprintf("%s.log.%d.gz", name, back)
			}
			if err := g.writeRun(filepath.Join(dir, file), h, s, until, ctx); err != nil {
				return err
			}
			g.sum.Files = append(g.sum.Files, filepath.Join("real", "engine", "text", file))
		}
	}
	// Hosts in name order, each one role, its starts in time order: sorted
	// by instance, role, valid_from as preflight writes them.
	if err := writeFile(filepath.Join(g.dir, "truth", "capacity_timeline.csv"),
		[]byte("instance,role,pool_tokens,valid_from\n"+strings.Join(timeline, "\n")+"\n")); err != nil {
		return err
	}
	body := "instance,role,pool_tokens,context_tokens,valid_from,valid_until,finding,cut_inputs\n"
	if len(findings) > 0 {
		body += strings.Join(findings, "\n") + "\n"
	}
	g.sum.Files = append(g.sum.Files, filepath.Join("truth", "capacity_timeline.csv"), filepath.Join("truth", "preflight_findings.csv"))
	return writeFile(filepath.Join(g.dir, "truth", "preflight_findings.csv"), []byte(body))
}

// tpSize is how many tensor-parallel ranks a host's server runs (each
// repeats most lines with its own TPn prefix; none is written at 1).
func tpSize(h *textHost) int {
	switch {
	case h.model == modelInScope && h.role == "prefill":
		return 4
	case h.model == modelInScope:
		return 2
	}
	return 1
}

// writeRun writes one run of a server, from its launch to until (zero: the
// end of the logs).
func (g *generator) writeRun(path string, h *textHost, s textStart, until time.Time, ctx int64) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	var w *bufio.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw, _ = gzip.NewWriterLevel(bw, gzip.BestSpeed) // no name, no time: the bytes depend on the content only
		w = bufio.NewWriter(zw)
	}
	tp := tpSize(h)
	stamp := func(t time.Time, rank int) string {
		p := ""
		if rank >= 0 && tp > 1 {
			p = fmt.Sprintf(" TP%d", rank)
		}
		return "[" + t.UTC().Format(time.DateTime) + p + "] "
	}
	ranks := func(t time.Time, msg string) {
		for r := range tp {
			w.WriteString(stamp(t, r) + msg + "\n")
		}
	}
	mode := h.role
	chunk := "8192"
	if h.role == "decode" {
		chunk = "-1"
	}
	launch := s.at.Add(-90 * time.Second)
	w.WriteString(stamp(launch, -1) + fmt.Sprintf("server_args=ServerArgs(model_path='%s', tokenizer_path='%s', tokenizer_mode='auto', "+
		"skip_tokenizer_init=False, load_format='auto', trust_remote_code=True, context_length=None, is_embedding=False, revision=None, "+
		"host='0.0.0.0', port=30000, mem_fraction_static=0.83, max_running_requests=None, chunked_prefill_size=%s, "+
		"tp_size=%d, stream_interval=1, random_seed=%d, served_model_name='%s', json_model_override_args='{}', lora_paths=None, "+
		"disaggregation_mode='%s', disaggregation_bootstrap_port=8998, disaggregation_transfer_backend='mooncake', "+
		"disaggregation_ib_device=None, enable_dp_attention=False, api_key=None, dp_size=1, nnodes=1, node_rank=0, dist_init_addr=None)\n",
		modelPaths[h.model], modelPaths[h.model], chunk, tp, mix(uint64(s.at.Unix()))%1000000007, modelNames[h.model], mode))
	ranks(launch.Add(20*time.Second), "Load weight begin. avail mem=78.50 GB")
	ranks(launch.Add(70*time.Second), fmt.Sprintf("KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size: %.2f GB", s.pool, float64(s.pool)*1.7e-5, float64(s.pool)*1.7e-5))
	pool := fmt.Sprintf("max_total_num_tokens=%d, chunked_prefill_size=%s, max_prefill_tokens=16384, max_running_requests=128, context_len=%d, available_gpu_mem=11.52 GB", s.pool, chunk, ctx)
	if h.model == modelSmall {
		pool = fmt.Sprintf("max_total_num_tokens=%d, max_prefill_tokens=16384, max_running_requests=512, context_len=%d, available_gpu_mem=9.01 GB", s.pool, ctx) // an older build
	}
	w.WriteString(stamp(s.at, 0) + pool + "\n")
	w.WriteString(stamp(s.at.Add(4*time.Second), -1) + "INFO:     Started server process [1207]\n")
	w.WriteString(stamp(s.at.Add(8*time.Second), -1) + "The server is fired up and ready to roll!\n")
	// Hourly traffic, and each refused input where it falls.
	end := until
	if end.IsZero() {
		end = g.cfg.LogEnd
	}
	cuts := h.cuts
	limit := min(ctx, s.pool) - 1
	for hr := s.at.Truncate(time.Hour).Add(time.Hour); hr.Before(end); hr = hr.Add(time.Hour) {
		for len(cuts) > 0 && cuts[0].ts < hr.UnixMilli() {
			cu := cuts[0]
			cuts = cuts[1:]
			if cu.ts < s.at.UnixMilli() {
				continue
			}
			ranks(time.UnixMilli(cu.ts), fmt.Sprintf("Input length (%d tokens) exceeds the maximum allowed length (%d tokens). Use a shorter input or enable --allow-auto-truncate., self.rid='%s'", cu.prompt, limit, cu.rid))
		}
		if h.role == "prefill" {
			w.WriteString(stamp(hr, 0) + "Prefill batch. #new-seq: 1, #new-token: 8192, #cached-token: 0, token usage: 0.02, #running-req: 0, #queue-req: 0, \n")
		} else {
			w.WriteString(stamp(hr, 0) + "Decode batch. #running-req: 9, #token: 402113, token usage: 0.13, gen throughput (token/s): 811.20, #queue-req: 0, \n")
		}
		w.WriteString(stamp(hr.Add(time.Second), -1) + "INFO:     10.0.3.9:51522 - \"POST /generate HTTP/1.1\" 200 OK\n")
	}
	for _, cu := range cuts {
		if cu.ts >= s.at.UnixMilli() && cu.ts < end.UnixMilli() {
			ranks(time.UnixMilli(cu.ts), fmt.Sprintf("Input length (%d tokens) exceeds the maximum allowed length (%d tokens). Use a shorter input or enable --allow-auto-truncate., self.rid='%s'", cu.prompt, limit, cu.rid))
		}
	}
	err = w.Flush()
	if zw != nil {
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("simulate: %s: %w", path, err)
	}
	return nil
}
