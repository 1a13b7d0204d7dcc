package net

import (
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// acceptor is Kafka's Acceptor: one goroutine per listener accepting
// connections and handing them round-robin to its processors. Like Kafka's
// it waits in its own poller (an epoll set holding a duplicate of the
// listening descriptor and an eventfd for stop), because a Go listener's
// RawConn cannot wait for readability.
type acceptor struct {
	r    *Reactor
	ln   stdnet.Listener
	lfd  int // duplicate of the listener's descriptor, non-blocking
	epfd int
	wake *wakeup
	name string
	next int // REQUIRES procMu for reads of procs; touched by run only

	procMu sync.Mutex
	procs  []*processor // REQUIRES procMu; replaced, never changed in place
	rate   *tokenBucket // this listener's max.connection.creation.rate

	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}
	retry    chan struct{} // the processor list changed
}

func newAcceptor(r *Reactor, ln stdnet.Listener, raw syscall.RawConn, procs []*processor) (*acceptor, error) {
	a := &acceptor{
		r: r, ln: ln, name: ln.Addr().String(), procs: procs, lfd: -1, epfd: -1,
		stopCh: make(chan struct{}), done: make(chan struct{}), retry: make(chan struct{}, 1),
	}
	a.rate = newTokenBucket(r.cfg.ListenerMaxConnectionCreationRate[a.name])
	var derr error
	if err := raw.Control(func(fd uintptr) {
		a.lfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil || derr != nil {
		return nil, fmt.Errorf("acceptor %s: dup listener: %w", a.name, errors.Join(err, derr))
	}
	if err := a.openPoller(); err != nil {
		a.closeFDs()
		return nil, fmt.Errorf("acceptor %s: %w", a.name, err)
	}
	return a, nil
}

// openPoller creates the epoll set with the listener and the stop eventfd.
func (a *acceptor) openPoller() error {
	var err error
	if a.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	if a.wake, err = newWakeup(); err != nil {
		return err
	}
	for id, fd := range map[uint64]int{0: a.wake.fd, 1: a.lfd} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN}
		setEventID(&ev, id)
		if err := unix.EpollCtl(a.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	return nil
}

// closeFDs releases the acceptor's descriptors.
func (a *acceptor) closeFDs() {
	if a.lfd >= 0 {
		unix.Close(a.lfd)
	}
	if a.epfd >= 0 {
		unix.Close(a.epfd)
	}
	if a.wake != nil {
		a.wake.close()
	}
}

// stop makes run return, closing the listener, and waits for it.
func (a *acceptor) stop() {
	a.stopOnce.Do(func() {
		close(a.stopCh)
		a.wake.signal()
	})
	<-a.done
}

func (a *acceptor) stopped() bool {
	select {
	case <-a.stopCh:
		return true
	default:
		return false
	}
}

// run accepts until stop or a listener failure.
func (a *acceptor) run() error {
	defer close(a.done)
	defer a.ln.Close()
	defer a.closeFDs()
	var backoff time.Duration
	for {
		fd, sa, err := a.accept()
		if a.stopped() {
			if err == nil {
				unix.Close(fd)
			}
			return ErrServerClosed
		}
		if err != nil {
			if backoff, err = a.retryDelay(err, backoff); err != nil {
				return err
			}
			continue
		}
		backoff = 0
		if !a.hand(fd, sa) {
			return ErrServerClosed
		}
	}
}

// accept waits for a connection and accepts it as a non-blocking
// descriptor. After stop it returns errStopped.
func (a *acceptor) accept() (int, unix.Sockaddr, error) {
	var events [2]unix.EpollEvent
	for !a.stopped() {
		nfd, sa, err := unix.Accept4(a.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != unix.EAGAIN && err != unix.EINTR {
			return nfd, sa, err
		}
		if err == unix.EAGAIN {
			_, err := unix.EpollWait(a.epfd, events[:], -1)
			if err != nil && err != unix.EINTR {
				return -1, nil, fmt.Errorf("epoll_wait: %w", err)
			}
		}
	}
	return -1, nil, errStopped
}

var errStopped = errors.New("acceptor stopped")

// retryDelay sleeps after a failed accept that may succeed later (out of
// descriptors, a connection aborted before it was accepted) and returns the
// next delay; other errors end the acceptor.
func (a *acceptor) retryDelay(err error, backoff time.Duration) (time.Duration, error) {
	switch {
	case errors.Is(err, unix.ECONNABORTED), errors.Is(err, unix.EPROTO):
		return backoff, nil
	case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE),
		errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.ENOMEM):
		backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
		select {
		case <-time.After(backoff):
		case <-a.stopCh:
		}
		return backoff, nil
	}
	return backoff, &stdnet.OpError{Op: "accept", Net: a.ln.Addr().Network(), Addr: a.ln.Addr(), Err: err}
}

// hand configures an accepted socket and queues it on a processor. It
// returns false when the acceptor is stopping.
//
// As Kafka's ConnectionQuotas.inc, it first waits for the connection
// creation rates (KIP-612: the acceptor is delayed, the connection is not
// refused), then checks the per-IP and broker-wide connection limits, which
// close the connection at once.
func (a *acceptor) hand(fd int, sa unix.Sockaddr) bool {
	st := &a.r.stats
	st.accepted.Add(1)
	if !countThrottle(st, a.rate, a.r.connRate, a.stopCh) {
		unix.Close(fd)
		return false
	}
	ip := sockaddrIP(sa)
	if !a.r.quotas.inc(ip) {
		rejectPerIP(st, a.r.cfg.Logger, a.name, ip)
		unix.Close(fd)
		return true
	}
	if a.r.quotas.overMax(st.connections.Load()) {
		st.rejected.Add(1)
		a.r.quotas.dec(ip)
		unix.Close(fd)
		return true
	}
	configureSocket(fd, sa, a.r.cfg)
	st.connections.Add(1)
	c := &rconn{
		id: a.r.nextConnID.Add(1), fd: fd, ip: ip, dec: a.r.newDecoder(),
		info: ConnInfo{Listener: a.name, Remote: sockaddrToAddr(sa), State: new(ConnState)},
	}
	c.info.ID = c.id
	if a.assign(c) {
		return true
	}
	unix.Close(fd)
	a.r.quotas.dec(ip)
	st.connections.Add(-1)
	st.closed.Add(1)
	return false
}

// countThrottle waits for the creation rates and counts the wait; false
// means stop closed first.
func countThrottle(st *counters, listener, broker *tokenBucket, stop <-chan struct{}) bool {
	d, ok := throttle(listener, broker, stop)
	if d > 0 {
		st.acceptThrottles.Add(1)
		st.acceptThrottleNs.Add(int64(d))
	}
	return ok
}

// rejectPerIP counts and logs a connection refused by max.connections.per.ip.
func rejectPerIP(st *counters, log *slog.Logger, listener string, ip netip.Addr) {
	st.rejectedPerIP.Add(1)
	log.Debug("connection closed: max.connections.per.ip reached", "listener", listener, "ip", ip)
}

// assign queues c on the next processor with room, round-robin; when all
// queues are full it waits on the next one, as Kafka's Acceptor does. A
// processor removed meanwhile (num.network.threads shrank) is skipped.
func (a *acceptor) assign(c *rconn) bool {
	for {
		procs := a.processors()
		n := len(procs)
		for i := range n {
			p := procs[(a.next+i)%n]
			if p.retiring.Load() {
				continue
			}
			select {
			case p.newConns <- c:
				a.next = (a.next + i + 1) % n
				p.notify()
				return true
			default:
			}
		}
		var ch chan *rconn // nil while every listed processor retires: wait for a retry
		p := procs[a.next%n]
		for i := range n {
			if q := procs[(a.next+i)%n]; !q.retiring.Load() {
				p, ch = q, q.newConns
				a.next = (a.next + i + 1) % n
				break
			}
		}
		select {
		case ch <- c:
			p.notify()
			return true
		case <-p.done:
		case <-a.retry:
		case <-a.stopCh:
			return false
		}
	}
}

// processors is the acceptor's processor list now.
func (a *acceptor) processors() []*processor {
	a.procMu.Lock()
	defer a.procMu.Unlock()
	return a.procs
}

// addProcessors gives the acceptor more processors, as Kafka's
// Acceptor.addProcessors: they take new connections from now on.
func (a *acceptor) addProcessors(ps []*processor) {
	a.procMu.Lock()
	a.procs = append(slices.Clip(a.procs), ps...)
	a.procMu.Unlock()
	a.signalRetry()
}

// removeProcessors takes the last k processors (keeping at least one)
// out of the rotation and returns them, as Kafka's
// Acceptor.removeProcessors.
func (a *acceptor) removeProcessors(k int) []*processor {
	a.procMu.Lock()
	k = min(k, len(a.procs)-1)
	out := a.procs[len(a.procs)-k:]
	a.procs = slices.Clone(a.procs[:len(a.procs)-k])
	a.procMu.Unlock()
	for _, p := range out {
		p.retiring.Store(true)
	}
	a.signalRetry()
	return out
}

// signalRetry makes an assign waiting on a full queue look again.
func (a *acceptor) signalRetry() {
	select {
	case a.retry <- struct{}{}:
	default:
	}
}

// configureSocket applies Kafka's socket settings: TCP_NODELAY (Kafka
// always sets it) and the configured buffer sizes. Failures are ignored: the
// connection still works with the OS defaults.
func configureSocket(fd int, sa unix.Sockaddr, cfg Config) {
	switch sa.(type) {
	case *unix.SockaddrInet4, *unix.SockaddrInet6:
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	if cfg.SocketSendBufferBytes > 0 {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, cfg.SocketSendBufferBytes)
	}
	if cfg.SocketReceiveBufferBytes > 0 {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, cfg.SocketReceiveBufferBytes)
	}
}

// sockaddrToAddr converts an accepted peer address.
func sockaddrToAddr(sa unix.Sockaddr) stdnet.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &stdnet.TCPAddr{IP: append(stdnet.IP(nil), sa.Addr[:]...), Port: sa.Port}
	case *unix.SockaddrInet6:
		return &stdnet.TCPAddr{IP: append(stdnet.IP(nil), sa.Addr[:]...), Port: sa.Port}
	case *unix.SockaddrUnix:
		return &stdnet.UnixAddr{Name: sa.Name, Net: "unix"}
	}
	return nil
}
