//go:build !linux

package client

import "net"

// checkPeer relies on the socket's ownership and mode where the peer's
// credentials cannot be read portably.
func checkPeer(net.Conn, int) error { return nil }
