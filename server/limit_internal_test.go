package server

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands out in-memory connections pushed by the test.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// Finding 4 of issue 12: 5,000 held connections held 5,000 descriptors. The
// limit listener accepts no more than its cap until one closes.
func TestSecurityConnectionCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &pipeListener{conns: make(chan net.Conn, 10), closed: make(chan struct{})}
		ln := LimitListener(inner, 2)
		for range 5 {
			a, b := net.Pipe()
			defer b.Close()
			inner.conns <- a
		}
		var accepted atomic.Int64
		got := make(chan net.Conn, 5)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				got <- c
			}
		}()
		synctest.Wait()
		if n := accepted.Load(); n != 2 {
			t.Fatalf("accepted %d connections with a cap of 2", n)
		}
		c := <-got
		c.Close()
		c.Close() // a second close releases nothing more
		synctest.Wait()
		if n := accepted.Load(); n != 3 {
			t.Fatalf("after one close: %d accepted, want 3", n)
		}
		ln.Close()
		synctest.Wait()
		if n := accepted.Load(); n != 3 {
			t.Fatalf("after close: %d accepted", n)
		}
		for range 2 {
			(<-got).Close()
		}
	})
}

func TestLoginLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLoginLimiter(3, 10*time.Second, nil)
		for i := range 3 {
			if ok, _ := l.allow("10.0.0.1"); !ok {
				t.Fatalf("attempt %d refused", i+1)
			}
		}
		ok, wait := l.allow("10.0.0.1")
		if ok || wait != 10*time.Second {
			t.Fatalf("4th attempt: %v, wait %s", ok, wait)
		}
		if ok, _ := l.allow("10.0.0.2"); !ok {
			t.Fatal("another client is limited too")
		}
		time.Sleep(5 * time.Second)
		if ok, wait := l.allow("10.0.0.1"); ok || wait != 5*time.Second {
			t.Fatalf("after 5s: %v %s", ok, wait)
		}
		time.Sleep(5 * time.Second)
		if ok, _ := l.allow("10.0.0.1"); !ok {
			t.Fatal("no attempt after the refill period")
		}
		if ok, _ := l.allow("10.0.0.1"); ok {
			t.Fatal("refill gave more than one attempt")
		}
		time.Sleep(time.Hour)
		for i := range 3 {
			if ok, _ := l.allow("10.0.0.1"); !ok {
				t.Fatalf("after an hour, attempt %d refused (burst not restored)", i+1)
			}
		}
	})
}

func TestLoginLimiterBoundedMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLoginLimiter(2, time.Second, nil)
		for i := range maxLoginClients + 10 {
			l.allow(net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).String())
		}
		if n := len(l.clients); n > maxLoginClients {
			t.Fatalf("%d clients kept", n)
		}
	})
}
