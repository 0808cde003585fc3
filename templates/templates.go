// Package templates holds the text and HTML templates of leakmap's notices
// (notify/) and reports (report/), embedded as data. Packages parse them
// once, at first use.
package templates

import "embed"

// FS holds notify/* and report/*.
//
//go:embed notify report
var FS embed.FS
