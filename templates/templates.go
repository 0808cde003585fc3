// Package templates holds the message catalogues (catalog/), the templates of leakmap's notices
// (notify/) and reports (report/), embedded as data. Packages parse them
// once, at first use.
package templates

import "embed"

// FS holds notify/*, report/* and catalog/* (the message catalogues).
//
//go:embed notify report catalog
var FS embed.FS
