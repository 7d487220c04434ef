package trace

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"
)

// mdEscape makes untrusted text inert in Markdown (and in the HTML a
// Markdown renderer may pass through): HTML special characters become
// entities, Markdown punctuation is backslash-escaped, line breaks become
// spaces, and the text is cut to n bytes.
func mdEscape(s string, n int) string {
	s = Truncate(s, n)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\\', '`', '*', '_', '[', ']', '(', ')', '{', '}', '#', '+', '!', '|', '~', '-', '.':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r', '\t', '\v', '\f':
			b.WriteByte(' ')
		default:
			if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

func pct(r Rate) string {
	if r.Total == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%% (%d/%d, CI %.0f–%.0f%%)", 100*r.Rate, r.Successes, r.Total, 100*r.Low, 100*r.High)
}

// RenderMarkdown renders a scheduled review as a Markdown report (seed:
// 改进建议报告). Every text that came from agents or tools is escaped.
func RenderMarkdown(r ScheduledReviewResult, title string) string {
	var b strings.Builder
	if title == "" {
		title = "Execution review"
	}
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(title, 200))
	fmt.Fprintf(&b, "Period %s – %s, compared with %s – %s.\n\n",
		r.Current.Start.UTC().Format("2006-01-02 15:04"), r.Current.End.UTC().Format("2006-01-02 15:04"),
		r.Previous.Start.UTC().Format("2006-01-02 15:04"), r.Previous.End.UTC().Format("2006-01-02 15:04"))
	t := r.Totals
	fmt.Fprintf(&b, "%d traces, %d succeeded (%d after a failed attempt), %d gave up; %d attempts.\n\n",
		t.Traces, t.Succeeded, t.Recovered, t.GaveUp, t.Attempts)

	trendTable := func(heading string, rows []Trend, withAttempts bool) {
		fmt.Fprintf(&b, "## %s\n\n", heading)
		if len(rows) == 0 {
			b.WriteString("None.\n\n")
			return
		}
		if withAttempts {
			b.WriteString("| | current | previous | change | trend | weight | recovered | attempts/trace |\n|---|---|---|---|---|---|---|---|\n")
		} else {
			b.WriteString("| | current | previous | change | trend | weight |\n|---|---|---|---|---|---|\n")
		}
		for _, x := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %+.0f pts | %s | %.2f |", mdEscape(x.ID, 120), pct(x.Current), pct(x.Previous), 100*x.Delta, x.Direction, x.Weight)
			if withAttempts {
				fmt.Fprintf(&b, " %d | %.2f |", x.Recovered, x.MeanAttempts)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	trendTable("Skills", r.Skills, true)
	trendTable("Artifacts", r.Artifacts, false)
	trendTable("Methodologies", r.Methodologies, true)

	b.WriteString("## Most frequent failure patterns\n\n")
	if len(r.Patterns) == 0 {
		b.WriteString("None.\n\n")
	} else {
		b.WriteString("| pattern | skill | error | this period | in all | condition | known fix |\n|---|---|---|---|---|---|---|\n")
		for _, p := range r.Patterns {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %s |\n", mdEscape(p.PatternID, 60), mdEscape(p.SkillID, 80),
				mdEscape(p.ErrorType, 80), p.Count, p.Total, mdEscape(p.Condition, 300), mdEscape(cmp.Or(p.SuggestedFix, "–"), 240))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Failures without a known fix\n\n")
	if len(r.Unlearned) == 0 {
		b.WriteString("None.\n\n")
	} else {
		b.WriteString("| skill | error | count | example |\n|---|---|---|---|\n")
		for _, u := range r.Unlearned {
			fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", mdEscape(u.SkillID, 80), mdEscape(u.ErrorType, 80), u.Count, mdEscape(u.Example, 200))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Needs a person\n\n")
	if len(r.NeedsPerson) == 0 {
		b.WriteString("None.\n\n")
	} else {
		for _, s := range r.NeedsPerson {
			fmt.Fprintf(&b, "- %s\n", mdEscape(s, 120))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Suggestions\n\n")
	if len(r.Suggestions) == 0 {
		b.WriteString("None.\n")
	} else {
		for _, s := range r.Suggestions {
			fmt.Fprintf(&b, "- **%s** %s\n", mdEscape(s.Kind, 40), mdEscape(s.Text, 600))
		}
	}
	return b.String()
}
