package cluster

import "time"

// SetTLSReloadEvery shortens how often TLS stores look at their files;
// the returned function restores it.
func SetTLSReloadEvery(d time.Duration) (restore func()) {
	old := tlsReloadEvery.Swap(int64(d))
	return func() { tlsReloadEvery.Store(old) }
}
