// Package all links every storage backend into a program: importing it
// registers SQLite (and the ephemeral "memory" store) and PostgreSQL with
// store.Open. The kaizen command imports it; programs that only talk to a
// daemon (package client, the hooks) do not, and link no database driver.
package all

import (
	_ "github.com/kaizenhq/kaizen/store/postgres" // registers "postgres"
	_ "github.com/kaizenhq/kaizen/store/sqlite"   // registers "sqlite" and "memory"
)
