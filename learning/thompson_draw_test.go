package learning

import (
	"math"
	"testing"
)

// TestQuantileFineInverts: quantileFine inverts the CDF to about 1e-12
// relative, in the bulk and far in both tails (the draws of RecommendSet
// close to 1 are quantiles of the flipped posterior far in its lower tail).
func TestQuantileFineInverts(t *testing.T) {
	shapes := []float64{0.05, 0.3, 1, 2.5, 10, 80}
	for _, a := range shapes {
		for _, b := range shapes {
			d := Beta{Alpha: a, Beta: b}
			for _, p := range []float64{1e-14, 1e-9, 1e-6, 1e-4, 1e-3, 0.02, 0.3, 0.5, 0.8, 0.99} {
				q := d.quantileFine(p)
				if !(q > 0 && q < 1) {
					continue // below the smallest float or rounds to 1
				}
				// |F(q) − p| within what a relative error of 1e-11 in q allows
				dens := math.Exp((a-1)*math.Log(q) + (b-1)*math.Log1p(-q) - lbeta(a, b))
				tol := dens*q*1e-11 + p*1e-11 + 1e-300
				if got := d.CDF(q); math.Abs(got-p) > tol {
					t.Errorf("Beta(%v, %v): quantileFine(%v) = %v, whose CDF is %v (off by %.3g, tolerance %.3g)", a, b, p, q, got, math.Abs(got-p), tol)
				}
			}
		}
	}
}

// TestCDFBound: cdfBound is never below the CDF.
func TestCDFBound(t *testing.T) {
	shapes := []float64{0.05, 0.3, 1, 2.5, 10, 80}
	for _, a := range shapes {
		for _, b := range shapes {
			d := Beta{Alpha: a, Beta: b}
			lnorm := math.Log(a) + lbeta(a, b)
			for _, x := range []float64{1e-12, 1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.999} {
				if bound, exact := cdfBound(d, lnorm, math.Log(x), math.Log1p(-x)), d.CDF(x); bound < exact {
					t.Errorf("Beta(%v, %v) at %v: bound %v below the CDF %v", a, b, x, bound, exact)
				}
			}
		}
	}
}
