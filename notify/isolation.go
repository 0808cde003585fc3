package notify

// The isolation check proves, from the outbox alone, that a notice to one
// tenant holds no other tenant's id, name, email or request id, and no logged
// text. Draft writes a manifest holding only hashes: of each tenant's
// identifiers (as word sequences), and in a file beside it (texts.go) of
// word shingles of the logged texts of every request the analysis names. The check decodes each .eml (headers,
// quoted-printable/base64 parts, HTML with tags stripped, attachments) into
// lowercase words and hashes its word k-grams against the manifest.
//
// Words are maximal runs of letters and digits, lowercased, so "T-Alpha",
// "t_alpha" and "t alpha" are the same identifier. An identifier with no
// letter or digit cannot be matched and is skipped. Logged texts of fewer
// than minTextWords words are skipped (they are indistinguishable from
// ordinary words); longer ones are matched by shingles of shingleWords words
// (or whole, when shorter than a shingle).

const (
	manifestName = "isolation.manifest"
	// textsDraftName is the texts file (texts.go) while a draft is made.
	textsDraftName = ".isolation-texts-draft"
	manifestMagic  = "leakmap isolation manifest v4"
	shingleWords   = 6
	minTextWords   = 3
	// Texts longer than winnowAbove words keep winnowed shingles only.
	winnowAbove  = 1000
	winnowWindow = 8
	regulatorKey = "regulator"
)
