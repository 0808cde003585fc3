package simulate

import (
	"bufio"
	"bytes"
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// The same incident as the logs a provider really keeps (log-layouts.md),
// beside the canonical logs, under DIR/real:
//
//	real/gateway/LiteLLM_SpendLogs_YYYY-MM-DD.csv.gz
//	    the LiteLLM proxy's spend logs, one daily export each, as
//	    `\copy (SELECT * FROM "LiteLLM_SpendLogs" WHERE "startTime" ...
//	    ORDER BY "startTime") TO ... CSV HEADER` writes them: zone-less
//	    timestamp(3) times, JSON columns as jsonb text in the cells, NULL as
//	    an empty field and an empty string as "". request_id is the decode
//	    server's rid for a served call, the proxy's own call id otherwise.
//	real/engine/MODEL/{prefill,decode}/HOST_0.log[.YYYY-MM-DD_HH[.gz]]
//	    each SGLang server's JSON request log (--log-requests-level 1, or 0
//	    for the long-context model): request.received and request.finished
//	    events, times as the host's naive isoformat, hourly parts rotated as
//	    Python's TimedRotatingFileHandler does (an hour after the part began,
//	    named by the hour it began; the live part has no suffix), some hosts'
//	    old parts gzipped.
//
// Prefill and decode records of a call have their own rids and share the
// router's bootstrap_room. A prompt longer than its prefill host's pool is
// cut there: the prefill record says prompt_tokens 1 and aborts with the
// engine's "exceeds the maximum allowed length" 400, while the decode
// record shows the full prompt and a normal finish, and the proxy logs a
// success. Times: the decode records carry the canonical ts and end_ts
// (with microseconds that are a function of the millisecond, so order and
// ties are the canonical ones); the proxy's start a few milliseconds before.

// RealSummary says what the real layouts hold, the planted noise included.
type RealSummary struct {
	Dir      string // DIR/real
	Incident string // DIR/incident-real.yaml

	GatewayFiles      int
	GatewayRows       int // calls: one intact row each
	GatewayDuplicates int // extra intact copies of rows (daily exports that overlap)
	TornLines         int // a torn last line: a damaged copy of a row also written intact

	PrefillRecords int // calls with a prefill record (received and finished lines)
	DecodeRecords  int // calls with a decode record
	LostPrefill    int // calls whose prefill record was lost (noise)
	LostDecode     int // calls whose decode record was lost: the canonical noise's missing decode instances
	RoomRepeats    int // calls whose bootstrap_room an earlier call (10+ days before) drew too
	CutAtPrefill   int // served calls whose logged prefill record cut the prompt
	PrefillCuts    int // prefill records that cut the prompt, served or not

	EngineFiles int
	GzipParts   int
	EngineLines int
}

// Proxy-side facts of each model: the deployment the proxy calls, its
// prices, the engine's end-of-sequence token and request-log level.
var realModels = []struct {
	deployment, apiBase string
	priceIn, priceOut   float64 // USD per token
	eos                 int
	level               int
}{
	{"zai-org/GLM-5.3-FP8", "http://glm-router.nimbus.internal:8000/v1", 0.6e-6, 2.2e-6, 151329, 1},
	{"zai-org/GLM-4.6-Air", "http://air-router.nimbus.internal:8000/v1", 0.2e-6, 1.1e-6, 151329, 1},
	{"moonshotai/Kimi-K3-Long", "http://kimi-router.gpu.nimbus.internal:8000/v1", 0.6e-6, 2.5e-6, 163586, 0},
}

// The noise planted in the real layouts (with Config.Noise).
const (
	lostPrefillRate = 0.004
	roomRepeats     = 4
	roomRepeatAfter = 10 * 24 * time.Hour
	overlapMs       = 15 * 60 * 1000 // an overlapping daily export reaches 15 minutes into the next day
)

var gatewayColumns = []string{"request_id", "call_type", "api_key", "spend", "total_tokens", "prompt_tokens",
	"completion_tokens", "startTime", "endTime", "request_duration_ms", "completionStartTime", "model", "model_id",
	"model_group", "custom_llm_provider", "api_base", "user", "metadata", "cache_hit", "cache_key", "request_tags",
	"team_id", "organization_id", "end_user", "requester_ip_address", "messages", "response", "session_id", "status",
	"mcp_namespaced_tool_name", "agent_id", "proxy_server_request"}

type realWriter struct {
	cfg   Config
	dir   string // DIR/real
	root  string // DIR
	key   uint64
	rng   *rand.Rand // details of the records (rids, rooms, delays)
	noise *rand.Rand // the real layouts' own noise decisions

	hosts map[string]*engineHost
	gw    *gatewayWriter
	calls *bufio.Writer // truth/real_calls.csv
	noisy *bufio.Writer // truth/real_noise.csv
	tf    []*os.File
	early []earlyRoom
	seq   uint64
	sum   RealSummary
	files []string
	err   error

	// Reused between rows: a line is built in scratch and copied out at its
	// length; what is the same on every row is written once.
	scratch  []byte
	zbuf     bytes.Buffer
	zw       *gzip.Writer
	apiKeys  map[int32]string // tenant -> hashed API key
	sampling map[samplingKey]rawJSON
}

type samplingKey struct {
	temp   float64
	maxNew int64
}

type earlyRoom struct {
	ts   int64
	room int64
	id   string
}

func newRealWriter(root string, cfg Config, key uint64) (*realWriter, error) {
	w := &realWriter{cfg: cfg, root: root, dir: filepath.Join(root, "real"), key: key,
		rng:   rand.New(rand.NewPCG(uint64(cfg.Seed), 0x7265616c)),
		noise: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x726e6f697365)),
		hosts: map[string]*engineHost{}, apiKeys: map[int32]string{}, sampling: map[samplingKey]rawJSON{}}
	// An earlier simulation's parts would mix with this one's.
	if err := os.RemoveAll(w.dir); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(w.dir, "gateway"), 0o755); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	w.gw = &gatewayWriter{w: w}
	for _, tf := range []struct {
		name, header string
		dst          **bufio.Writer
	}{
		{"real_calls.csv", "request_id,prefill_rid,decode_rid,bootstrap_room,prefill_instance,decode_instance,cut_at_prefill", &w.calls},
		{"real_noise.csv", "kind,request_id,detail", &w.noisy},
	} {
		f, err := os.Create(filepath.Join(root, "truth", tf.name))
		if err != nil {
			w.abort()
			return nil, fmt.Errorf("simulate: %w", err)
		}
		w.tf = append(w.tf, f)
		*tf.dst = bufio.NewWriterSize(f, 1<<16)
		(*tf.dst).WriteString(tf.header + "\n")
		w.files = append(w.files, filepath.Join("truth", tf.name))
	}
	return w, nil
}

func (w *realWriter) abort() {
	for _, f := range w.tf {
		f.Close()
	}
	w.tf = nil
	w.gw.abort()
}

func (w *realWriter) hexID() string {
	return uuidHex(w.rng.Uint64(), w.rng.Uint64())
}

func (w *realWriter) uuid() string {
	u := w.hexID()
	return u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
}

// decodeUS is a decode record's time in microseconds: the canonical
// millisecond and a sub-millisecond part that depends on it alone, so that
// two canonical times keep their order and their ties. Whole seconds stay
// whole (the planted edge cases sit on them).
func (w *realWriter) decodeUS(ms int64) int64 {
	if ms%1000 == 0 {
		return ms * 1000
	}
	return ms*1000 + int64(mix(uint64(ms)^w.key^0x7573)%1000)
}

func (w *realWriter) noiseNote(kind, id, detail string) {
	fmt.Fprintf(w.noisy, "%s,%s,%s\n", kind, id, detail)
}

// call is what the engine records of one call share.
type call struct {
	room       int64
	bhost      string
	stream     bool
	maxNew     int64
	temp       float64
	prefillRid string
	decodeRid  string
}

// add writes one clean row in the real layouts (rows come in ts order).
func (w *realWriter) add(g *generator, r *row, prompt, resp string) error {
	if w.err != nil {
		return w.err
	}
	c := w.cfg
	t := &g.tenants[r.tenant]
	w.flush(r.ts*1000 - 2e6)

	// The decode record carries the canonical times; the proxy saw the
	// call a little before and after (exactly then when it is the only
	// record of the call's times: its decode record is lost).
	gwStart, gwEnd := r.ts-3-w.rng.Int64N(50), r.end+2+w.rng.Int64N(25)
	if r.noDecode {
		gwStart, gwEnd = r.ts, r.end
	}
	cl := call{stream: w.rng.IntN(10) < 7, temp: []float64{0.6, 0.7, 1.0, 0.2}[w.rng.IntN(4)]}
	cl.maxNew = 4096
	for _, m := range []int64{512, 1024, 2048, 4096, 8192} {
		if m >= r.completion && w.rng.IntN(3) > 0 {
			cl.maxNew = m
			break
		}
	}
	if r.completion > cl.maxNew {
		cl.maxNew = 8192
	}
	if w.rng.IntN(20) == 0 {
		cl.maxNew = max(r.completion, 1) // stopped by the length limit
	}
	cl.room = w.rng.Int64N(1 << 31)
	cl.prefillRid = "chatcmpl-" + w.hexID()
	if r.prefill != "" && r.decode >= 0 {
		r.prefillRid = cl.prefillRid
	}
	cl.decodeRid = r.id
	if !served(r.status) {
		cl.decodeRid = "chatcmpl-" + w.hexID() // the proxy logged its own id: nothing links them
	}
	engine := r.prefill != "" && r.decode >= 0
	if engine {
		cl.bhost = prefillIP(r.prefill)
	}
	cut := engine && r.prompt > g.prefillPoolAt(r.prefill, r.ts)

	// Noise: lost records (never both of one call), rooms drawn twice.
	lostPrefill, lostDecode := false, engine && r.noDecode
	if engine && c.Noise && r.special == "" && !lostDecode && w.noise.Float64() < lostPrefillRate {
		// Without its prefill record a call is judged on the default pool:
		// lose only records whose call that leaves a trigger or not.
		inWin := r.ts >= ms(c.WindowStart) && r.ts < ms(c.WindowEnd)
		lostPrefill = !(r.model == modelInScope && r.served && inWin && (r.prompt > c.PrefillPoolTokens) != r.trigger)
	}
	if engine && !lostPrefill && !lostDecode {
		switch {
		case len(w.early) < roomRepeats && r.ts < ms(c.LogStart.Add(3*24*time.Hour)):
			w.early = append(w.early, earlyRoom{r.ts, cl.room, r.id})
		case c.Noise && w.sum.RoomRepeats < len(w.early) && r.special == "":
			e := w.early[w.sum.RoomRepeats]
			if r.ts >= e.ts+roomRepeatAfter.Milliseconds() && w.noise.IntN(20) == 0 {
				cl.room = e.room
				w.sum.RoomRepeats++
				w.noiseNote("room_repeat", r.id, fmt.Sprintf("%d %s", e.room, e.id))
			}
		}
	}

	if engine {
		model := modelNames[r.model]
		if lostPrefill {
			w.sum.LostPrefill++
			w.noiseNote("lost_prefill", r.id, r.prefill)
		} else {
			w.sum.PrefillRecords++
			if cut {
				w.sum.PrefillCuts++
				if r.served {
					w.sum.CutAtPrefill++
				}
			}
			w.prefillRecord(g, r, &cl, cut, model)
		}
		if lostDecode {
			w.sum.LostDecode++
			w.noiseNote("lost_decode", r.id, r.decodeInst)
		} else {
			w.sum.DecodeRecords++
			w.decodeRecord(r, &cl, model)
		}
		fmt.Fprintf(w.calls, "%s,%s,%s,%d,%s,%s,%t\n", r.id, cond(!lostPrefill, cl.prefillRid), cond(!lostDecode, cl.decodeRid),
			cl.room, cond(!lostPrefill, r.prefill), cond(!lostDecode, r.decodeInst), cut && r.served && !lostPrefill)
	} else {
		fmt.Fprintf(w.calls, "%s,,,,,,false\n", r.id)
	}
	w.sum.GatewayRows++
	w.gw.push(gwRow{start: gwStart, seq: w.nextSeq(), id: r.id, b: w.gatewayLine(r, t, &cl, gwStart, gwEnd, prompt, resp)})
	return nil
}

func cond(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

func (w *realWriter) nextSeq() uint64 { w.seq++; return w.seq }

// prefillIP is the address the router gives decode servers to fetch a
// prefill host's KV from.
func prefillIP(host string) string {
	h := mix(uint64(len(host)) ^ 0x6970)
	for i := 0; i < len(host); i++ {
		h = mix(h ^ uint64(host[i]))
	}
	return fmt.Sprintf("10.0.%d.%d", 1+h%8, 2+(h>>8)%250)
}

// reqObj is the GenerateReqInput the router sent both servers, as the
// request logger writes it at the model's level (dataclass field order,
// nulls kept, level 0 without sampling_params).
func (w *realWriter) reqObj(rid string, cl *call, level int, recvUS int64) obj {
	o := obj{{"rid", rid}, {"http_worker_ipc", nil}, {"video_data", nil}, {"use_audio_in_video", false}}
	if level >= 1 {
		k := samplingKey{cl.temp, cl.maxNew}
		sp, ok := w.sampling[k]
		if !ok {
			sp = rawJSON(appendPyJSON(nil, obj{{"temperature", cl.temp}, {"max_new_tokens", cl.maxNew}, {"min_new_tokens", 0},
				{"stop", []any{}}, {"stop_token_ids", nil}, {"top_p", 0.95}, {"top_k", -1}, {"min_p", 0.0},
				{"presence_penalty", 0.0}, {"frequency_penalty", 0.0}, {"repetition_penalty", 1.0}, {"regex", nil}, {"ebnf", nil},
				{"n", 1}, {"no_stop_trim", false}, {"ignore_eos", false}, {"skip_special_tokens", true}, {"logit_bias", nil},
				{"custom_params", nil}}))
			w.sampling[k] = sp
		}
		o = append(o, kv{"sampling_params", sp})
	}
	return append(o, obj{{"return_logprob", false}, {"logprob_start_len", -1}, {"top_logprobs_num", 0},
		{"token_ids_logprob", nil}, {"return_text_in_logprobs", false}, {"stream", cl.stream}, {"log_metrics", true},
		{"return_hidden_states", false}, {"return_routed_experts", false}, {"modalities", nil}, {"session_params", nil},
		{"lora_id", nil}, {"custom_logit_processor", nil}, {"bootstrap_host", cl.bhost}, {"bootstrap_port", 8998},
		{"bootstrap_room", cl.room}, {"bootstrap_pair_key", nil}, {"decode_tp_size", nil}, {"require_reasoning", false},
		{"routed_dp_rank", nil}, {"disagg_prefill_dp_rank", nil}, {"data_parallel_rank", nil}, {"background", false},
		{"conversation_id", nil}, {"priority", nil}, {"extra_key", nil}, {"routing_key", nil}, {"no_logs", false},
		{"custom_labels", nil}, {"return_bytes", false}, {"return_entropy", false}, {"external_trace_header", nil},
		{"received_time", float64(recvUS)/1e6 + w.rng.Float64()*1e-7}, {"need_wait_for_mm_inputs", nil},
		{"num_items_assigned", nil}}...)
}

// metaInfo is out.meta_info of a finished event (tokenizer_manager's order).
func (w *realWriter) metaInfo(rid string, finish obj, prompt, completion, cached int64, latUS int64) obj {
	return obj{{"id", rid}, {"finish_reason", finish}, {"prompt_tokens", prompt}, {"weight_version", "default"},
		{"num_retractions", 0}, {"reasoning_tokens", 0}, {"completion_tokens", completion}, {"cached_tokens", cached},
		{"e2e_latency", float64(latUS)/1e6 + w.rng.Float64()*1e-7}}
}

// eventLine is one line of a request log; o is the request, written once
// for both of its lines.
func (w *realWriter) eventLine(ts int64, event, rid string, o rawJSON, meta obj) []byte {
	line := obj{{"timestamp", isoLocal(ts)}, {"event", event}, {"rid", rid}, {"obj", o}}
	if meta != nil {
		line = append(line, kv{"out", obj{{"meta_info", meta}}})
	}
	w.scratch = append(appendPyJSON(w.scratch[:0], line), '\n')
	return bytes.Clone(w.scratch)
}

// cutMessage is validate_input_length's error (managers/utils.py): the
// longest input a server takes is its pool minus one token.
func cutMessage(n, pool int64) string {
	return fmt.Sprintf("Input length (%d tokens) exceeds the maximum allowed length (%d tokens). Use a shorter input or enable --allow-auto-truncate.", n, pool-1)
}

func (w *realWriter) prefillRecord(g *generator, r *row, cl *call, cut bool, model string) {
	h := w.host(r.prefill, model, "prefill")
	level := realModels[r.model].level
	recv := r.ts*1000 + h.skewMs*1000 - 3000 + w.rng.Int64N(15000)
	var dur int64
	var finish obj
	prompt, completion, cached := r.prompt, int64(1), int64(0)
	switch {
	case cut:
		// The scheduler aborts it and replaces the input by one token.
		dur = 1500 + w.rng.Int64N(4000)
		finish = obj{{"type", "abort"}, {"message", cutMessage(r.prompt, g.prefillPoolAt(r.prefill, r.ts))},
			{"status_code", 400}, {"err_type", "BadRequestError"}}
		prompt, completion = 1, 0
	default:
		dur = 20000 + r.prompt*5 + w.rng.Int64N(8000)
		finish = obj{{"type", "length"}, {"length", 1}}
		if w.rng.IntN(3) == 0 {
			cached = min(r.prompt-1, int64(w.rng.IntN(64))*64)
		}
	}
	o := rawJSON(appendPyJSON(nil, w.reqObj(cl.prefillRid, cl, level, recv)))
	h.push(recv, w.eventLine(recv, "request.received", cl.prefillRid, o, nil), w)
	h.push(recv+dur, w.eventLine(recv+dur, "request.finished", cl.prefillRid, o,
		w.metaInfo(cl.prefillRid, finish, prompt, completion, cached, dur)), w)
}

func (w *realWriter) decodeRecord(r *row, cl *call, model string) {
	h := w.host(r.decodeInst, model, "decode")
	level := realModels[r.model].level
	recv, end := w.decodeUS(r.ts), w.decodeUS(r.end)
	var finish obj
	completion := r.completion
	switch {
	case !served(r.status):
		// Failed after scheduling: the proxy got an error.
		finish = obj{{"type", "abort"}, {"message", "Internal server error: KV transfer failed"}, {"status_code", 500},
			{"err_type", "InternalServerError"}}
		completion = 0
	case r.completion >= cl.maxNew:
		finish = obj{{"type", "length"}, {"length", cl.maxNew}}
	default:
		finish = obj{{"type", "stop"}, {"matched", realModels[r.model].eos}}
	}
	o := rawJSON(appendPyJSON(nil, w.reqObj(cl.decodeRid, cl, level, recv)))
	h.push(recv, w.eventLine(recv, "request.received", cl.decodeRid, o, nil), w)
	h.push(end, w.eventLine(end, "request.finished", cl.decodeRid, o,
		w.metaInfo(cl.decodeRid, finish, r.prompt, completion, 0, end-recv)), w)
}

// gatewayLine is the call's LiteLLM_SpendLogs row as one CSV line.
func (w *realWriter) gatewayLine(r *row, t *tenant, cl *call, start, end int64, prompt, resp string) []byte {
	mi := realModels[r.model]
	ok := served(r.status)
	str := func(s string) *string { return &s }
	jsonb := func(v any) *string { return str(string(appendJSONB(nil, v))) }
	var pt, ct int64
	spend := 0.0
	if ok {
		pt, ct = r.prompt, r.completion
		spend = float64(pt)*mi.priceIn + float64(ct)*mi.priceOut
	}
	apiKey, known := w.apiKeys[r.tenant]
	if !known {
		keyHash := sha256.Sum256([]byte(fmt.Sprintf("sk-nimbus-%s-%d", t.id, w.cfg.Seed)))
		apiKey = hex.EncodeToString(keyHash[:])
		w.apiKeys[r.tenant] = apiKey
	}
	modelID := sha256.Sum256([]byte(mi.deployment))
	slug := strings.ToLower(strings.Fields(t.name)[0])
	usage := obj{{"prompt_tokens", pt}, {"completion_tokens", ct}, {"total_tokens", pt + ct},
		{"prompt_tokens_details", obj{{"cached_tokens", 0}}}, {"completion_tokens_details", obj{{"reasoning_tokens", 0}}}}
	meta := obj{{"user_api_key", apiKey}, {"user_api_key_alias", "prod-" + slug}, {"user_api_key_team_id", t.id},
		{"user_api_key_org_id", nil}, {"user_api_key_user_id", nil}, {"user_api_key_team_alias", t.name},
		{"user_api_key_end_user_id", nil}, {"requester_ip_address", ""}, {"applied_guardrails", []any{}},
		{"batch_models", nil}, {"mcp_tool_call_metadata", nil}, {"vector_store_request_metadata", nil},
		{"usage_object", usage}, {"cold_storage_object_key", nil}}
	status := "success"
	if !ok {
		status = "failure"
		class, msg := "InternalServerError", "litellm.InternalServerError: OpenAIException - Internal server error: KV transfer failed"
		switch r.status {
		case 429:
			class, msg = "RateLimitError", "litellm.RateLimitError: Rate limit exceeded for team "+t.id+". Limit type: tpm."
		case 503:
			class, msg = "ServiceUnavailableError", "litellm.ServiceUnavailableError: No deployments available for selected model "+modelNames[r.model]+"."
		case 400:
			class, msg = "ContextWindowExceededError", fmt.Sprintf("litellm.ContextWindowExceededError: OpenAIException - This model's maximum context length is %d tokens. However, you requested %d tokens.", w.cfg.MaxContextTokens, r.prompt)
		}
		meta = append(meta, kv{"error_information", obj{{"error_code", strconv.Itoa(r.status)}, {"error_class", class},
			{"llm_provider", "openai"}, {"traceback", ""}, {"error_message", msg}}})
	}
	messages, response := jsonb(obj{}), jsonb(obj{})
	if t.logsText {
		messages = jsonb([]any{obj{{"role", "user"}, {"content", prompt}}})
		if ok {
			finish := "stop"
			if r.completion >= cl.maxNew {
				finish = "length"
			}
			response = jsonb(obj{{"id", r.id}, {"created", start / 1000}, {"model", mi.deployment}, {"object", "chat.completion"},
				{"system_fingerprint", nil}, {"choices", []any{obj{{"finish_reason", finish}, {"index", 0},
					{"message", obj{{"content", resp}, {"role", "assistant"}, {"tool_calls", nil}, {"function_call", nil}}}}}},
				{"usage", usage}})
		}
	}
	first := end
	if ok && cl.stream {
		first = min(end, start+40+r.prompt/200+w.rng.Int64N(30))
	}
	vals := []*string{str(r.id), str("acompletion"), str(apiKey), str(pgFloat8(spend)), str(strconv.FormatInt(pt+ct, 10)),
		str(strconv.FormatInt(pt, 10)), str(strconv.FormatInt(ct, 10)), str(pgTimestamp3(start)), str(pgTimestamp3(end)),
		str(strconv.FormatInt(end-start, 10)), str(pgTimestamp3(first)), str(mi.deployment), str(hex.EncodeToString(modelID[:])),
		str(modelNames[r.model]), str("openai"), str(mi.apiBase), str(""), jsonb(meta), str("False"), str("Cache OFF"),
		jsonb([]any{}), str(t.id), nil, str(""), nil, messages, response, str(w.uuid()), str(status), nil, nil, jsonb(obj{})}
	b := w.scratch[:0]
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPgCSV(b, v)
	}
	w.scratch = append(b, '\n')
	return bytes.Clone(w.scratch)
}

// flush writes every buffered engine line before upTo (microseconds):
// rows come in ts order, and no line of a later row is that early.
func (w *realWriter) flush(upTo int64) {
	for _, h := range w.hosts {
		if err := h.flush(upTo, w); err != nil && w.err == nil {
			w.err = err
		}
	}
	if err := w.gw.flush(upTo / 1000); err != nil && w.err == nil {
		w.err = err
	}
}

// close writes what is buffered and the live parts, and returns the files
// written (relative to DIR).
func (w *realWriter) close() ([]string, error) {
	w.flush(1 << 62)
	names := make([]string, 0, len(w.hosts))
	for n := range w.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := w.hosts[n].close(w); err != nil && w.err == nil {
			w.err = err
		}
	}
	if err := w.gw.close(); err != nil && w.err == nil {
		w.err = err
	}
	for i, f := range w.tf {
		bw := []*bufio.Writer{w.calls, w.noisy}[i]
		if err := bw.Flush(); err != nil && w.err == nil {
			w.err = err
		}
		if err := f.Close(); err != nil && w.err == nil {
			w.err = err
		}
	}
	w.tf = nil
	if w.err != nil {
		return nil, fmt.Errorf("simulate: real layouts: %w", w.err)
	}
	return w.files, nil
}

// engineHost is one server's request log folder and its rotation.
type engineHost struct {
	name, dir string
	gzip      bool
	skewMs    int64 // the host's clock, against the decode pool's
	lines     lineHeap
	started   bool
	rollAt    int64 // µs
	part      bytes.Buffer
}

type engLine struct {
	t   int64
	seq uint64
	b   []byte
}

type lineHeap []engLine

func (h lineHeap) Len() int { return len(h) }
func (h lineHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h lineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)   { *h = append(*h, x.(engLine)) }
func (h *lineHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (w *realWriter) host(name, model, role string) *engineHost {
	if h := w.hosts[name]; h != nil {
		return h
	}
	h := &engineHost{name: name, dir: filepath.Join(w.dir, "engine", model, role),
		// The fleet compresses old parts, but for a few hosts whose
		// rotation was set up by hand.
		gzip: name != "glm-d0" && name != "glm-p1" && name != "air-p0"}
	if role == "prefill" {
		h.skewMs = int64(mix(uint64(len(w.hosts))^w.key)%500) - 250
	}
	if err := os.MkdirAll(h.dir, 0o755); err != nil && w.err == nil {
		w.err = fmt.Errorf("simulate: %w", err)
	}
	w.hosts[name] = h
	return h
}

func (h *engineHost) push(t int64, b []byte, w *realWriter) {
	heap.Push(&h.lines, engLine{t: t, seq: w.nextSeq(), b: b})
}

func (h *engineHost) flush(upTo int64, w *realWriter) error {
	for len(h.lines) > 0 && h.lines[0].t < upTo {
		l := heap.Pop(&h.lines).(engLine)
		if !h.started {
			// The handler was opened at server start, a little before the first request.
			h.started = true
			h.rollAt = l.t - int64(5+len(h.name)%7)*60e6 + 3600e6
		}
		if l.t >= h.rollAt {
			if err := h.writePart(h.rollAt-3600e6, w); err != nil {
				return err
			}
			h.rollAt = l.t/1e6*1e6 + 3600e6 // computeRollover(int(time.time()))
		}
		h.part.Write(l.b)
		w.sum.EngineLines++
	}
	return nil
}

// writePart writes the part begun at startUS under its rotated name.
func (h *engineHost) writePart(startUS int64, w *realWriter) error {
	name := h.name + "_0.log"
	gz := false
	if startUS >= 0 {
		name += "." + time.UnixMicro(startUS).UTC().Format("2006-01-02_15")
		gz = h.gzip
	}
	if gz {
		name += ".gz"
		w.sum.GzipParts++
	}
	path := filepath.Join(h.dir, name)
	data := h.part.Bytes()
	if gz {
		// One compressor for every part (Reset gives the bytes a new one would).
		w.zbuf.Reset()
		if w.zw == nil {
			w.zw, _ = gzip.NewWriterLevel(&w.zbuf, gzip.BestSpeed)
		} else {
			w.zw.Reset(&w.zbuf)
		}
		w.zw.Write(data)
		w.zw.Close()
		data = w.zbuf.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	rel, _ := filepath.Rel(w.root, path)
	w.files = append(w.files, rel)
	w.sum.EngineFiles++
	h.part.Reset()
	return nil
}

func (h *engineHost) close(w *realWriter) error {
	if err := h.flush(1<<62, w); err != nil {
		return err
	}
	if !h.started {
		return nil
	}
	return h.writePart(-1, w) // the live file
}

// gatewayWriter writes the proxy's daily exports in startTime order.
type gatewayWriter struct {
	w         *realWriter
	rows      gwHeap
	cur, prev *gwPart
	torn      bool
}

type gwRow struct {
	start int64 // ms
	seq   uint64
	id    string
	b     []byte
}

type gwHeap []gwRow

func (h gwHeap) Len() int { return len(h) }
func (h gwHeap) Less(i, j int) bool {
	if h[i].start != h[j].start {
		return h[i].start < h[j].start
	}
	return h[i].seq < h[j].seq
}
func (h gwHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *gwHeap) Push(x any)   { *h = append(*h, x.(gwRow)) }
func (h *gwHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// gwPart is one daily export; an overlapping one also holds the first
// minutes of the next day (whose own export holds them too).
type gwPart struct {
	day     int64 // ms of 00:00 UTC
	overlap bool
	path    string
	f       *os.File
	bw      *bufio.Writer
	zw      *gzip.Writer
	pending *gwRow // the last row, held back: it may be written torn
	pendDup bool
}

func (gw *gatewayWriter) push(r gwRow) { heap.Push(&gw.rows, r) }

func (gw *gatewayWriter) flush(upTo int64) error {
	for len(gw.rows) > 0 && gw.rows[0].start < upTo {
		if err := gw.emit(heap.Pop(&gw.rows).(gwRow)); err != nil {
			return err
		}
	}
	return nil
}

func (gw *gatewayWriter) emit(r gwRow) error {
	day := r.start - ((r.start%86400000)+86400000)%86400000
	if gw.cur == nil || gw.cur.day != day {
		if gw.prev != nil {
			if err := gw.closePart(gw.prev); err != nil {
				return err
			}
			gw.prev = nil
		}
		if gw.cur != nil {
			if gw.cur.overlap {
				gw.prev = gw.cur
			} else if err := gw.closePart(gw.cur); err != nil {
				return err
			}
		}
		var err error
		if gw.cur, err = gw.open(day); err != nil {
			return err
		}
	}
	if gw.prev != nil {
		if r.start < day+overlapMs {
			if err := gw.prev.write(r, true, gw.w); err != nil {
				return err
			}
		} else {
			if err := gw.closePart(gw.prev); err != nil {
				return err
			}
			gw.prev = nil
		}
	}
	return gw.cur.write(r, false, gw.w)
}

func (gw *gatewayWriter) open(day int64) (*gwPart, error) {
	w := gw.w
	d := time.UnixMilli(day).UTC()
	p := &gwPart{day: day, path: filepath.Join(w.dir, "gateway", "LiteLLM_SpendLogs_"+d.Format(time.DateOnly)+".csv.gz")}
	// Some days' exports were run with a margin into the next day.
	p.overlap = w.cfg.Noise && int(d.Sub(w.cfg.LogStart.UTC().Truncate(24*time.Hour)).Hours()/24)%4 == 1
	f, err := os.Create(p.path)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	p.f, p.bw = f, bufio.NewWriterSize(f, 1<<16)
	p.zw, _ = gzip.NewWriterLevel(p.bw, gzip.BestSpeed)
	p.zw.Write([]byte(strings.Join(gatewayColumns, ",") + "\n"))
	rel, _ := filepath.Rel(w.root, p.path)
	w.files = append(w.files, rel)
	w.sum.GatewayFiles++
	return p, nil
}

func (p *gwPart) write(r gwRow, dup bool, w *realWriter) error {
	if p.pending != nil {
		if p.pendDup {
			w.sum.GatewayDuplicates++
			w.noiseNote("gateway_duplicate", p.pending.id, filepath.Base(p.path))
		}
		if _, err := p.zw.Write(p.pending.b); err != nil {
			return err
		}
	}
	p.pending, p.pendDup = &r, dup
	return nil
}

// closePart ends a part; the first overlapping part whose last row has an
// intact copy in the next export ends torn in that row (the export died
// while writing it).
func (gw *gatewayWriter) closePart(p *gwPart) error {
	w := gw.w
	if r := p.pending; r != nil {
		b := r.b
		if p.pendDup && !gw.torn {
			gw.torn = true
			cut := bytes.LastIndexByte(b, ',') * 3 / 5
			b = b[:cut]
			w.sum.TornLines++
			w.noiseNote("torn_line", r.id, filepath.Base(p.path))
		} else if p.pendDup {
			w.sum.GatewayDuplicates++
			w.noiseNote("gateway_duplicate", r.id, filepath.Base(p.path))
		}
		if _, err := p.zw.Write(b); err != nil {
			return err
		}
	}
	err := p.zw.Close()
	if err == nil {
		err = p.bw.Flush()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	p.f = nil
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	return nil
}

func (gw *gatewayWriter) close() error {
	if err := gw.flush(1 << 62); err != nil {
		return err
	}
	for _, p := range []*gwPart{gw.prev, gw.cur} {
		if p != nil {
			if err := gw.closePart(p); err != nil {
				return err
			}
		}
	}
	gw.prev, gw.cur = nil, nil
	return nil
}

func (gw *gatewayWriter) abort() {
	if gw == nil {
		return
	}
	for _, p := range []*gwPart{gw.prev, gw.cur} {
		if p != nil && p.f != nil {
			p.f.Close()
		}
	}
}
