package learning

// Credit assignment: how the outcome of a task that used several patterns
// is shared among them (context.credit). Every rule is one step of
// expectation-maximisation under a model of how the patterns' own success
// rates make the task's outcome, taken from the rates estimated with the
// previous credits (equal credit first); context.credit_iterations steps
// are taken.

// Values of ContextConfig.Credit.
const (
	// CreditEqual gives every pattern of a task the whole outcome.
	CreditEqual = "equal"
	// CreditBlame (the mixture model: the outcome came from one of the
	// task's patterns) shares an outcome among the patterns by each one's
	// likelihood of that result, scaled so that the outcome carries as
	// much evidence in all as under equal credit.
	CreditBlame = "blame"
	// CreditAnd is the noisy-AND model: a task succeeds when every one of
	// its patterns works. A success is a success of each pattern; a
	// failure is, for each pattern, a failure with the probability that
	// this pattern is among those that failed, (1 − p_i) / (1 − Π p_j),
	// and a success otherwise. A good pattern used with a bad one thus
	// takes almost none of the blame the bad one earns, and the bad one
	// takes almost all of it.
	CreditAnd = "and"
	// CreditResidual is the additive ("leave partners out") model: a
	// task's success rate is the mean of its K patterns' rates, so
	// K·outcome − Σ_{j≠i} p_j estimates pattern i's own rate without its
	// partners' share; clipped to [0, 1], it is i's success weight (one
	// use each).
	CreditResidual = "residual"
)

// Credits lists the valid context.credit values.
var Credits = []string{CreditBlame, CreditEqual, CreditAnd, CreditResidual, CreditJoint}

// creditFromRates computes sc.credit (and, for "and", sc.creditS) from
// the evidence ev of the previous step: each pattern's rate for this task
// (its overall rate shrunk toward the similar tasks' with strength kappa).
func (sc *evidenceScratch) creditFromRates(rule string, events []ContextEvent, pats [][]int, ev []evidence, kappa float64) {
	rate := growTo(sc.rate, len(ev))
	sc.rate = rate
	for i := range rate {
		rate[i] = (ev[i].s + 1) / (ev[i].n + 2)
		if ev[i].ln > 0 {
			m := rate[i]
			rate[i] = (kappa*m + ev[i].ls) / (kappa + ev[i].ln)
		}
	}
	credit := sc.credit[:0]
	creditS := sc.creditS[:0]
	for k, ps := range pats {
		success := events[k].Success
		if len(ps) < 2 {
			for range ps {
				credit = append(credit, 1)
				if rule == CreditAnd || rule == CreditResidual {
					creditS = append(creditS, b2f(success))
				}
			}
			continue
		}
		switch rule {
		case CreditAnd:
			all := 1.0
			for _, j := range ps {
				all *= rate[j]
			}
			for _, i := range ps {
				credit = append(credit, 1)
				switch {
				case success:
					creditS = append(creditS, 1)
				case all >= 1 || rate[i] <= 0:
					creditS = append(creditS, 0)
				default:
					// P(i worked | the task failed) = p_i (1 − Π_{j≠i} p_j) / (1 − Π p_j).
					others := all / rate[i]
					creditS = append(creditS, rate[i]*(1-others)/(1-all))
				}
			}
		case CreditResidual:
			sum := 0.0
			for _, j := range ps {
				sum += rate[j]
			}
			y := float64(len(ps)) * b2f(success)
			for _, i := range ps {
				credit = append(credit, 1)
				creditS = append(creditS, min(max(y-(sum-rate[i]), 0), 1))
			}
		default: // CreditBlame
			sum := 0.0
			for _, j := range ps {
				if success {
					sum += rate[j]
				} else {
					sum += 1 - rate[j]
				}
			}
			for _, i := range ps {
				if sum <= 0 {
					credit = append(credit, 1)
					continue
				}
				lik := 1 - rate[i]
				if success {
					lik = rate[i]
				}
				credit = append(credit, float64(len(ps))*lik/sum)
			}
		}
	}
	sc.credit = credit
	sc.creditS = creditS
	sc.creditStart = sc.creditStart[:0] // the pattern counts may differ from the last request's
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
