//go:build !unix

package teamsvc

import (
	"os/exec"
	"time"
)

func groupKill(cmd *exec.Cmd, grace time.Duration) { cmd.WaitDelay = grace }

func killGroup(*exec.Cmd) {}
