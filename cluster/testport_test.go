package cluster_test

import (
	"fmt"
	"math/rand/v2"
	stdnet "net"
	"sync/atomic"
	"testing"
)

// Test listeners take ports below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range starts at 32768), each handed out once
// per test process: a port taken from the ephemeral range and released
// until the node binds it could meanwhile become another socket's
// (a client's outgoing connection, a second pick), and a node restarted
// on its old port found it in use. Test processes run side by side, so
// each starts at a random place in the range.
var nextTestPort atomic.Int32

func init() { nextTestPort.Store(20000 + rand.Int32N(12000)) }

// testPort returns a port of host no listener holds now, never returned
// before in this process.
func testPort(t *testing.T, host string) int {
	t.Helper()
	for range 12000 {
		p := nextTestPort.Add(1)
		if p >= 32000 {
			nextTestPort.CompareAndSwap(p, 20000)
			continue
		}
		ln, err := stdnet.Listen("tcp", fmt.Sprintf("%s:%d", host, p))
		if err != nil {
			continue
		}
		ln.Close()
		return int(p)
	}
	t.Fatalf("no free port on %s below the ephemeral range", host)
	return 0
}
