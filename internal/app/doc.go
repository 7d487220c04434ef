// Package app holds what every subsystem service shares: the environment a
// service runs in ([Env]: the store, the clock, the logger, the default
// project), the engine's error type ([Error], rendered alike by every
// surface), input validation and paging.
//
// Each subsystem has one service package beside this one
// (internal/app/learningsvc, experiencesvc, exploresvc, …) holding its
// transactions and orchestration; the pure algorithms live in the
// top-level packages (learning, experience, explore, …) and the facade in
// the root package kaizen delegates to the services in one line per action.
package app
