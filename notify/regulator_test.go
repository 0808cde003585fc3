package notify

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/internal/catalog"
)

// Each Art. 33(3)(a)-(d) field, the timeline and the 72-hour deadline are
// in the regulator notice, in both languages, on time and late.
func TestRegulatorNoticeArt33Fields(t *testing.T) {
	aware := time.Date(2026, 9, 9, 10, 0, 0, 0, time.UTC)
	type field struct{ name, en, fr string }
	fields := []field{
		{"33(3)(a) nature", "(a) NATURE OF THE BREACH", "(a) NATURE DE LA VIOLATION"},
		{"33(3)(a) categories of data", "Categories of data: prompt text, generated text.", "Catégories de données : texte des requêtes (prompts), texte généré."},
		{"33(3)(a) data subjects", "Approximate number of data subjects:", "Nombre approximatif de personnes concernées :"},
		{"33(3)(a) records", "Approximate number of records concerned: 4 requests whose data may have been exposed; 4 responses", "Nombre approximatif d'enregistrements concernés : 4 requêtes dont les données ont pu être exposées ; 4 réponses"},
		{"33(3)(a) tenants", "Customers concerned: 6 in total; 4 whose data may have been exposed, 3 that may have received", "Clients concernés : 6 au total ; 4 dont les données ont pu être exposées, 3 qui ont pu recevoir"},
		{"33(3)(b) contact", "(b) CONTACT POINT\n\nData protection officer: dpo@inference.example", "(b) POINT DE CONTACT\n\nDélégué à la protection des données : dpo@inference.example"},
		{"33(3)(c) consequences", "(c) LIKELY CONSEQUENCES\n\nFragments of a customer's prompts", "(c) CONSÉQUENCES PROBABLES\n\nDes fragments des requêtes"},
		{"33(3)(d) measures taken", "(d) MEASURES TAKEN AND PROPOSED\n\nTaken:\n\n- the malfunction was stopped", "(d) MESURES PRISES ET PROPOSÉES\n\nMesures prises :\n\n- il a été mis fin au dysfonctionnement"},
		{"33(3)(d) measures proposed", "Proposed:\n\n- check at every machine start", "Mesures proposées :\n\n- vérifier, à chaque démarrage"},
		{"timeline start", "- start of the breach: 27 August 2026, 00:00 UTC", "- début de la violation : 27 août 2026 à 00:00 UTC"},
		{"timeline end", "- end of the breach: 9 September 2026, 14:00 UTC", "- fin de la violation : 9 septembre 2026 à 14:00 UTC"},
		{"timeline discovery", "- discovery: 8 September 2026, 23:11 UTC", "- découverte : 8 septembre 2026 à 23:11 UTC"},
		{"timeline awareness", "- awareness (start of the 72-hour period): 9 September 2026, 10:00 UTC", "- prise de connaissance (début du délai de 72 heures) : 9 septembre 2026 à 10:00 UTC"},
		{"timeline containment", "- containment: 9 September 2026, 14:00 UTC", "- arrêt de la violation (retrait ou correction) : 9 septembre 2026 à 14:00 UTC"},
		{"deadline", "Deadline: 12 September 2026, 10:00 UTC.", "Échéance : 12 septembre 2026 à 10:00 UTC."},
	}
	tests := []struct {
		country string
		lang    string
		asOf    time.Time
		late    string
	}{
		{"FR", "fr", aware.Add(72 * time.Hour), ""},
		{"FR", "fr", aware.Add(80 * time.Hour), "8 heures"},
		{"DE", "en", aware.Add(72 * time.Hour), ""},
		{"DE", "en", aware.Add(75*time.Hour + 30*time.Minute), "3 hours and 30 minutes"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+tt.late, func(t *testing.T) {
			db, dir := openFixture(t)
			inc := testIncident(t, "")
			inc.Provider.Country = tt.country
			res, err := Draft(context.Background(), db, nil, inc, dir, filepath.Join(t.TempDir(), "o"), tt.asOf)
			if err != nil {
				t.Fatal(err)
			}
			n := noticeFor(t, res, "")
			p := decodeForTest(t, readOutbox(t, res.Outbox, n.File))
			if n.Language != tt.lang || p.lang != tt.lang {
				t.Fatalf("language %s/%s, want %s", n.Language, p.lang, tt.lang)
			}
			for _, f := range fields {
				want := f.en
				if tt.lang == "fr" {
					want = f.fr
				}
				if !strings.Contains(p.text, want) {
					t.Errorf("%s: text lacks %q", f.name, want)
				}
			}
			met := map[string]string{"en": "is made within the deadline", "fr": "respecte ce délai"}[tt.lang]
			lateW := map[string]string{"en": "after the deadline.\nReasons for the delay:", "fr": "après l'échéance.\nMotifs du retard :"}[tt.lang]
			if tt.late == "" {
				mustContain(t, "on-time notice", p.text, met)
				mustNotContain(t, "on-time notice", p.text, lateW)
			} else {
				mustContain(t, "late notice", p.text, tt.late+" "+strings.SplitN(lateW, "\n", 2)[0], lateW)
				mustNotContain(t, "late notice", p.text, met)
			}
			// The HTML part carries the same sections.
			mustContain(t, "html", p.html, "(a) ", "(b) ", "(c) ", "(d) ")
		})
	}
}

// TestRegulatorDelayReasons: a late notice gives the incident file's
// notices.delay_reasons instead of the default wording, and says it is late.
func TestRegulatorDelayReasons(t *testing.T) {
	aware := time.Date(2026, 9, 9, 10, 0, 0, 0, time.UTC)
	const reasons = "the gateway logs of two regions reached us only on 2026-09-12."
	tests := []struct {
		country, extra, want, notWant string
	}{
		{"DE", "notices:\n  delay_reasons: " + reasons + "\n  fr: {delay_reasons: raisons}\n", "Reasons for the delay: " + reasons, "we chose to notify with verified figures"},
		{"FR", "notices:\n  en: {delay_reasons: reasons}\n  fr:\n    delay_reasons: |\n      " + reasons + "\n", "Motifs du retard : " + reasons, "chiffres vérifiés"},
		{"DE", "", "Reasons for the delay: identifying which customers", reasons},
	}
	for _, tt := range tests {
		t.Run(tt.country+fmt.Sprint(tt.extra != ""), func(t *testing.T) {
			db, dir := openFixture(t)
			inc := testIncident(t, tt.extra)
			inc.Provider.Country = tt.country
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			res, err := Draft(context.Background(), db, logger, inc, dir, filepath.Join(t.TempDir(), "o"), aware.Add(80*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			warned := strings.Contains(logs.String(), "gives no reasons") && strings.Contains(logs.String(), "deadline=2026-09-12T10:00:00Z")
			if warned != (tt.extra == "") {
				t.Errorf("warned %v about missing reasons, want %v:\n%s", warned, tt.extra == "", logs.String())
			}
			p := decodeForTest(t, readOutbox(t, res.Outbox, noticeFor(t, res, "").File))
			mustContain(t, "text", p.text, map[string]string{"DE": "8 hours", "FR": "8 heures"}[tt.country], tt.want)
			mustNotContain(t, "text", p.text, tt.notWant)
			mustContain(t, "html", p.html, strings.ReplaceAll(tt.want, "'", "&#39;"))
		})
	}
}

// The regulator notice's own measure is written as the incident's
// measures before it are: a capital and a full stop when the last of them
// has them, leakmap's lower case and no full stop otherwise; the
// incident's list is not written into.
func TestRegulatorMeasuresFollowTheList(t *testing.T) {
	for _, lang := range languages {
		c := catalog.Get(lang)
		item := c.MustT("regulator.measures.notify_all")
		lower, upper := item, strings.ToUpper(item[:1])+item[1:]
		for _, tc := range []struct {
			taken []string
			want  string
		}{
			{nil, lower},
			{[]string{"the model was withdrawn"}, lower},
			{[]string{"Model withdrawn on 9 September 2026."}, upper + "."},
			{[]string{"Model withdrawn"}, upper},
			{[]string{"the model was withdrawn."}, lower + "."},
			{[]string{"Model withdrawn.", "fix deployed"}, lower},
			{[]string{"Élément retiré."}, upper + "."},
		} {
			backing := append(make([]string, 0, len(tc.taken)+1), tc.taken...)
			got := regulatorMeasures(c, backing)
			if len(got) != len(tc.taken)+1 || got[len(got)-1] != tc.want || !slices.Equal(got[:len(tc.taken)], tc.taken) {
				t.Errorf("%s %q: got %q, want the list then %q", lang, tc.taken, got, tc.want)
			}
			if backing[:cap(backing)][len(tc.taken)] != "" {
				t.Errorf("%s %q: the incident's list was written into", lang, tc.taken)
			}
		}
	}
}
