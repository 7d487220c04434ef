package teamsvc

// SetBeforeSleep has f called each time a waiter of s is about to sleep.
func SetBeforeSleep(s *Service, f func()) { s.beforeSleep = f }

// ListenerUp reports whether s listens to the other processes' changes.
func ListenerUp(s *Service) bool { return s.remote != nil && s.remote.up.Load() }
