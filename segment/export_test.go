package segment

// Abandon simulates the death of the process for tests: the flusher
// stops and nothing more is written, flushed or checkpointed, and the
// clean-shutdown marker is not written. Files stay open (as a dead
// process's pages stay in the page cache); the log must not be used
// again.
func (l *Log) Abandon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Swap(true) {
		return
	}
	close(l.stop)
	l.done.Wait()
	l.pending.Lock()
	for _, t := range l.pending.segs {
		t.Stop()
	}
	l.pending.Unlock()
}

// CloseFilesAbandoned closes the files an abandoned log still holds
// without writing anything, as the death of its process would.
func (l *Log) CloseFilesAbandoned() {
	for _, s := range l.segments() {
		s.closeFiles()
	}
}
