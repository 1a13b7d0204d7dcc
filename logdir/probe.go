package logdir

import (
	"errors"
	"time"

	"github.com/varve/varve/segment"
)

// wakeProbe makes the probe loop look at the directories now.
func (m *Manager) wakeProbe() {
	select {
	case m.probeWake <- struct{}{}:
	default:
	}
}

// probeLoop handles offline directories: it closes their logs as soon as
// they fail, and every ProbeInterval probes each offline directory,
// bringing it back online when the probe succeeds.
func (m *Manager) probeLoop() {
	defer m.done.Done()
	t := time.NewTicker(m.cfg.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-m.probeWake:
			m.detachOffline()
		case <-t.C:
			m.detachOffline()
			m.probeOffline()
		}
	}
}

// detachOffline closes the logs of every offline directory, after
// telling the layer above they are gone.
func (m *Manager) detachOffline() {
	for _, d := range m.dirs {
		if d.isOffline() {
			m.detach(d)
		}
	}
}

func (m *Manager) detach(d *logDir) {
	var gone []*entry
	m.publish(func(lm logMap) {
		for tp, e := range lm {
			if e.dir == d {
				gone = append(gone, e)
				delete(lm, tp)
			}
		}
		for _, e := range gone {
			d.offlineParts[e.TP] = offlinePart{id: e.TopicID, recoveryPoint: e.Log.RecoveryPoint(), startOffset: e.Log.StartOffset()}
		}
	})
	if len(gone) == 0 {
		return
	}
	tps := make([]segment.TopicPartition, len(gone))
	for i, e := range gone {
		tps[i] = e.TP
	}
	if m.cfg.OnOffline != nil {
		m.cfg.OnOffline(tps)
	}
	for _, e := range gone {
		e.Log.Close() // fails on the offline directory; recovery at reopen repairs it
	}
	m.cfg.Logger.Warn("closed the logs of an offline log directory", "dir", d.path, "partitions", len(gone))
}

// probeOffline probes every offline directory and brings back those
// that pass.
func (m *Manager) probeOffline() {
	for _, d := range m.dirs {
		if !d.isOffline() {
			continue
		}
		if err := d.probe(); err != nil {
			m.cfg.Logger.Debug("log directory still offline", "dir", d.path, "err", err)
			continue
		}
		if err := m.bringOnline(d); err != nil {
			m.cfg.Logger.Error("reopening the logs of a log directory failed; it stays offline", "dir", d.path, "err", err)
		}
	}
}

// bringOnline reopens the logs of d, recovering each from its recovery
// point, and publishes them.
func (m *Manager) bringOnline(d *logDir) error {
	m.mu.Lock()
	parts := make(map[segment.TopicPartition]offlinePart, len(d.offlineParts))
	for tp, p := range d.offlineParts {
		parts[tp] = p
	}
	m.mu.Unlock()
	d.offline.Store(false)
	var opened []*entry
	var errAll error
	for tp, p := range parts {
		managed := &segment.ManagedState{RecoveryPoint: p.recoveryPoint, LogStartOffset: p.startOffset}
		e, err := m.openLog(d, tp, managed, -1)
		if err != nil {
			errAll = errors.Join(errAll, err)
			continue
		}
		e.TopicID = p.id
		opened = append(opened, e)
	}
	if errAll != nil || d.isOffline() {
		for _, e := range opened {
			e.Log.Close()
		}
		d.offline.Store(true)
		return errors.Join(errAll, d.offlineErr())
	}
	var logs []PartitionLog
	var stale []*entry
	m.publish(func(lm logMap) {
		for _, e := range opened {
			if _, still := d.offlineParts[e.TP]; !still { // deleted meanwhile
				stale = append(stale, e)
				continue
			}
			lm[e.TP] = e
			delete(d.offlineParts, e.TP)
			logs = append(logs, e.PartitionLog)
		}
	})
	for _, e := range stale {
		e.Log.Close()
	}
	if m.cfg.OnOnline != nil {
		m.cfg.OnOnline(logs)
	}
	m.cfg.Logger.Info("log directory back online", "dir", d.path, "partitions", len(logs))
	return nil
}
