package net

import "fmt"

// Thread pools resized on a running server (Kafka's DynamicThreadPool,
// KIP-226): num.io.threads sizes the request channel's handlers, and
// num.network.threads each listener's processors.

// SetIOThreads changes num.io.threads (Kafka's
// KafkaRequestHandlerPool.resizeThreadPool): new handlers start at once;
// extra ones exit after the request they are serving, so no request is
// lost or served twice. n below 1 counts as 1.
func (r *Reactor) SetIOThreads(n int) { r.reqs.resize(n) }

// SetNetworkThreads changes num.network.threads for every listener, as
// Kafka's SocketServer.resizeProcessorCount. New processors take new
// connections from the acceptors at once. A removed processor takes no
// new connection and stops reading; its connections close, each after
// the response to its request in flight is written (Kafka closes them;
// clients reconnect). n below 1 counts as 1.
func (r *Reactor) SetNetworkThreads(n int) error {
	n = max(n, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.closed {
		return ErrServerClosed
	}
	old := r.networkThreadsLocked()
	r.mu.netThreads = n
	for _, a := range r.mu.acceptors {
		if n > old {
			procs, err := r.addProcessors(n - old)
			if err != nil {
				r.mu.netThreads = old
				return fmt.Errorf("net: num.network.threads %d: %w", n, err)
			}
			r.mu.procs = append(r.mu.procs, procs...)
			r.runProcessors(procs)
			a.addProcessors(procs)
		} else if n < old {
			r.retire(a.removeProcessors(old - n))
		}
	}
	return nil
}

// retire moves removed processors from procs to retired and wakes them
// to start draining. REQUIRES: r.mu held.
func (r *Reactor) retire(gone []*processor) {
	var keep []*processor
	for _, p := range r.mu.procs {
		if !p.retiring.Load() {
			keep = append(keep, p)
		}
	}
	r.mu.procs = keep
	var still []*processor
	for _, p := range r.mu.retired {
		if !p.exited.Load() {
			still = append(still, p)
		}
	}
	r.mu.retired = append(still, gone...)
	for _, p := range gone {
		p.notify()
	}
}

// networkThreads is num.network.threads in force.
func (r *Reactor) networkThreads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.networkThreadsLocked()
}

// networkThreadsLocked is networkThreads. REQUIRES: r.mu held.
func (r *Reactor) networkThreadsLocked() int {
	if r.mu.netThreads == 0 {
		return r.cfg.NumNetworkThreads
	}
	return r.mu.netThreads
}
