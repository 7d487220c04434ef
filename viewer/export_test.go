package viewer

// OpenStreams is the number of open event streams, for tests.
func (v *Viewer) OpenStreams() int { return v.hub.streams() }

// Pollers is the number of running change pollers, for tests.
func (v *Viewer) Pollers() int { return v.hub.pollers() }

// SetBeforePoll sets a function every change poller runs before each
// reading (tests); set it before the first stream opens.
func (v *Viewer) SetBeforePoll(f func()) { v.hub.beforeRead = f }
