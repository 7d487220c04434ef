package app

import "time"

// DuplicateWindow is how close in time two deliveries of one event (same
// event id) must be to count as one: a hook retried, or installed in two
// scopes so that the client runs it twice. The same event id further apart
// is a new event (a user typing the same prompt again a minute later).
const DuplicateWindow = 10 * time.Second
