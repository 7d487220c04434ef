package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteTable writes the report as human-readable tables: the summary,
// success by phase with the recovery after each drift, success by window
// and by family, and the policies' own diagnostics.
func WriteTable(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	seeds := make([]string, len(r.Seeds))
	for i, s := range r.Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	ew.printf("world %s: %d tasks, seeds %s; %d of %d strategies per task, combined by %s; %d task families",
		r.World, r.Tasks, strings.Join(seeds, " "), r.K, r.Strategies, r.Combine, len(r.Families))
	if len(r.Drifts) > 0 {
		ew.printf("; drift at task %s", joinInts(r.Drifts))
	}
	ew.printf("\noracle success %s, expected %s\n\n", rateStat(r.Oracle), rateStat(r.OracleExpected))

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY\tSUCCESS\t% OF ORACLE\tEXPECTED\tREGRET")
	for _, p := range r.Policies {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", displayName(p), rateStat(p.Success), pctStat(p.OfOracle), rateStat(p.Expected), numStat(p.Regret))
	}
	tw.Flush()
	for _, p := range r.Policies {
		if p.Reference {
			ew.printf("* reference learner, not a product policy: told the task's family and strategies' own successes (drawn from\n" +
				"  the hidden rates: the chosen ones', every one's for informed-full*), more information than any agent has;\n" +
				"  it shows what learning alone can reach\n")
			break
		}
	}

	if len(r.Drifts) > 0 {
		ew.printf("\nsuccess by phase; tasks to recover after a drift (expected success over the next %d tasks within %.0f points of the oracle's)\n"+
			"and to regain the policy's own level (its share of the oracle over those tasks back within %.0f points of its share before the drift),\n"+
			"per seed (mean over the seeds that regain), POOLED over seeds (expected success summed over seeds per task),\n"+
			"and pooled on SKILL (expected success above random choice's, as a share of the oracle's above random's)\n",
			r.Window, r.Tolerance*100, r.Tolerance*100)
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		head := []string{"POLICY"}
		for _, s := range r.Phases {
			head = append(head, fmt.Sprintf("TASKS %d-%d", s.From, s.To))
		}
		for _, d := range r.Drifts {
			head = append(head, fmt.Sprintf("RECOVERY @%d", d), fmt.Sprintf("REGAIN @%d", d), fmt.Sprintf("POOLED @%d", d), fmt.Sprintf("SKILL @%d", d))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, p := range r.Policies {
			row := []string{displayName(p)}
			for _, s := range p.Phases {
				row = append(row, rateStat(s))
			}
			for _, rc := range p.Recovery {
				row = append(row, recoveryText(rc, len(r.Seeds)),
					recoveryText(Recovery{Tasks: rc.RegainTasks, Recovered: rc.Regained}, len(r.Seeds)), pooledText(rc.RegainPooled), pooledText(rc.RegainSkill))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
	}

	ew.printf("\nsuccess by window of %d tasks (mean over seeds)\n", r.Window)
	head := []string{}
	for _, s := range r.Windows {
		head = append(head, fmt.Sprintf("%d-%d", s.From, s.To))
	}
	rows := make([][]string, len(r.Policies))
	for i, p := range r.Policies {
		for _, s := range p.Windows {
			rows[i] = append(rows[i], fmt.Sprintf("%.2f", s.Mean))
		}
	}
	ew.grid(r.Policies, head, rows)

	if len(r.Families) > 1 {
		ew.printf("\nsuccess by task family (mean over seeds)\n")
		rows := make([][]string, len(r.Policies))
		for i, p := range r.Policies {
			for _, f := range p.Families {
				rows[i] = append(rows[i], fmt.Sprintf("%.2f", f.Success.Mean))
			}
		}
		ew.grid(r.Policies, r.Families, rows)
	}

	first := true
	for _, p := range r.Policies {
		if len(p.Stats) == 0 {
			continue
		}
		if first {
			ew.printf("\npolicy diagnostics (mean over seeds)\n")
			first = false
		}
		keys := make([]string, 0, len(p.Stats))
		for k := range p.Stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %.2f", k, p.Stats[k].Mean)
		}
		ew.printf("  %s: %s\n", displayName(p), strings.Join(parts, ", "))
	}
	return ew.err
}

func rateStat(s Stat) string { return fmt.Sprintf("%.3f (%.3f-%.3f)", s.Mean, s.Min, s.Max) }

func pctStat(s Stat) string {
	return fmt.Sprintf("%.0f%% (%.0f-%.0f)", s.Mean*100, s.Min*100, s.Max*100)
}

func numStat(s Stat) string { return fmt.Sprintf("%.1f (%.1f-%.1f)", s.Mean, s.Min, s.Max) }

func recoveryText(rc Recovery, seeds int) string {
	if rc.Tasks == nil {
		return "not recovered"
	}
	s := fmt.Sprintf("%.0f (%.0f-%.0f)", rc.Tasks.Mean, rc.Tasks.Min, rc.Tasks.Max)
	if miss := seeds - rc.Recovered; miss > 0 {
		s += fmt.Sprintf(", %d/%d seeds not recovered", miss, seeds)
	}
	return s
}

// pooledText is a pooled regain: its tasks, or "not regained".
func pooledText(k *int) string {
	if k == nil {
		return "not regained"
	}
	return fmt.Sprint(*k)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// grid writes a table of numbers: the policy names left-aligned, then one
// right-aligned column per heading.
func (e *errWriter) grid(policies []PolicyReport, head []string, rows [][]string) {
	nameW := len("POLICY")
	for _, p := range policies {
		nameW = max(nameW, len(displayName(p)))
	}
	widths := make([]int, len(head))
	for j, h := range head {
		widths[j] = len(h)
		for _, row := range rows {
			if j < len(row) {
				widths[j] = max(widths[j], len(row[j]))
			}
		}
	}
	line := func(name string, cells []string) {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", nameW, name)
		for j, c := range cells {
			fmt.Fprintf(&b, "  %*s", widths[j], c)
		}
		e.printf("%s\n", b.String())
	}
	line("POLICY", head)
	for i, p := range policies {
		line(displayName(p), rows[i])
	}
}

// displayName is a policy's name in the text report: a reference learner's
// is marked with an asterisk (explained under the summary table).
func displayName(p PolicyReport) string {
	if p.Reference {
		return p.Name + "*"
	}
	return p.Name
}
