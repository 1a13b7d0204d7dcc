package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// trial is one fault and what followed it.
type trial struct {
	System, Scenario string
	N                int
	Victim           int32 // the node signalled
	Also             bool  // kill/shutdown-leader: the victim was also the active controller; kill-controller: also the partition leader
	OldEpoch         int32 // the partition's leader epoch (kill-controller: the quorum's) before the fault
	Start            time.Time
	Moved            time.Duration // to a new leader in Metadata (kill-controller: in DescribeQuorum)
	Ack              time.Duration // to the first produce acknowledged by a new leader; -1: none (kill-controller)
	Read             time.Duration // to the first record of a new leader a consumer read; -1 or 0: none
	Exit             time.Duration // shutdown-leader: until the process exited; -1 otherwise
	Err              string        // why the trial has no figure

	ackFrom int // the producer's ack count at Start
}

func (t trial) String() string { return fmt.Sprintf("%s %s #%d", t.System, t.Scenario, t.N) }

// ms is a duration in milliseconds, NaN for a missing one.
func ms(d time.Duration) float64 {
	if d < 0 {
		return math.NaN()
	}
	return float64(d) / 1e6
}

// runner drives the trials of one system.
type runner struct {
	cfg   config
	sys   *system
	pr    *probes
	prod  *producer
	topic string
	log   io.Writer // one line per trial
}

// running are the ids of the nodes whose process runs.
func (r *runner) running() []int32 {
	return slices.DeleteFunc(r.sys.ids(), func(id int32) bool { return !r.sys.nodes[id].Running() })
}

// healthy waits until the partition has a leader and a full ISR, every
// voter of the quorum has caught up, and the producer keeps being
// acknowledged through a settle period.
func (r *runner) healthy(ctx context.Context) error {
	if err := r.complete(ctx); err != nil {
		return err
	}
	t := time.Now()
	select {
	case <-time.After(r.cfg.settle):
	case <-ctx.Done():
		return ctx.Err()
	}
	return r.prod.waitAcks(ctx, t, 1, r.cfg.trialTimeout)
}

// complete waits until the partition has a leader and a full ISR, and
// every voter of the quorum has caught up.
func (r *runner) complete(ctx context.Context) error {
	_, err := until(ctx, r.cfg.trialTimeout, "a full ISR", func(ctx context.Context) (bool, error) {
		st, err := first(ctx, r.running(), r.partitionOf)
		return err == nil && fullISR(st) && st.brokers == len(r.sys.nodes), err
	})
	if err != nil {
		return err
	}
	_, err = until(ctx, r.cfg.trialTimeout, "every voter caught up", r.quorumCaughtUp)
	return err
}

func (r *runner) partitionOf(ctx context.Context, id int32) (partState, error) {
	return r.pr.partition(ctx, id, r.topic)
}

// quorumCaughtUp reports whether DescribeQuorum names a leader and
// every voter's log end is within a few records of the high watermark.
func (r *runner) quorumCaughtUp(ctx context.Context) (bool, error) {
	q, err := first(ctx, r.running(), r.pr.quorum)
	if err != nil || q.leader < 0 || len(q.voters) != len(r.sys.nodes) {
		return false, err
	}
	for _, v := range q.voters {
		if v.LogEndOffset < 0 || v.LogEndOffset < q.hw-10 {
			return false, nil
		}
	}
	return true, nil
}

// leaderMoved polls the survivors' Metadata until one shows a leader
// other than old, and returns when it did.
func (r *runner) leaderMoved(ctx context.Context, old int32) (time.Time, error) {
	return until(ctx, r.cfg.trialTimeout, "a new partition leader in Metadata", func(ctx context.Context) (bool, error) {
		var last error
		for _, id := range r.sys.others(old) {
			st, err := r.partitionOf(ctx, id)
			if err == nil && st.leader >= 0 && st.leader != old {
				return true, nil
			}
			last = err
		}
		return false, last
	})
}

// controllerOf is the active controller's id, -1 if none answers.
func (r *runner) controllerOf(ctx context.Context) int32 {
	q, err := first(ctx, r.running(), r.pr.quorum)
	if err != nil {
		return -1
	}
	return q.leader
}

// dataFault runs one trial of kill-leader or shutdown-leader: signal the
// partition leader's node, wait for a new leader in Metadata and for
// acknowledgements after it, then restart the node.
func (r *runner) dataFault(ctx context.Context, t *trial) error {
	st, err := first(ctx, r.running(), r.partitionOf)
	if err != nil {
		return err
	}
	t.Victim, t.OldEpoch, t.Exit = st.leader, st.epoch, -1
	t.Also = r.controllerOf(ctx) == t.Victim
	n := r.sys.nodes[t.Victim]
	exited := make(chan error, 1)
	t.ackFrom, t.Start = r.prod.count(), time.Now()
	if t.Scenario == scnKill {
		exited <- n.Kill()
	} else {
		go func() { exited <- n.Stop() }()
	}
	moved, err := r.leaderMoved(ctx, t.Victim)
	if err == nil {
		t.Moved = moved.Sub(t.Start)
		// The first acknowledgement by the new leader is found after
		// the run, from the leader epoch of the batch each record is
		// stored in; wait here for a few to be sure it is among them.
		err = r.prod.waitAcks(ctx, moved, 5, r.cfg.trialTimeout)
	}
	if xerr := r.waitExit(exited, t); err == nil {
		err = xerr
	}
	if rerr := r.sys.restart(ctx, t.Victim, r.cfg.trialTimeout); err == nil {
		err = rerr
	}
	return err
}

// waitExit waits for the signalled node's process to be gone and notes
// how long a controlled shutdown took.
func (r *runner) waitExit(exited chan error, t *trial) error {
	select {
	case err := <-exited:
		if t.Scenario == scnTerm {
			t.Exit = time.Since(t.Start)
		}
		return err
	case <-time.After(r.cfg.trialTimeout):
		return fmt.Errorf("node %d still running %v after the signal", t.Victim, r.cfg.trialTimeout)
	}
}

// controllerFault runs one trial of kill-controller: SIGKILL the node
// DescribeQuorum names as leader and wait until a survivor's
// DescribeQuorum names another leader in a later epoch.
func (r *runner) controllerFault(ctx context.Context, t *trial) error {
	q, err := first(ctx, r.running(), r.pr.quorum)
	if err != nil {
		return err
	}
	if q.leader < 0 {
		return fmt.Errorf("no active controller")
	}
	t.Victim, t.OldEpoch, t.Ack, t.Exit = q.leader, q.epoch, -1, -1
	if st, err := first(ctx, r.running(), r.partitionOf); err == nil {
		t.Also = st.leader == t.Victim
	}
	t.Start = time.Now()
	if err := r.sys.nodes[t.Victim].Kill(); err != nil {
		return err
	}
	at, err := until(ctx, r.cfg.trialTimeout, "a new leader in DescribeQuorum", func(ctx context.Context) (bool, error) {
		var last error
		for _, id := range r.sys.others(t.Victim) {
			q, err := r.pr.quorum(ctx, id)
			if err == nil && q.leader >= 0 && q.leader != t.Victim && q.epoch > t.OldEpoch {
				return true, nil
			}
			last = err
		}
		return false, last
	})
	if err == nil {
		t.Moved = at.Sub(t.Start)
	}
	if rerr := r.sys.restart(ctx, t.Victim, r.cfg.trialTimeout); err == nil {
		err = rerr
	}
	return err
}

// one runs trial t after waiting for a healthy cluster.
func (r *runner) one(ctx context.Context, t *trial) error {
	if err := r.healthy(ctx); err != nil {
		return fmt.Errorf("before the trial: %w", err)
	}
	if t.Scenario == scnController {
		return r.controllerFault(ctx, t)
	}
	return r.dataFault(ctx, t)
}

// firstNewLeaderAcks fills each data trial's Ack: the time from its
// fault to the first acknowledgement of a record stored under a leader
// epoch later than the trial's old one.
func firstNewLeaderAcks(trials []trial, acks []ack, read map[uint64][]stored) {
	for i := range trials {
		t := &trials[i]
		if t.Scenario == scnController || t.Err != "" {
			continue
		}
		t.Ack = -1
		for _, a := range acks[min(t.ackFrom, len(acks)):] {
			if c := read[a.seq]; len(c) > 0 && c[0].epoch > t.OldEpoch {
				t.Ack = a.at.Sub(t.Start)
				break
			}
		}
		if t.Ack < 0 {
			t.Err = "no acknowledged record stored under a later leader epoch"
		}
	}
}
