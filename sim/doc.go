// Package sim measures how well kaizen's learning guides planning: it runs
// simulated agents in worlds where decomposition strategies have hidden,
// task-dependent and drifting success rates, and compares policies that
// plan on the same task sequence with the same random draws.
//
// A world (World, defined in TOML; shipped worlds are embedded from
// sim/worlds) lists the strategies, the task families with realistic task
// descriptions, the hidden success rate of every (family, strategy), the
// number of strategies a task uses and how their rates combine, task
// noise, the duration, error and retry models that follow success, drift
// events and the simulated time between tasks.
//
// Policies (Policy) choose the strategies of each task: random, an oracle
// that knows the hidden rates, Beta-Bernoulli Thompson bandits (global and
// per task family), and kaizen itself through the real engine
// (kaizen.Open on a throwaway store, the engine's clock set to the
// simulated time, PlanGuidance before every task and RecordOutcome after
// it). Run executes every policy on every seed, in parallel, and returns a
// Report: success overall, by phase and by window, the share of the
// oracle, cumulative expected regret and the tasks needed to recover after
// each drift, averaged over seeds with their range. The report renders as
// a table (WriteTable), JSON, and an SVG chart (WriteSVG).
//
// See docs/sim.md for the worlds, the policies and the metrics.
package sim
