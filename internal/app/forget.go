package app

// ForgetInput names one record a user asks kaizen to forget (delete): its
// project and its id. Every forget action of every service takes it.
type ForgetInput struct {
	Project string `json:"project,omitempty"`
	// ID is the record's id (for a skill: its id or its name).
	ID string `json:"id"`
}
