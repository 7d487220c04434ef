package viewer

import (
	"strconv"
	"testing"
)

func TestParseVisit(t *testing.T) {
	for _, c := range []struct {
		in           string
		prev, latest int64
	}{
		{"0.1700000000", 0, 1700000000}, {"1600000000.1700000000", 1600000000, 1700000000},
		{"5.5", 5, 5}, {"6.5", 0, 0}, {"-1.5", 0, 0}, {"1.-5", 0, 0}, {"", 0, 0}, {"17", 0, 0},
		{"a.b", 0, 0}, {"1.2.3", 0, 0}, {"99999999999999999999.1", 0, 0},
	} {
		p, l := parseVisit(c.in)
		if p != c.prev || l != c.latest {
			t.Errorf("parseVisit(%q) = %d, %d; want %d, %d", c.in, p, l, c.prev, c.latest)
		}
	}
}

// FuzzParseVisit: any cookie value reads as no visit or as a valid pair
// that formats back to itself, never a panic.
func FuzzParseVisit(f *testing.F) {
	for _, s := range []string{"0.1700000000", "1.2", "", ".", "-1.0", "x.y", "1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, l := parseVisit(s)
		if p < 0 || l < 0 || p > l {
			t.Fatalf("parseVisit(%q) = %d, %d", s, p, l)
		}
		if p2, l2 := parseVisit(strconv.FormatInt(p, 10) + "." + strconv.FormatInt(l, 10)); (p != 0 || l != 0) && (p2 != p || l2 != l) {
			t.Fatalf("parseVisit(%q) = %d, %d does not round-trip: %d, %d", s, p, l, p2, l2)
		}
	})
}
