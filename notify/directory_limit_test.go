package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/leakmap/leakmap/errs"
)

// TestDirectorySizeLimit: a tenant directory that never ends is refused at
// its size limit (exit 2), not read until memory runs out.
func TestDirectorySizeLimit(t *testing.T) {
	start := time.Now()
	if _, err := LoadDirectory("/dev/zero"); errs.ExitCode(err) != 2 || !strings.Contains(err.Error(), "size limit") {
		t.Errorf("/dev/zero: %v", err)
	}
	t.Logf("/dev/zero refused in %s", time.Since(start).Round(time.Millisecond))
}
