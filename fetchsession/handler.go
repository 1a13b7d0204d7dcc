package fetchsession

import "github.com/twmb/franz-go/pkg/kerr"

// Handler is the fetching side of a session with one broker (Kafka's
// FetchSessionHandler): it remembers what the session holds and builds
// each request as a full or an incremental one.
type Handler struct {
	id, epoch int32
	sent      map[Key]Params // the session's partitions as last sent
}

// Built is a request as the handler builds it.
type Built struct {
	SessionID, Epoch int32
	Partitions       []Partition // full: all of them; incremental: added or changed
	Forgotten        []Key       // incremental: in the session, no longer wanted
}

// Full says whether the request is a full fetch.
func (b Built) Full() bool { return b.Epoch == InitialEpoch || b.Epoch == FinalEpoch }

// Build makes the next request for the partitions wanted now, in the
// order given.
func (h *Handler) Build(want []Partition) Built {
	out := Built{SessionID: h.id, Epoch: h.epoch}
	if out.Full() {
		h.sent = make(map[Key]Params, len(want))
		for _, p := range want {
			h.sent[p.Key] = p.Params
		}
		out.Partitions = want
		return out
	}
	seen := make(map[Key]bool, len(want))
	for _, p := range want {
		seen[p.Key] = true
		if prev, ok := h.sent[p.Key]; ok && prev == p.Params {
			continue
		}
		h.sent[p.Key] = p.Params
		out.Partitions = append(out.Partitions, p)
	}
	for k := range h.sent {
		if !seen[k] {
			delete(h.sent, k)
			out.Forgotten = append(out.Forgotten, k)
		}
	}
	sortKeys(out.Forgotten)
	return out
}

// HandleResponse takes the response's top-level error code and session
// id; it reports whether the response's partitions may be used (Kafka's
// handleResponse).
func (h *Handler) HandleResponse(errorCode int16, sessionID int32) bool {
	if errorCode != 0 {
		if errorCode == kerr.FetchSessionIDNotFound.Code {
			h.id, h.epoch = InvalidSessionID, InitialEpoch
		} else {
			h.closeExisting()
		}
		return false
	}
	switch {
	case sessionID == InvalidSessionID:
		h.id, h.epoch = InvalidSessionID, InitialEpoch // none created, or the broker closed it
	case h.epoch == InitialEpoch || h.epoch == FinalEpoch:
		h.id, h.epoch = sessionID, NextEpoch(InitialEpoch)
	default:
		h.epoch = NextEpoch(h.epoch)
	}
	return true
}

// HandleError is a request that got no response: the next one is full
// and closes the session (Kafka's nextCloseExisting).
func (h *Handler) HandleError() { h.closeExisting() }

func (h *Handler) closeExisting() { h.epoch = InitialEpoch }

// Session is the session id and epoch the next request carries.
func (h *Handler) Session() (id, epoch int32) { return h.id, h.epoch }
