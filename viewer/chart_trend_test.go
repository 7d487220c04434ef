package viewer

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

// TestTrendChart: the band spans each bucket's Wilson interval, empty
// buckets break the line and the band, and no outcomes means no plot.
func TestTrendChart(t *testing.T) {
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	b := func(i, total, ok int, low, high float64) kaizen.RateInterval {
		r := kaizen.RateInterval{From: at.AddDate(0, 0, i), To: at.AddDate(0, 0, i+1), Total: total, Succeeded: ok, Low: low, High: high}
		if total > 0 {
			r.Rate = float64(ok) / float64(total)
		}
		return r
	}
	c := trendChart([]kaizen.RateInterval{b(0, 4, 2, 0.15, 0.85), b(1, 2, 2, 0.34, 1), b(2, 0, 0, 0, 1), b(3, 1, 0, 0, 0.79)})
	if c.Empty != "" || len(c.Areas) != 2 || len(c.Lines) != 1 || len(c.Dots) != 3 || len(c.Bars) != 3 {
		t.Fatalf("chart: %d areas, %d lines, %d dots, %d bars, empty %q", len(c.Areas), len(c.Lines), len(c.Dots), len(c.Bars), c.Empty)
	}
	y := func(r float64) float64 { return c.Bottom - r*c.plotH() }
	// The first band runs along the highs (0.85, 1) and back along the lows (0.34, 0.15).
	pts := strings.Fields(c.Areas[0].Points)
	want := []float64{y(0.85), y(1), y(0.34), y(0.15)}
	for i, p := range pts {
		_, ys, _ := strings.Cut(p, ",")
		if ys != strings.Split(pt(0, want[i]), ",")[1] {
			t.Errorf("band point %d: %s, want y %.1f", i, p, want[i])
		}
	}
	// A lone bucket gets a band of its own, a bar wide.
	if n := len(strings.Fields(c.Areas[1].Points)); n != 4 {
		t.Errorf("a lone bucket's band has %d points", n)
	}
	if c.Dots[2].Title != "Mar 4 00:00 – Mar 5 00:00: 0/1 succeeded (0%, 95% interval 0%–79%)" {
		t.Errorf("tooltip %q", c.Dots[2].Title)
	}
	if e := trendChart([]kaizen.RateInterval{b(0, 0, 0, 0, 1)}); e.Empty == "" {
		t.Error("no outcomes still plots")
	}
	s := projectSparkline([]dayBucket{{Day: at, Total: 2, Succeeded: 1}, {Day: at.AddDate(0, 0, 1)}, {Day: at.AddDate(0, 0, 2), Total: 1, Succeeded: 1}})
	if len(s.Bars) != 2 || s.Bars[0].H != s.Height/2 || s.Bars[1].H != s.Height ||
		s.Label != "Success over the last 3 days: 2 of 3 outcomes (67%) on 2 day(s) with outcomes" {
		t.Errorf("sparkline: %+v", s)
	}
}
