//go:build unix

package teamsvc

import (
	"os/exec"
	"syscall"
	"time"
)

// groupKill starts cmd in its own process group; cancelling its context
// sends SIGTERM to the whole group, and Go kills the leader after grace.
func groupKill(cmd *exec.Cmd, grace time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = grace
}

// killGroup kills what is left of the group (children that ignored
// SIGTERM or outlived the leader).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
