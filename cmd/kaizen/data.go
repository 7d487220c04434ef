package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
)

func init() {
	register(exportCommand)
	register(importCommand)
	register(migrateCommand)
	register(rebuildCommand)
}

func exportCommand(a *app) *cobra.Command {
	var (
		opts kaizen.ExportOptions
		out  string
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a project's records as JSONL",
		Long: `Write the current project's records (or every project's, with --all) as
JSONL: a header line, then one record per line. The file can be imported
into another kaizen, or into another project with 'kaizen import --into'.

Without -o the JSONL goes to standard output. With -o the file is written
atomically and a summary is printed (as JSON with --json).`,
		Example: `  kaizen export -o backup.jsonl
  kaizen export --all > everything.jsonl`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			bar := a.newProgress("exporting", -1)
			defer bar.done()
			opts.Progress = func(n int) { bar.set(n, 0) }
			if out == "" || out == "-" {
				res, err := e.Export(cmd.Context(), a.stdout, opts)
				if err == nil && !a.json {
					fmt.Fprintf(a.stderr, "exported %s\n", exportSummary(res))
				}
				return err
			}
			res, err := exportFile(cmd, e, out, opts)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "Exported %s to %s\n", exportSummary(res), out)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "export every project")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}

// exportFile exports into a temporary file beside path and renames it into
// place, so a failed export leaves no partial file.
func exportFile(cmd *cobra.Command, e *kaizen.Engine, path string, opts kaizen.ExportOptions) (*kaizen.ExportResult, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, usageError{fmt.Errorf("cannot write %s: %w", path, err)}
	}
	res, err := e.Export(cmd.Context(), f, opts)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return res, nil
}

func exportSummary(res *kaizen.ExportResult) string {
	var parts []string
	total := 0
	for _, k := range slices.Sorted(maps.Keys(res.Records)) {
		parts = append(parts, fmt.Sprintf("%d %s", res.Records[k], k))
		total += res.Records[k]
	}
	s := fmt.Sprintf("%d records of project(s) %s", total, strings.Join(res.Projects, ", "))
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func importCommand(a *app) *cobra.Command {
	var opts kaizen.ImportOptions
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Import a JSONL export (idempotent)",
		Long: `Import a file written by 'kaizen export' (- reads standard input) in one
transaction, then rebuild the aggregates of the projects it touched.
Records keep their project unless --into names another one. Records already
present are skipped, so importing the same file twice changes nothing.`,
		Example: `  kaizen import backup.jsonl
  kaizen export --project api | kaizen import --into web -`,
		Args: exactArgs(1, "one file name, or - for standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, closeFn, err := openInput(a, args[0])
			if err != nil {
				return err
			}
			defer closeFn()
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			bar := a.newProgress("importing", -1)
			opts.Progress = bar.set
			res, err := e.Import(cmd.Context(), r, opts)
			bar.done()
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Imported into project(s) %s\n", strings.Join(res.Projects, ", "))
				t := table(w)
				fmt.Fprintln(t, "RECORD\tINSERTED\tSKIPPED")
				var in, sk int
				for _, k := range slices.Sorted(maps.Keys(res.Records)) {
					c := res.Records[k]
					in, sk = in+c.Inserted, sk+c.Skipped
					fmt.Fprintf(t, "%s\t%d\t%d\n", k, c.Inserted, c.Skipped)
				}
				fmt.Fprintf(t, "total\t%d\t%d\n", in, sk)
				if err := t.Flush(); err != nil {
					return err
				}
				if res.Remapped > 0 {
					fmt.Fprintf(w, "%d pattern(s) merged into existing patterns with the same content\n", res.Remapped)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&opts.Project, "into", "", "import every record into this project")
	return cmd
}

// migrateResult reports the database a migration ran on.
type migrateResult struct {
	Backend  string `json:"backend"`
	Location string `json:"location,omitempty"`
	Version  string `json:"version"`
	Status   string `json:"status"`
}

func migrateCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations",
		Long: `Open the database and apply its pending schema migrations (every command
does so on opening; this one does only that).`,
		Example: `  kaizen migrate
  kaizen --db postgres://localhost/kaizen migrate`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			v := e.Version()
			res := migrateResult{Backend: v.Backend, Version: v.Version, Status: "up to date"}
			if p, ok := e.Store().(interface{ Path() string }); ok {
				res.Location = p.Path()
			}
			return a.print(res, func(w io.Writer) error {
				where := ""
				if res.Location != "" {
					where = " " + res.Location
				}
				_, err := fmt.Fprintf(w, "%s database%s: schema %s (kaizen %s)\n", res.Backend, where, res.Status, res.Version)
				return err
			})
		},
	}
}

func rebuildCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild",
		Short: "Recompute a project's aggregates from its stored events",
		Long: `Recompute the current project's aggregates (pattern counts, maturity sums,
inversions, criterion sums) from the stored events. The result equals the
incrementally maintained aggregates; use it to repair them.`,
		Example: `  kaizen rebuild --project api`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			bar := a.newProgress("rebuilding", -1)
			res, err := e.RebuildWith(cmd.Context(), kaizen.RebuildOptions{Progress: bar.set})
			bar.done()
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "Rebuilt project %s: %d patterns, %d criteria\n", res.Project, res.Patterns, res.Criteria)
				return err
			})
		},
	}
}
