package kafkabench

import (
	"sync"
	"sync/atomic"
	"time"
)

// Progress is told about each phase of a run (fill, produce, consume,
// e2e) so a command can show a progress bar. Start and the returned
// Task's methods are called from one goroutine per phase (a ticker the
// run starts), never concurrently for one Task.
type Progress interface {
	// Start announces a phase of total records.
	Start(name string, total int64) Task
}

// Task is one phase's progress.
type Task interface {
	// SetCurrent reports how many records are done.
	SetCurrent(done int64)
	// Done says the phase ended (finished or failed).
	Done()
}

// nopProgress shows nothing.
type nopProgress struct{}

func (nopProgress) Start(string, int64) Task { return nopTask{} }

type nopTask struct{}

func (nopTask) SetCurrent(int64) {}
func (nopTask) Done()            {}

// progressEvery is how often a phase's counter is shown.
const progressEvery = 100 * time.Millisecond

// tracker copies a counter that the run's goroutines bump into a Task,
// from a goroutine of its own, so the hot path only pays an atomic add.
type tracker struct {
	done  atomic.Int64
	stop  chan struct{}
	ended sync.WaitGroup
}

// track starts showing phase name of total records on p.
func track(p Progress, name string, total int64) *tracker {
	if p == nil {
		p = nopProgress{}
	}
	t := &tracker{stop: make(chan struct{})}
	task := p.Start(name, total)
	t.ended.Go(func() { t.loop(task) })
	return t
}

func (t *tracker) loop(task Task) {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			task.SetCurrent(t.done.Load())
		case <-t.stop:
			task.SetCurrent(t.done.Load())
			task.Done()
			return
		}
	}
}

// add counts n more records done.
func (t *tracker) add(n int64) { t.done.Add(n) }

// finish shows the final count, ends the Task and waits for the ticker.
func (t *tracker) finish() {
	close(t.stop)
	t.ended.Wait()
}
