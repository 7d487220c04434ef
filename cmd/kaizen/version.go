package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func init() { register(versionCommand) }

func versionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kaizen version and storage backend",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			v := e.Version()
			return a.print(v, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "kaizen %s (%s)\n", v.Version, v.Backend)
				return err
			})
		},
	}
}
