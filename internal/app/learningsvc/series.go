package learningsvc

import (
	"context"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// DayCount is one UTC day of outcomes.
type DayCount struct {
	Day       time.Time `json:"day"`
	Total     int       `json:"total"`
	Succeeded int       `json:"succeeded"`
}

// maxSeriesOutcomes bounds the outcomes OutcomeSeries reads.
const maxSeriesOutcomes = 50_000

// OutcomeSeries counts the outcomes that finished on each of the last
// days UTC days (today included), and how many succeeded. capped reports
// that the window held more than 50,000 outcomes and only the newest were
// counted.
func (s *Service) OutcomeSeries(ctx context.Context, project string, days int) (series []DayCount, capped bool, err error) {
	const op = "outcome series"
	project, err = s.env.ResolveProject(op, project)
	if err != nil {
		return nil, false, err
	}
	if days < 1 || days > 3660 {
		return nil, false, app.Invalid(op, "days", "must be between 1 and 3660, got %d", days)
	}
	now := s.env.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	first := today.AddDate(0, 0, -(days - 1))
	series = make([]DayCount, days)
	for i := range series {
		series[i].Day = first.AddDate(0, 0, i)
	}
	// A task finishes before it is recorded, so every outcome that finished
	// in the window was recorded in it.
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		for read := 0; ; {
			page, err := tx.ListOutcomes(ctx, project, store.OutcomeFilter{Since: first, Limit: 1000, Offset: read})
			if err != nil {
				return err
			}
			for _, o := range page {
				i := int(o.Timestamp.UTC().Sub(first) / (24 * time.Hour))
				if o.Timestamp.Before(first) || i >= days {
					continue
				}
				series[i].Total++
				if o.Success {
					series[i].Succeeded++
				}
			}
			read += len(page)
			if len(page) < 1000 {
				return nil
			}
			if read >= maxSeriesOutcomes {
				capped = true
				return nil
			}
		}
	})
	return series, capped, err
}
