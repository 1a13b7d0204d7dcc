package cluster

// Reauthentications is the number of successful SASL
// re-authentications (KIP-368) since start.
func (b *Broker) Reauthentications() int64 { return b.sec.reauths.Load() }

// ExpiredSessionsClosed is the number of connections closed because
// their SASL session was over.
func (b *Broker) ExpiredSessionsClosed() int64 { return b.sec.expiredClosed.Load() }
