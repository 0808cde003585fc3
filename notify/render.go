package notify

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"sync"
	texttemplate "text/template"
	"time"

	"github.com/leakmap/leakmap/incident"
	"github.com/leakmap/leakmap/templates"
)

// Languages the notices are written in.
var languages = []string{"en", "fr"}

// tenantView is everything a tenant notice template may show: the tenant's
// own figures and the incident, never another tenant.
type tenantView struct {
	IncidentID, Title string
	ProviderName      string
	Contact           string // DPO address, else the provider's
	Greeting          string // the tenant's name, or "" for a generic greeting
	Lang              string

	WindowStart, WindowEnd    string
	DiscoveredAt, ContainedAt string // "" when unknown
	AsOf                      string
	DeletionDeadline          string

	// Roles: Source (its data may have reached another tenant), Recipient
	// (it may have received another tenant's data), SelfOnly (affected, but
	// only ever by its own data: no cross-tenant wording at all).
	Source, Recipient, SelfOnly bool
	ExposedRequests             int
	AffectedRequests            int
	SourceTier, RecipientTier   string // confirmed | probable | possible | ""
	FirstTS, LastTS             string

	Attachment     string // file name of the attached CSV
	AttachmentRows int

	DataCategories  []string
	Consequences    string
	MeasuresTaken   []string
	MeasuresPlanned []string
}

// regulatorView is the content of the regulator notice: figures and
// timeline only, no personal data and no tenant.
type regulatorView struct {
	IncidentID, Title string
	ProviderName      string
	ProviderCountry   string
	Contact           string
	Lang              string

	RecipientTenants, SourceTenants, TenantsTotal int
	AffectedRequests, ExposedRequests             int
	Confirmed, Probable, Possible, SelfExposures  int
	FirstAffected, LastAffected                   string

	LaunchedAt, WindowStart, WindowEnd string
	DiscoveredAt, AwareAt, ContainedAt string
	AsOf                               string
	Deadline                           string // aware_at + 72h
	DeadlineMet                        bool
	LateBy                             string // "" when met

	DataCategories  []string
	Consequences    string
	MeasuresTaken   []string
	MeasuresPlanned []string
	DelayReasons    string
}

// rendered is one notice's subject and bodies.
type rendered struct {
	Subject, Text, HTML string
}

type templateSet struct {
	text *texttemplate.Template
	html *htmltemplate.Template
}

var (
	parseOnce sync.Once
	parsed    map[string]templateSet // key: kind.lang, kind tenant|regulator
	parseErr  error
)

// funcs are shared by the text and HTML templates.
func funcs(lang string) map[string]any {
	return map[string]any{
		"tier": func(t string) string { return tierLabel(lang, t) },
		"join": strings.Join,
	}
}

func loadTemplates() (map[string]templateSet, error) {
	parseOnce.Do(func() {
		parsed = map[string]templateSet{}
		for _, kind := range []string{"tenant", "regulator"} {
			for _, lang := range languages {
				base := "notify/" + kind + "." + lang
				tt, err := texttemplate.New(kind+"."+lang+".txt").Funcs(funcs(lang)).Option("missingkey=error").ParseFS(templates.FS, base+".txt")
				if err != nil {
					parseErr = fmt.Errorf("notice templates: %w", err)
					return
				}
				ht, err := htmltemplate.New(kind+"."+lang+".html").Funcs(funcs(lang)).Option("missingkey=error").ParseFS(templates.FS, base+".html")
				if err != nil {
					parseErr = fmt.Errorf("notice templates: %w", err)
					return
				}
				parsed[kind+"."+lang] = templateSet{text: tt, html: ht}
			}
		}
	})
	return parsed, parseErr
}

// render runs the kind's templates in lang: the text template defines
// "subject" and "body", the HTML template "body".
func render(kind, lang string, view any) (rendered, error) {
	sets, err := loadTemplates()
	if err != nil {
		return rendered{}, err
	}
	set, ok := sets[kind+"."+lang]
	if !ok {
		return rendered{}, fmt.Errorf("no %s template in language %q", kind, lang)
	}
	var subj, text, html bytes.Buffer
	if err := set.text.ExecuteTemplate(&subj, "subject", view); err != nil {
		return rendered{}, fmt.Errorf("%s.%s subject: %w", kind, lang, err)
	}
	if err := set.text.ExecuteTemplate(&text, "body", view); err != nil {
		return rendered{}, fmt.Errorf("%s.%s text: %w", kind, lang, err)
	}
	if err := set.html.ExecuteTemplate(&html, "body", view); err != nil {
		return rendered{}, fmt.Errorf("%s.%s html: %w", kind, lang, err)
	}
	return rendered{
		Subject: strings.Join(strings.Fields(subj.String()), " "),
		Text:    tidyText(text.String()),
		HTML:    tidyText(html.String()),
	}, nil
}

// tidyText trims trailing spaces and collapses runs of blank lines that
// template conditionals leave behind.
func tidyText(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank := true // drop leading blank lines
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n") + "\n"
}

func tierLabel(lang, tier string) string {
	labels := map[string]map[string]string{
		"en": {
			"confirmed": "confirmed (a response shares text with a prompt)",
			"probable":  "probable (the same machine's memory still held the data)",
			"possible":  "possible (it cannot be ruled out)",
			"":          "none found (it cannot be ruled out)",
		},
		"fr": {
			"confirmed": "confirmé (une réponse partage du texte avec une requête)",
			"probable":  "probable (la mémoire de la même machine contenait encore les données)",
			"possible":  "possible (on ne peut pas l'exclure)",
			"":          "aucun indice trouvé (on ne peut pas l'exclure)",
		},
	}
	if l, ok := labels[lang][tier]; ok {
		return l
	}
	return tier
}

// defaults is the wording written for this class of bug, used when the
// incident file's notices block leaves a field empty.
type wording struct {
	DataCategories  []string
	Consequences    string
	MeasuresTaken   []string
	MeasuresPlanned []string
	DelayReasons    string // shown only when the regulator notice is late
}

func defaultWording(lang string, inc *incident.Incident) wording {
	contained := "the fix"
	if inc.ContainedAt != nil {
		contained = incident.Format(*inc.ContainedAt)
	}
	if lang == "fr" {
		if inc.ContainedAt != nil {
			contained = incident.Format(*inc.ContainedAt)
		} else {
			contained = "la correction"
		}
		return wording{
			DataCategories: []string{"texte des requêtes (prompts)", "texte généré"},
			Consequences: "Des fragments des requêtes d'un client, qui peuvent contenir des données personnelles des utilisateurs de ce client " +
				"ou des informations confidentielles, ont pu être renvoyés à un autre client dans une réponse du modèle. " +
				"Nous n'avons aucun indice que ces données aient été utilisées ou publiées.",
			MeasuresTaken: []string{
				"arrêt de la faute le " + contained + " : les requêtes plus longues que la mémoire disponible sont désormais rejetées avant tout transfert",
				"reconstitution, à partir de nos journaux, des requêtes touchées et des clients concernés",
				"conservation des journaux et de l'analyse comme éléments de preuve",
			},
			MeasuresPlanned: []string{
				"vérifier, à chaque démarrage de machine et après tout changement de modèle ou de mémoire, que la mémoire couvre la longueur de contexte maximale",
				"activer des contrôles d'intégrité de la mémoire transférée entre machines",
				"tester le contenu des réponses à contexte long, et pas seulement leur statut",
			},
			DelayReasons: "identifier les clients concernés, de part et d'autre, a exigé de reconstituer à partir des journaux du service " +
				"quelles requêtes ont été touchées et de quelle mémoire elles ont pu lire le contenu ; " +
				"nous avons choisi de notifier des chiffres vérifiés plutôt que des estimations.",
		}
	}
	return wording{
		DataCategories: []string{"prompt text", "generated text"},
		Consequences: "Fragments of a customer's prompts, which may include personal data of that customer's users or " +
			"confidential information, may have been returned to another customer inside a model response. " +
			"We have no indication that the data was used or published.",
		MeasuresTaken: []string{
			"stopped the fault on " + contained + ": requests longer than the available memory are now rejected before any transfer",
			"reconstructed from our logs which requests were affected and which customers are concerned",
			"preserved the logs and the analysis as evidence",
		},
		MeasuresPlanned: []string{
			"check at every machine start, and after any model or memory change, that the memory pool covers the maximum context length",
			"enable integrity checks on the memory transferred between machines",
			"test the content of long-context responses, not only their status",
		},
		DelayReasons: "identifying which customers were concerned, on each side, required reconstructing from the service logs " +
			"which requests were affected and whose memory they may have read; we chose to notify with verified figures rather than guesses.",
	}
}

// applyWording fills w from the incident's notices block where it is set.
func applyWording(w wording, n incident.Notices) wording {
	if len(n.DataCategories) > 0 {
		w.DataCategories = n.DataCategories
	}
	if strings.TrimSpace(n.Consequences) != "" {
		w.Consequences = strings.TrimSpace(n.Consequences)
	}
	if len(n.MeasuresTaken) > 0 {
		w.MeasuresTaken = n.MeasuresTaken
	}
	if len(n.MeasuresPlanned) > 0 {
		w.MeasuresPlanned = n.MeasuresPlanned
	}
	if n.DelayReasons != "" {
		w.DelayReasons = n.DelayReasons
	}
	return w
}

func fmtOpt(t *time.Time) string {
	if t == nil {
		return ""
	}
	return incident.Format(*t)
}

// fmtDuration writes a lateness as whole hours and minutes ("26h05m").
func fmtDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
