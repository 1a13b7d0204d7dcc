package net

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// wakeup is an eventfd a processor watches in its epoll set, so other
// goroutines (handlers delivering responses, the acceptor handing over
// connections, Shutdown) can interrupt its epoll_wait: Kafka's
// Selector.wakeup.
type wakeup struct {
	fd int
}

func newWakeup() (*wakeup, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &wakeup{fd: fd}, nil
}

// signal adds 1 to the counter. EAGAIN (counter saturated) means a wake-up
// is pending anyway.
func (w *wakeup) signal() {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	for {
		_, err := unix.Write(w.fd, b[:])
		if err != unix.EINTR {
			return
		}
	}
}

// drain resets the counter.
func (w *wakeup) drain() {
	var b [8]byte
	for {
		_, err := unix.Read(w.fd, b[:])
		if err != unix.EINTR {
			return
		}
	}
}

func (w *wakeup) close() error {
	return unix.Close(w.fd)
}
