package kafkabench

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Kfake is franz-go's in-memory fake Kafka cluster, started in this
// process as the reference point issue 7 names: a broker with no disk,
// whose fetches copy records out of memory.
type Kfake struct {
	c *kfake.Cluster
	// Addrs are the brokers' loopback host:port addresses.
	Addrs []string
}

// StartKfake starts a kfake cluster of n brokers (n <= 0 means one) on
// loopback ports chosen by the kernel. Close it when done.
func StartKfake(n int) (*Kfake, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(max(n, 1)))
	if err != nil {
		return nil, fmt.Errorf("start kfake: %w", err)
	}
	return &Kfake{c: c, Addrs: c.ListenAddrs()}, nil
}

// Close stops the cluster and drops its data.
func (k *Kfake) Close() { k.c.Close() }
