package fetchsession

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Request is what the cache needs of a Fetch request.
type Request struct {
	Version   int16
	SessionID int32
	Epoch     int32 // SessionEpoch; before v7 there are no sessions: FinalEpoch
	Follower  bool  // from a broker: its session is privileged
	// Partitions named, in request order, each once (a partition named
	// twice is collapsed by the caller, as Kafka's request map does).
	Partitions []Partition
	Forgotten  []Key // ForgottenTopicsData (v7+)
	NowMs      int64
}

// Kind says how a fetch relates to a session.
type Kind int

const (
	Sessionless  Kind = iota // a full fetch that creates no session
	Full                     // a full fetch that may create a session
	Incremental              // a fetch within a session
	SessionError             // refused: the response carries only ErrorCode
)

var kindNames = [...]string{"sessionless", "full", "incremental", "error"}

func (k Kind) String() string { return kindNames[k] }

// Context is one fetch's relation to the cache, from NewContext until
// its response (Kafka's FetchContext).
type Context struct {
	Kind Kind
	// ErrorCode is a SessionError's top-level error.
	ErrorCode int16
	// Partitions are what the broker reads: the request's (sessionless
	// and full), or every partition of the session with the parameters
	// last asked (incremental), in the session's order.
	Partitions []Partition

	follower, topicIDs bool
	sess               *session
	expect             int32 // the session epoch the response expects
}

// NewContext resolves a fetch against the cache (Kafka's
// FetchManager.newContext). An incremental request is applied to its
// session at once and advances the session's epoch.
func (c *Cache) NewContext(req Request) *Context {
	topicIDs := req.Version >= 13
	ctx := &Context{follower: req.Follower, topicIDs: topicIDs}
	if req.Epoch == InitialEpoch || req.Epoch == FinalEpoch {
		if req.SessionID != InvalidSessionID {
			c.Remove(req.SessionID) // a full fetch closes the session it names
		}
		ctx.Kind, ctx.Partitions = Full, req.Partitions
		if req.Epoch == FinalEpoch {
			ctx.Kind = Sessionless
		}
		return ctx
	}
	s, ok := c.sessions[req.SessionID]
	switch {
	case !ok:
		return refuse(kerr.FetchSessionIDNotFound.Code)
	case s.epoch != req.Epoch:
		return refuse(kerr.InvalidFetchSessionEpoch.Code)
	case s.usesTopicIDs != topicIDs:
		return refuse(kerr.FetchSessionTopicIDError.Code)
	}
	s.update(req.Partitions, req.Forgotten)
	if s.size() == 0 {
		c.Remove(s.id) // nothing left to fetch: the session ends
		ctx.Kind, ctx.Partitions = Sessionless, req.Partitions
		return ctx
	}
	c.touch(s, req.NowMs)
	s.epoch = NextEpoch(s.epoch)
	ctx.Kind, ctx.sess, ctx.expect = Incremental, s, s.epoch
	ctx.Partitions = make([]Partition, len(s.parts))
	for i, p := range s.parts {
		ctx.Partitions[i] = p.Partition
	}
	return ctx
}

func refuse(code int16) *Context { return &Context{Kind: SessionError, ErrorCode: code} }

// Reply is what a response carries of the session.
type Reply struct {
	ErrorCode int16
	SessionID int32
	// Keep says, for each of Context.Partitions, whether the response
	// names it; nil keeps them all.
	Keep []bool
}

// Respond completes a fetch with the answers for ctx.Partitions (in the
// same order): a full fetch may create a session holding them, an
// incremental one keeps only the partitions with something new (Kafka's
// FetchContext.updateAndGenerateResponseData).
func (c *Cache) Respond(ctx *Context, answers []Answer, nowMs int64) Reply {
	switch ctx.Kind {
	case SessionError:
		return Reply{ErrorCode: ctx.ErrorCode}
	case Sessionless:
		return Reply{}
	case Full:
		parts := make([]*cached, len(ctx.Partitions))
		for i, p := range ctx.Partitions {
			parts[i] = &cached{Partition: p, hw: answers[i].HighWatermark, logStart: answers[i].LogStartOffset}
		}
		return Reply{SessionID: c.maybeCreate(nowMs, ctx.follower, ctx.topicIDs, parts)}
	}
	s := ctx.sess
	if s.epoch != ctx.expect { // another request of the session came in between
		return Reply{ErrorCode: kerr.InvalidFetchSessionEpoch.Code, SessionID: s.id, Keep: make([]bool, len(answers))}
	}
	keep := make([]bool, len(answers))
	var moved []int
	for i, p := range ctx.Partitions {
		at, ok := s.index[p.Key]
		if !ok {
			continue // forgotten meanwhile
		}
		keep[i] = s.parts[at].mustRespond(answers[i])
		if keep[i] && answers[i].RecordsBytes > 0 {
			moved = append(moved, at)
		}
	}
	slices.Sort(moved)
	s.moveToEnd(moved)
	return Reply{SessionID: s.id, Keep: keep}
}
