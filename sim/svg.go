package sim

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// chart geometry (SVG user units)
const (
	svgW, svgH     = 940, 470
	plotL, plotR   = 64, 690
	plotT, plotB   = 44, 400
	legendX        = 710
	legendLineStep = 22
)

// palette is the Okabe-Ito colour-blind safe set (yellow left out for
// contrast on white); every line also has its own dash pattern, so the
// chart does not rely on colour alone.
var palette = []string{"#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#CC79A7", "#56B4E9"}

var dashes = []string{"", "8 4", "3 3", "10 3 2 3", "1 3", "6 2 2 2 2 2", "12 6"}

// WriteSVG writes a line chart of each policy's rolling expected success
// over the tasks (Report.Rolling), with the drifts marked. The chart has a
// <title> and a <desc> that states the data in words.
func WriteSVG(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	n := r.Tasks
	x := func(t int) float64 { // t from 1
		if n <= 1 {
			return plotL
		}
		return plotL + float64(t-1)/float64(n-1)*(plotR-plotL)
	}
	y := func(v float64) float64 { return plotB - v*(plotB-plotT) }

	title := fmt.Sprintf("kaizen sim, world %s: expected success per policy, rolling %d tasks", r.World, r.Window)
	ew.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="sim-title sim-desc" font-family="system-ui, sans-serif" font-size="12">`+"\n",
		svgW, svgH, svgW, svgH)
	ew.printf("<title id=\"sim-title\">%s</title>\n", esc(title))
	ew.printf("<desc id=\"sim-desc\">%s</desc>\n", esc(chartDesc(r)))
	ew.printf("<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", svgW, svgH)
	ew.printf("<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", plotL, esc(title))

	// axes and grid
	ew.printf("<g stroke=\"#d0d0d0\" stroke-width=\"1\">\n")
	for i := 0; i <= 4; i++ {
		v := float64(i) / 4
		ew.printf("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", plotL, y(v), plotR, y(v))
	}
	ew.printf("</g>\n<g fill=\"#333333\" text-anchor=\"end\">\n")
	for i := 0; i <= 4; i++ {
		v := float64(i) / 4
		ew.printf("<text x=\"%d\" y=\"%.1f\">%.2f</text>\n", plotL-6, y(v)+4, v)
	}
	ew.printf("</g>\n<g fill=\"#333333\" text-anchor=\"middle\">\n")
	step := tickStep(n)
	ticks := []int{1}
	for t := step; t <= n; t += step {
		ticks = append(ticks, t)
	}
	for _, t := range ticks {
		ew.printf("<text x=\"%.1f\" y=\"%d\">%d</text>\n", x(t), plotB+18, t)
	}
	ew.printf("<text x=\"%d\" y=\"%d\">task</text>\n", (plotL+plotR)/2, plotB+38)
	ew.printf("</g>\n")
	ew.printf("<text transform=\"translate(18 %d) rotate(-90)\" text-anchor=\"middle\" fill=\"#333333\">expected success (rolling %d, mean of %d seeds)</text>\n",
		(plotT+plotB)/2, r.Window, len(r.Seeds))
	ew.printf("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n", plotL, plotB, plotR, plotB)
	ew.printf("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n", plotL, plotT, plotL, plotB)

	for _, d := range r.Drifts {
		ew.printf("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#7f7f7f\" stroke-dasharray=\"4 4\"/>\n", x(d), plotT, x(d), plotB)
		ew.printf("<text x=\"%.1f\" y=\"%d\" fill=\"#555555\">drift @%d</text>\n", x(d)+4, plotT+12, d)
	}

	for i, p := range r.Policies {
		color, dash := palette[i%len(palette)], dashes[i%len(dashes)]
		var pts strings.Builder
		for t, v := range p.Rolling {
			if t > 0 {
				pts.WriteByte(' ')
			}
			fmt.Fprintf(&pts, "%.1f,%.1f", x(t+1), y(v))
		}
		ew.printf("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", color)
		if dash != "" {
			ew.printf(" stroke-dasharray=\"%s\"", dash)
		}
		ew.printf(" points=\"%s\"><title>%s</title></polyline>\n", pts.String(), esc(p.Name))
		ly := plotT + 10 + i*legendLineStep
		ew.printf("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"", legendX, ly, legendX+30, ly, color)
		if dash != "" {
			ew.printf(" stroke-dasharray=\"%s\"", dash)
		}
		ew.printf("/>\n<text x=\"%d\" y=\"%d\">%s %.2f</text>\n", legendX+36, ly+4, esc(displayName(p)), p.Expected.Mean)
	}
	for _, p := range r.Policies {
		if p.Reference {
			ly := plotT + 10 + len(r.Policies)*legendLineStep
			ew.printf("<text x=\"%d\" y=\"%d\" fill=\"#555555\">* reference learner: more</text>\n", legendX, ly+4)
			ew.printf("<text x=\"%d\" y=\"%d\" fill=\"#555555\">information than any agent</text>\n", legendX, ly+4+16)
			break
		}
	}
	ew.printf("<text x=\"%d\" y=\"%d\" fill=\"#555555\">policy, mean over the run</text>\n", legendX, plotT-8)
	ew.printf("</svg>\n")
	return ew.err
}

// chartDesc states the chart's data in words for screen readers.
func chartDesc(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Line chart over tasks 1 to %d of world %s. Each line is a policy's expected success "+
		"(the hidden success probability of the strategies it chose), averaged over the last %d tasks and over %d seeds.",
		r.Tasks, r.World, r.Window, len(r.Seeds))
	if len(r.Drifts) > 0 {
		fmt.Fprintf(&b, " Hidden rates change at task %s (dashed vertical lines).", joinInts(r.Drifts))
	}
	b.WriteString(" Mean expected success over the run, and at the last task:")
	for i, p := range r.Policies {
		if i > 0 {
			b.WriteString(";")
		}
		last := 0.0
		if len(p.Rolling) > 0 {
			last = p.Rolling[len(p.Rolling)-1]
		}
		fmt.Fprintf(&b, " %s %.2f, %.2f", p.Name, p.Expected.Mean, last)
		if p.Reference {
			b.WriteString(" (a reference learner given more information than any agent, not a product policy)")
		}
	}
	b.WriteString(".")
	return b.String()
}

// tickStep picks an x tick spacing of 1, 2 or 5 × 10^k giving at most 10 ticks.
func tickStep(n int) int {
	for step := 1; ; step *= 10 {
		for _, m := range []int{1, 2, 5} {
			if n/(step*m) <= 10 {
				return step * m
			}
		}
	}
}

func esc(s string) string { return html.EscapeString(s) }
