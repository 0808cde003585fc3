package notify

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// A notice redrafted after an earlier version of it was accepted, with
// other content, is a correction: it goes out as a new message (its own
// Message-ID) that says it supersedes the earlier one (Supersedes and
// References headers, and a line in its language at the top of the body),
// and 'notify send' sends it only when asked (--supersede). A redraft with
// the same content keeps the accepted message, byte for byte.

// acceptedVersion is one message of a notice some address accepted.
type acceptedVersion struct{ messageID, sha256 string }

// acceptedVersions lists each notice's accepted messages, first accepted
// first.
type acceptedVersions map[string][]acceptedVersion

func loadAcceptedVersions(ctx context.Context, db *sql.DB) (acceptedVersions, error) {
	out := acceptedVersions{}
	err := eachRow(ctx, db, "notify_accepted_versions", func(rows *sql.Rows) error {
		var notice string
		var v acceptedVersion
		if err := rows.Scan(&notice, &v.messageID, &v.sha256); err != nil {
			return err
		}
		out[notice] = append(out[notice], v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("send ledger: %w", err)
	}
	return out, nil
}

// build renders a notice and writes its message: the plain one (baseID)
// when no version was accepted or the plain one is what was accepted;
// else the superseding one, whose Message-ID derives from the content, so
// that a redraft with the same inputs gives the same bytes. It returns the
// message and the spec it was built from (its MessageID the one chosen).
func (a acceptedVersions) build(noticeID, baseID string, spec emlSpec, draw func(supersedes bool) (rendered, error)) ([]byte, emlSpec, error) {
	fill := func(supersedes bool) ([]byte, error) {
		r, err := draw(supersedes)
		if err != nil {
			return nil, err
		}
		spec.Subject, spec.Text, spec.HTML = r.Subject, r.Text, r.HTML
		return buildEML(spec), nil
	}
	spec.MessageID = baseID
	plain, err := fill(false)
	if err != nil {
		return nil, spec, err
	}
	vs := a[noticeID]
	if len(vs) == 0 {
		return plain, spec, nil
	}
	sum := sha256.Sum256(plain)
	plainSHA := hex.EncodeToString(sum[:])
	if slices.ContainsFunc(vs, func(v acceptedVersion) bool {
		// An older ledger row has no SHA-256: its message stands as is.
		return v.sha256 == plainSHA || (v.sha256 == "" && v.messageID == baseID)
	}) {
		return plain, spec, nil
	}
	id := strings.TrimSuffix(baseID, ">")
	at := strings.LastIndexByte(id, '@')
	newID := id[:at] + ".r" + plainSHA[:12] + id[at:] + ">"
	for _, v := range vs {
		if v.messageID != newID && !slices.Contains(spec.References, v.messageID) {
			spec.References = append(spec.References, v.messageID)
		}
	}
	if n := len(spec.References); n > 0 {
		spec.Supersedes = spec.References[n-1]
	}
	spec.MessageID = newID
	eml, err := fill(true)
	return eml, spec, err
}
