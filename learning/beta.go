package learning

import "math"

// Beta is a Beta(α, β) distribution: the posterior of a success rate after
// α−1 successes and β−1 failures from a uniform prior (soft, decayed
// counts are allowed).
type Beta struct {
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
}

// Mean is α / (α + β).
func (b Beta) Mean() float64 { return b.Alpha / (b.Alpha + b.Beta) }

// Evidence is α + β, the weight of the distribution in observations.
func (b Beta) Evidence() float64 { return b.Alpha + b.Beta }

// CDF is the regularized incomplete beta function I_x(α, β).
func (b Beta) CDF(x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	a, c := b.Alpha, b.Beta
	lbeta, _ := math.Lgamma(a + c)
	la, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(c)
	front := math.Exp(lbeta - la - lc + a*math.Log(x) + c*math.Log1p(-x))
	// The continued fraction converges fast for x < (a+1)/(a+c+2); use the
	// symmetry I_x(a, c) = 1 − I_{1−x}(c, a) otherwise.
	if x < (a+1)/(a+c+2) {
		return front * betaCF(a, c, x) / a
	}
	return 1 - front*betaCF(c, a, 1-x)/c
}

// betaCF evaluates the continued fraction of the incomplete beta function
// (modified Lentz's method).
func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-14
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// Quantile is the p-quantile of the distribution (by bisection on the CDF,
// to 1e-6).
func (b Beta) Quantile(p float64) float64 {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if b.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// UpperBound bounds the p-quantile from above for p in (0.5, 1) without
// computing it (Cantelli's inequality: P(X ≥ μ + kσ) ≤ 1/(1+k²), so the
// p-quantile is at most μ + σ·√(p/(1−p))). It lets a ranking skip the
// exact quantile of the many patterns that are clearly out of the running.
func (b Beta) UpperBound(p float64) float64 {
	n := b.Alpha + b.Beta
	sd := math.Sqrt(b.Alpha * b.Beta / (n * n * (n + 1)))
	return min(1, b.Mean()+sd*math.Sqrt(p/(1-p)))
}

// Interval95 is the central 95 % credible interval.
func (b Beta) Interval95() [2]float64 {
	return [2]float64{round4(b.Quantile(0.025)), round4(b.Quantile(0.975))}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Sample draws from the distribution with the generator r (Marsaglia and
// Tsang's gamma method: X/(X+Y) with X ~ Γ(α), Y ~ Γ(β)).
func (b Beta) Sample(r *Rand) float64 {
	x, y := r.gamma(b.Alpha), r.gamma(b.Beta)
	if x+y == 0 {
		return b.Mean()
	}
	return x / (x + y)
}

// Rand is a small deterministic random generator (SplitMix64), so that the
// pure learning package can sample without a hidden global source: the
// same seed gives the same draws.
type Rand struct {
	state uint64
	// spare is the second normal number of the last pair drawn.
	spare    float64
	hasSpare bool
}

// NewRand returns a generator seeded with seed.
func NewRand(seed uint64) *Rand { return &Rand{state: seed} }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float64 returns a uniform number in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// norm returns a standard normal number (Marsaglia's polar method: a
// point uniform in the unit disc gives two normals with one logarithm and
// one square root, no trigonometry; the second is kept for the next call).
func (r *Rand) norm() float64 {
	if r.hasSpare {
		r.hasSpare = false
		return r.spare
	}
	for {
		u, v := 2*r.Float64()-1, 2*r.Float64()-1
		s := u*u + v*v
		if s >= 1 || s == 0 {
			continue
		}
		f := math.Sqrt(-2 * math.Log(s) / s)
		r.spare, r.hasSpare = v*f, true
		return u * f
	}
}

// gamma returns a Γ(shape, 1) number.
func (r *Rand) gamma(shape float64) float64 {
	if shape <= 0 {
		return 0
	}
	if shape < 1 { // boost: Γ(a) = Γ(a+1)·U^(1/a)
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return r.gamma(shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.norm()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
