package notify

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every drafted .eml parses with Python's email package (a second,
// independent MIME reader), without defects, with a text part in the
// notice's language and the Reply-To the notice names.
func TestEMLParsesWithPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	_, res := draftFixture(t)
	const script = `
import email, email.policy, sys
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        m = email.message_from_binary_file(f, policy=email.policy.default)
    defects = list(m.defects) + [d for p in m.walk() for d in p.defects]
    text = m.get_body(preferencelist=('plain',)).get_content()
    html = m.get_body(preferencelist=('html',)).get_content()
    print(path.rsplit('/', 1)[-1], len(defects), m['Content-Language'], m['Reply-To'], len(text) > 200, len(html) > 200, len(list(m.iter_attachments())))
`
	var paths []string
	for _, n := range res.Notices {
		paths = append(paths, filepath.Join(res.Outbox, n.File))
	}
	out, err := exec.Command(py, append([]string{"-c", script}, paths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(res.Notices) {
		t.Fatalf("python read %d messages, want %d:\n%s", len(lines), len(res.Notices), out)
	}
	for i, n := range res.Notices {
		attach := "1"
		if n.Kind == "regulator" {
			attach = "0"
		}
		want := n.File + " 0 " + n.Language + " dpo@inference.example True True " + attach
		if lines[i] != want {
			t.Errorf("python: %q, want %q", lines[i], want)
		}
	}
}
