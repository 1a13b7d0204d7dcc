package quorum

import (
	"testing"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

// The loop runs the requests already queued behind the one it took, up
// to maxOpsPerReady in all, before it handles the next Ready: their
// entries share one log write. The rest wait for the next turn.
func TestQueuedOpsShareAReady(t *testing.T) {
	n := &Node{opc: make(chan *op, 2*maxOpsPerReady)}
	ran := 0
	for range maxOpsPerReady + 5 {
		n.opc <- &op{local: true, run: func(*controller.Controller, int64) ([]metadata.Record, error) {
			ran++
			return nil, nil
		}}
	}
	n.runOp(<-n.opc)
	n.runQueuedOps()
	if ran != maxOpsPerReady || len(n.opc) != 5 {
		t.Errorf("ran %d before the Ready, %d left; want %d and 5", ran, len(n.opc), maxOpsPerReady)
	}
	n.runQueuedOps()
	if ran != maxOpsPerReady+5 || len(n.opc) != 0 {
		t.Errorf("next turn: ran %d, %d left", ran, len(n.opc))
	}
}
