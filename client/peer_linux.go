//go:build linux

package client

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkPeer verifies the process at the other end of a Unix socket: this
// user's, and the daemon serve.json names (its pid).
func checkPeer(conn net.Conn, pid int) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a Unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() || (pid > 0 && int(cred.Pid) != pid) {
		return fmt.Errorf("the socket's server (%s) is not the daemon recorded in serve.json (pid %d) of this user", describePeer(int(cred.Pid), int(cred.Uid)), pid)
	}
	return nil
}
