package simulate

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/goccy/go-yaml"
)

// incidentFile is the incident file the simulator writes (DESIGN.md's
// shape), marshalled rather than formatted, so that incident.yaml and
// incident-real.yaml state the same facts.
type incidentFile struct {
	ID           string   `yaml:"id"`
	Title        string   `yaml:"title"`
	Models       []string `yaml:"models,flow"`
	Window       window   `yaml:"window,flow"`
	LaunchedAt   string   `yaml:"launched_at"`
	DiscoveredAt string   `yaml:"discovered_at"`
	AwareAt      string   `yaml:"aware_at"`
	ContainedAt  string   `yaml:"contained_at"`
	AsOf         string   `yaml:"as_of"`
	Capacity     struct {
		MaxContextTokens  int64  `yaml:"max_context_tokens"`
		PrefillPoolTokens int64  `yaml:"prefill_pool_tokens"`
		DecodePoolTokens  int64  `yaml:"decode_pool_tokens"`
		Timeline          string `yaml:"timeline"`
	} `yaml:"capacity"`
	Contamination struct {
		Model             string `yaml:"model"`
		Allocator         string `yaml:"allocator"`
		PageSize          int64  `yaml:"page_size"`
		ResidencyLookback string `yaml:"residency_lookback"`
		PossibleLookback  string `yaml:"possible_lookback"`
	} `yaml:"contamination"`
	Provider struct {
		Name     string `yaml:"name"`
		Email    string `yaml:"email"`
		DPOEmail string `yaml:"dpo_email"`
		Country  string `yaml:"country"`
	} `yaml:"provider"`
	Notices struct {
		DeletionDeadline string `yaml:"deletion_deadline"`
		// Wording in every language the notices need (the tenants' and
		// the regulator's).
		En wording `yaml:"en"`
		Fr wording `yaml:"fr"`
	} `yaml:"notices"`
	Sources []source  `yaml:"sources,omitempty"`
	Join    *joinSpec `yaml:"join,omitempty"`
}

// wording is one language's notices wording.
type wording struct {
	Title           string   `yaml:"title"`
	DataCategories  []string `yaml:"data_categories,flow"`
	Consequences    string   `yaml:"consequences"`
	MeasuresTaken   []string `yaml:"measures_taken"`
	MeasuresPlanned []string `yaml:"measures_planned"`
}

type window struct {
	Start string `yaml:"start"`
	End   string `yaml:"end"`
}

// source is one entry of sources: (DESIGN.md "Real logs").
type source struct {
	Layout      string   `yaml:"layout"`
	Role        string   `yaml:"role,omitempty"`
	Model       string   `yaml:"model,omitempty"`
	Timezone    string   `yaml:"timezone,omitempty"`
	TenantField string   `yaml:"tenant_field,omitempty"`
	Paths       []string `yaml:"paths,flow"`
}

type joinSpec struct {
	RoomTolerance    string `yaml:"room_tolerance"`
	GatewayTolerance string `yaml:"gateway_tolerance"`
}

func (g *generator) incident() incidentFile {
	c := g.cfg
	f := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	var inc incidentFile
	inc.ID = fmt.Sprintf("SIM-%d", c.Seed)
	inc.Title = fmt.Sprintf("Cross-tenant data in %s responses (simulated)", modelNames[modelInScope])
	inc.Models = []string{modelNames[modelInScope]}
	inc.Window = window{f(c.WindowStart), f(c.WindowEnd)}
	inc.LaunchedAt, inc.DiscoveredAt, inc.AwareAt = f(c.WindowStart), f(c.DiscoveredAt), f(c.AwareAt)
	inc.ContainedAt, inc.AsOf = f(c.WindowEnd), f(c.AsOf)
	inc.Capacity.MaxContextTokens = c.MaxContextTokens
	inc.Capacity.PrefillPoolTokens = c.PrefillPoolTokens
	inc.Capacity.DecodePoolTokens = c.DecodePoolTokens
	inc.Capacity.Timeline = "capacity.csv"
	inc.Contamination.Model, inc.Contamination.Allocator, inc.Contamination.PageSize = "replay", c.Allocator, c.PageSize
	inc.Contamination.ResidencyLookback, inc.Contamination.PossibleLookback = "30m", "10m"
	inc.Provider.Name, inc.Provider.Email = "Nimbus Inference SAS", "security@nimbus-inference.example"
	inc.Provider.DPOEmail, inc.Provider.Country = "dpo@nimbus-inference.example", "FR"
	n := &inc.Notices
	n.En = wording{
		Title:          inc.Title,
		DataCategories: []string{"prompt text", "generated text"},
		Consequences:   fmt.Sprintf("Parts of prompts sent to %s may have appeared in answers returned to other customers of the service.", modelNames[modelInScope]),
		MeasuresTaken: []string{
			fmt.Sprintf("Model withdrawn on %s and restored on %s with a prefill KV pool larger than the maximum context.", proseDate("en", c.WindowEnd), proseDate("en", c.FixAt)),
			"Over-long requests are now rejected before any transfer to a decode machine.",
		},
		MeasuresPlanned: []string{
			"Compare the KV pool size with the maximum context length at every machine start and after every model or memory change.",
			"Enable KV cache integrity checks.",
		},
	}
	n.Fr = wording{
		Title:          fmt.Sprintf("Données d'autres clients dans les réponses de %s (simulation)", modelNames[modelInScope]),
		DataCategories: []string{"texte des requêtes", "texte généré"},
		Consequences:   fmt.Sprintf("Des extraits de requêtes adressées à %s ont pu apparaître dans des réponses renvoyées à d'autres clients du service.", modelNames[modelInScope]),
		MeasuresTaken: []string{
			fmt.Sprintf("Modèle retiré le %s, puis remis en service le %s avec une mémoire KV de préremplissage plus grande que le contexte maximal.", proseDate("fr", c.WindowEnd), proseDate("fr", c.FixAt)),
			"Les requêtes trop longues sont désormais rejetées avant tout transfert vers une machine de décodage.",
		},
		MeasuresPlanned: []string{
			"Comparer la taille de la mémoire KV à la longueur de contexte maximale à chaque démarrage de machine et après tout changement de modèle ou de mémoire.",
			"Activer les contrôles d'intégrité du cache KV.",
		},
	}
	n.DeletionDeadline = f(c.AsOf.Add(14 * 24 * time.Hour).Truncate(24 * time.Hour))
	return inc
}

// realSources lists the real layouts' logs, relative to the incident file:
// the proxy's spend logs (the tenant is the team) and each model's prefill
// and decode request logs (they name no model; their hosts run on UTC).
func realSources() []source {
	s := []source{{Layout: "litellm-spendlogs", Role: "gateway", TenantField: "team_id", Paths: []string{"real/gateway/*.csv.gz"}}}
	for _, m := range modelNames {
		for _, role := range []string{"prefill", "decode"} {
			s = append(s, source{Layout: "sglang", Role: role, Model: m, Timezone: "UTC",
				Paths: []string{filepath.ToSlash(filepath.Join("real", "engine", m, role, "*"))}})
		}
	}
	return s
}

const incidentHeader = `# Simulated incident (leakmap simulate, seed %d, %d requests).
# notices.en.delay_reasons and notices.fr.delay_reasons are required (GDPR
# Art. 33(1)) when the regulator notice is sent after aware_at + 72h.
`

const incidentRealHeader = `# Simulated incident (leakmap simulate, seed %d, %d requests), on the logs a
# provider really keeps: the LiteLLM proxy's spend logs and each SGLang
# host's prefill and decode request logs (real/), joined into one request
# per call. The same incident, and the same truth, as incident.yaml.
`

func (g *generator) writeIncident() error {
	inc := g.incident()
	if err := g.writeYAML("incident.yaml", fmt.Sprintf(incidentHeader, g.cfg.Seed, g.cfg.Requests), inc); err != nil {
		return err
	}
	if g.cfg.CanonicalOnly {
		return nil
	}
	inc.Sources = realSources()
	inc.Join = &joinSpec{RoomTolerance: "30s", GatewayTolerance: "2s"}
	return g.writeYAML("incident-real.yaml", fmt.Sprintf(incidentRealHeader, g.cfg.Seed, g.cfg.Requests), inc)
}

func (g *generator) writeYAML(name, header string, v any) error {
	data, err := yaml.MarshalWithOptions(v, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return fmt.Errorf("simulate: %s: %w", name, err)
	}
	g.sum.Files = append(g.sum.Files, name)
	return writeFile(filepath.Join(g.dir, name), append([]byte(header), data...))
}
