package quorum

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The registration's producer-id floor is a tagged field: it survives
// the wire at every flexible version, a request without it (Kafka's
// brokers) reads as no floor, and a field of the wrong size is ignored.
func TestRegistrationProducerIDFloorOnTheWire(t *testing.T) {
	for _, floor := range []int64{0, 1, 7001, 1 << 40} {
		for v := int16(0); v <= 4; v++ {
			req := kmsg.NewPtrBrokerRegistrationRequest()
			req.Version, req.BrokerID, req.ClusterID = v, 2, "c"
			if floor > 0 {
				setProducerIDFloor(req, floor)
			}
			back := kmsg.NewPtrBrokerRegistrationRequest()
			back.Version = v
			if err := back.ReadFrom(req.AppendTo(nil)); err != nil {
				t.Fatalf("v%d: %v", v, err)
			}
			if got := producerIDFloor(back); got != floor {
				t.Errorf("v%d: floor %d read back as %d", v, floor, got)
			}
		}
	}
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.UnknownTags.Set(producerIDFloorTag, []byte{1, 2, 3})
	if got := producerIDFloor(req); got != 0 {
		t.Errorf("a 3-byte field read as floor %d", got)
	}
}
