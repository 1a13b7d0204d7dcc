package cluster_test

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// produceV11 is a Produce request sent at v11 at most: a transactional
// produce of transaction version 1, which the partition leader verifies
// against the ongoing transaction (KIP-890 part 1) rather than adds to
// it (v12, part 2).
type produceV11 struct{ *kmsg.ProduceRequest }

func (produceV11) MaxVersion() int16 { return 11 }

// tv1Versions caps a client at the requests of transaction version 1
// (Produce v11, EndTxn v4, TxnOffsetCommit v4), as a client that
// predates KIP-890 part 2 sends them; franz-go then runs version 1.
func tv1Versions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.Produce.Int16(), 11)
	v.SetMaxKeyVersion(kmsg.EndTxn.Int16(), 4)
	v.SetMaxKeyVersion(kmsg.TxnOffsetCommit.Int16(), 4)
	return v
}
