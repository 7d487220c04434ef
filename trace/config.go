package trace

// Config holds every setting of the failure-learning system, grouped by
// mechanism. Zero values are not defaults: start from DefaultConfig.
type Config struct {
	Grouping GroupConfig    `toml:"grouping" json:"grouping"`
	Assembly AssemblyConfig `toml:"assembly" json:"assembly"`
	Review   ReviewConfig   `toml:"review" json:"review"`
	Check    CheckConfig    `toml:"check" json:"check"`
	Verify   VerifyConfig   `toml:"verify" json:"verify"`
	Schedule ScheduleConfig `toml:"schedule" json:"schedule"`
}

// DefaultConfig returns the seed's defaults (max 3 corrections) and this
// package's documented defaults for the rest.
func DefaultConfig() Config {
	return Config{
		Grouping: DefaultGroupConfig(),
		Assembly: DefaultAssemblyConfig(),
		Review:   DefaultReviewConfig(),
		Check:    DefaultCheckConfig(),
		Verify:   DefaultVerifyConfig(),
		Schedule: DefaultScheduleConfig(),
	}
}

// Validate checks every section.
func (c Config) Validate() error {
	for _, v := range []interface{ Validate() error }{c.Grouping, c.Assembly, c.Review, c.Check, c.Verify, c.Schedule} {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}
