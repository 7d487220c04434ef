package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/team"
)

// runCompositionFile starts the composition a TOML file describes
// (`kaizen team run --file`).
func runCompositionFile(cmd *cobra.Command, a *app, file, teamName string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", file, err)}
	}
	spec, err := team.ParseCompositionFile(data)
	if err != nil {
		return err
	}
	e, err := a.open(cmd.Context())
	if err != nil {
		return err
	}
	res, err := e.StartComposition(cmd.Context(), kaizen.ComposeInput{Project: a.project, Team: teamName, Spec: spec})
	if err != nil {
		return err
	}
	return a.print(res, func(w io.Writer) error {
		if c := res.Run.Compose; c != nil {
			fmt.Fprintf(w, "Composition %s: %d step(s)\n", c.Name, len(c.Steps))
			for i, s := range c.Steps {
				fmt.Fprintf(w, "  %d. %s %s (when %s)\n", i+1, s.Pattern, s.Pattern.Name(), s.When)
			}
		}
		printRun(w, res, false)
		return nil
	})
}
