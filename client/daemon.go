package client

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Files of a running daemon in its home.
const (
	// RunDir holds the socket; it is closed to other users (0700).
	RunDir = "run"
	// SocketName is the daemon's Unix socket in RunDir.
	SocketName = "kaizen.sock"
	// LockFile is held (an advisory lock) by the daemon of the home for as
	// long as it runs: one home has one daemon.
	LockFile = "serve.lock"
)

// SocketPath is the Unix socket of the daemon of home.
func SocketPath(home string) string {
	abs, err := filepath.Abs(home)
	if err != nil {
		abs = home
	}
	return filepath.Join(abs, RunDir, SocketName)
}

// ErrLocked: another daemon serves the home.
var ErrLocked = errors.New("another kaizen daemon serves this home")

// LockHome takes the home's daemon lock without waiting: ErrLocked (with
// the other daemon's pid when serve.json names it) when another process
// holds it. The lock goes away with the process, so a killed daemon
// leaves none behind; the returned function releases it.
func LockHome(home string) (func(), error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(home, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", LockFile, err)
	}
	if !ok {
		f.Close()
		if info, err := ReadServeInfo(home); err == nil && info.PID > 0 {
			return nil, fmt.Errorf("%w (pid %d, %s)", ErrLocked, info.PID, info.Addr)
		}
		return nil, ErrLocked
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { unlock(f); f.Close() }, nil
}

// HomeLocked reports whether a daemon holds the home's lock (a live
// daemon, whatever serve.json says).
func HomeLocked(home string) bool {
	f, err := os.OpenFile(filepath.Join(home, LockFile), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := tryLock(f)
	if err != nil {
		return false
	}
	if ok {
		unlock(f)
		return false
	}
	return true
}

// ListenSocket listens on the home's Unix socket for the daemon that holds
// the home's lock: the run directory is made private (0700), a socket left
// by a dead daemon is removed, and the socket is made owner-only (0600).
func ListenSocket(home string) (net.Listener, error) {
	path := SocketPath(home)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket: move it away", path)
		}
		if err := os.Remove(path); err != nil { // stale: the lock says no daemon runs
			return nil, err
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// checkSocket verifies that path is a Unix socket owned by this user in a
// directory owned by this user, neither open to others.
func checkSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s is not a socket", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %v): not kaizen's", path, fi.Mode().Perm())
	}
	di, err := os.Lstat(filepath.Dir(path))
	if err != nil {
		return err
	}
	if !di.IsDir() || di.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %v): not kaizen's", filepath.Dir(path), di.Mode().Perm())
	}
	for _, f := range []fs.FileInfo{fi, di} {
		if uid, ok := ownerOf(f); ok && uid != os.Getuid() {
			return fmt.Errorf("%s belongs to user %d, not to this user (%d): not kaizen's", path, uid, os.Getuid())
		}
	}
	return nil
}

// describePeer names a peer for errors.
func describePeer(pid, uid int) string {
	return strings.Join([]string{"pid " + strconv.Itoa(pid), "uid " + strconv.Itoa(uid)}, ", ")
}
