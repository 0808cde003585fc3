package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print leakmap's version and its DuckDB driver's",
		Long:  "Print leakmap's version and the module versions it was built with.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			version := "(devel)"
			duck := "unknown"
			if info, ok := debug.ReadBuildInfo(); ok {
				if info.Main.Version != "" {
					version = info.Main.Version
				}
				for _, d := range info.Deps {
					if d.Path == "github.com/duckdb/duckdb-go/v2" {
						duck = d.Version
					}
				}
			}
			fmt.Fprintf(g.stdout, "leakmap %s (duckdb-go %s)\n", version, duck)
			return nil
		},
	}
}
