package viewer

import (
	"fmt"
	"strings"

	"github.com/kaizenhq/kaizen"
)

// area is a filled polygon of a chart (an interval band).
type area struct {
	Class  string
	Points string
	Title  string
}

// trendChart plots the success rate of each bucket of a period (line,
// left axis) inside its 95% Wilson interval (a band), over the number of
// outcomes (bars, right axis). Buckets without outcomes break the line and
// the band.
func trendChart(buckets []kaizen.RateInterval) chart {
	c := newChart(fmt.Sprintf("Success rate with its 95%% interval over %d period(s)", len(buckets)))
	c.Right = 660
	maxCount := 0
	for _, b := range buckets {
		maxCount = max(maxCount, b.Total)
	}
	if maxCount == 0 {
		c.Empty = "No outcomes in this period."
		return c
	}
	slot, x, yRate := c.rateAxes(len(buckets), maxCount, func(i int) string { return buckets[i].To.Format("Jan 2") })
	var seg []int
	flush := func() {
		if len(seg) > 0 {
			var upper, lower, mid []string
			for _, i := range seg {
				upper = append(upper, pt(x(i), yRate(buckets[i].High)))
				mid = append(mid, pt(x(i), yRate(buckets[i].Rate)))
			}
			for k := len(seg) - 1; k >= 0; k-- {
				lower = append(lower, pt(x(seg[k]), yRate(buckets[seg[k]].Low)))
			}
			if len(seg) == 1 { // a single bucket: a bar-wide band
				i := seg[0]
				w := slot * 0.3
				upper = []string{pt(x(i)-w, yRate(buckets[i].High)), pt(x(i)+w, yRate(buckets[i].High))}
				lower = []string{pt(x(i)+w, yRate(buckets[i].Low)), pt(x(i)-w, yRate(buckets[i].Low))}
			}
			c.Areas = append(c.Areas, area{Class: "interval", Points: strings.Join(append(upper, lower...), " ")})
			if len(mid) > 1 {
				c.Lines = append(c.Lines, line{Class: "rate", Points: strings.Join(mid, " ")})
			}
		}
		seg = nil
	}
	for i, b := range buckets {
		span := b.From.Format("Jan 2 15:04") + " – " + b.To.Format("Jan 2 15:04")
		if b.Total == 0 {
			flush()
			continue
		}
		h := float64(b.Total) / float64(maxCount) * c.plotH()
		c.Bars = append(c.Bars, bar{X: x(i) - slot*0.35, Y: c.Bottom - h, W: slot * 0.7, H: h, Class: "volume",
			Title: fmt.Sprintf("%s: %d outcome(s)", span, b.Total)})
		seg = append(seg, i)
		c.Dots = append(c.Dots, dot{X: x(i), Y: yRate(b.Rate), Class: "rate",
			Title: fmt.Sprintf("%s: %d/%d succeeded (%s, 95%% interval %s–%s)", span, b.Succeeded, b.Total, pct0(b.Rate), pct0(b.Low), pct0(b.High))})
	}
	flush()
	c.Legend = []legendEntry{{"rate", "success rate (left axis)"}, {"interval", "95% Wilson interval"}, {"volume", "outcomes (right axis)"}}
	return c
}

// sparkline is a small success-rate chart of a project's last days: a
// bar per day, its height the day's success rate, absent without
// outcomes. Label is its text equivalent.
type sparkline struct {
	Width, Height float64
	Bars          []bar
	Label         string
}

// projectSparkline draws the daily success rates of a project.
func projectSparkline(days []dayBucket) sparkline {
	s := sparkline{Width: 120, Height: 24}
	total, ok := 0, 0
	w := s.Width / float64(max(len(days), 1))
	for i, d := range days {
		total += d.Total
		ok += d.Succeeded
		if d.Total == 0 {
			continue
		}
		h := max(d.Rate()*s.Height, 1.5)
		s.Bars = append(s.Bars, bar{X: float64(i) * w, Y: s.Height - h, W: max(w-1, 1), H: h, Class: "rate",
			Title: fmt.Sprintf("%s: %d/%d succeeded", d.Day.Format("2006-01-02"), d.Succeeded, d.Total)})
	}
	if total == 0 {
		s.Label = fmt.Sprintf("No outcomes in the last %d days", len(days))
	} else {
		s.Label = fmt.Sprintf("Success over the last %d days: %d of %d outcomes (%s) on %d day(s) with outcomes",
			len(days), ok, total, pct0(float64(ok)/float64(total)), len(s.Bars))
	}
	return s
}
