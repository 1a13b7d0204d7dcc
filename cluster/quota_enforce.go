package cluster

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
	"github.com/varve/varve/controller"
	vnet "github.com/varve/varve/net"
)

// clientQuotas are the broker's three client quota managers (Kafka's
// QuotaManagers: produce, fetch, request). How a throttle reaches the
// client depends on the request's version, as in Kafka: from the
// versions of KIP-219 (Produce v6, Fetch v8, ...; kmsg's Throttle tells)
// the response leaves at once with throttle_time_ms and the connection
// is then muted for that time (net.Response.Throttle); before, the
// response itself is held back for that time.
type clientQuotas struct {
	produce, fetch, request *clientQuotaManager
}

func newClientQuotas(cfg *config.Broker, now func() time.Time) clientQuotas {
	n, w := cfg.QuotaWindowNum, time.Duration(cfg.QuotaWindowSizeSeconds)*time.Second
	return clientQuotas{
		produce: newClientQuotaManager(controller.QuotaProducerByteRate, n, w, now),
		fetch:   newClientQuotaManager(controller.QuotaConsumerByteRate, n, w, now),
		request: newClientQuotaManager(controller.QuotaRequestPercentage, n, w, now),
	}
}

// quotaUser is the user a request's quotas are looked up by: the
// principal's name (Kafka's KafkaPrincipal.getName, ANONYMOUS when
// unauthenticated).
func (b *Broker) quotaUserOf(r *vnet.Request) func() string {
	return func() string { return b.quotaUser(r) }
}

func (b *Broker) quotaUser(r *vnet.Request) string {
	if r.Conn.State == nil {
		return "ANONYMOUS" // a request made in process, with no connection
	}
	p := b.sec.principal(r)
	if i := strings.IndexByte(p, ':'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// produceQuota records a Produce request's record bytes against the
// client's producer_byte_rate (Kafka records the request's size; the
// records are nearly all of it) and returns the throttle time to answer
// with and respond made to apply it.
func (b *Broker) produceQuota(r *vnet.Request, req *kmsg.ProduceRequest, respond func(vnet.Response)) (int32, func(vnet.Response)) {
	var n int
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			n += len(p.Records)
		}
	}
	d := b.clientQuotas.produce.record(b.meta.image(), b.quotaUserOf(r), r.ClientID, float64(n))
	if d <= 0 {
		return 0, respond
	}
	return throttleMillis(d), func(resp vnet.Response) { throttled(r, resp, d, respond) }
}

// fetchQuota returns respond made to record a consumer's Fetch response
// bytes against its consumer_byte_rate, and to throttle it: the
// response's throttle_time_ms (its first field from version 1) is set
// then. Followers' fetches are not subject to client quotas.
func (b *Broker) fetchQuota(r *vnet.Request, respond func(vnet.Response)) func(vnet.Response) {
	return func(resp vnet.Response) {
		var n int64
		for _, p := range resp.Parts {
			if p.Region != nil {
				n += p.Region.Len
			} else {
				n += int64(len(p.Bytes))
			}
		}
		d := b.clientQuotas.fetch.record(b.meta.image(), b.quotaUserOf(r), r.ClientID, float64(n))
		if d <= 0 {
			respond(resp)
			return
		}
		if r.Version >= 1 && len(resp.Parts) > 0 && len(resp.Parts[0].Bytes) >= 4 {
			binary.BigEndian.PutUint32(resp.Parts[0].Bytes, uint32(throttleMillis(d)))
		}
		throttled(r, resp, d, respond)
	}
}

// requestQuota records the time a request's handler took against the
// client's request_percentage (Kafka: a percentage of one thread's
// time, so 100 is one handler busy all the time) and throttles resp by
// the larger of that quota's throttle and the one resp carries already.
// ApiVersions and the SASL exchange are exempt, as in Kafka.
func (b *Broker) requestQuota(r *vnet.Request, resp kmsg.Response, took time.Duration) time.Duration {
	switch r.Key {
	case kmsg.ApiVersions.Int16(), kmsg.SASLHandshake.Int16(), kmsg.SASLAuthenticate.Int16():
		return 0
	}
	d := b.clientQuotas.request.record(b.meta.image(), b.quotaUserOf(r), r.ClientID, float64(took)*100/float64(time.Second))
	tr, ok := resp.(kmsg.ThrottleResponse)
	if !ok {
		return 0 // no throttle field to tell the client with
	}
	if ms, _ := tr.Throttle(); time.Duration(ms)*time.Millisecond > d {
		d = time.Duration(ms) * time.Millisecond
	}
	if d > 0 {
		resp.(kmsg.SetThrottleResponse).SetThrottle(throttleMillis(d))
	}
	return d
}

// throttled sends resp throttled by d: at once with the connection muted
// afterwards (KIP-219 versions), or held back for d (older versions).
func throttled(r *vnet.Request, resp vnet.Response, d time.Duration, respond func(vnet.Response)) {
	if throttleAfterResponse(r.Key, r.Version) {
		resp.Throttle = d
		respond(resp)
		return
	}
	time.AfterFunc(d, func() { respond(resp) })
}

// throttleAfterResponse reports whether clients of this version expect
// the throttle after the response (KIP-219), as kmsg records it.
func throttleAfterResponse(key, version int16) bool {
	resp := kmsg.ResponseForKey(key)
	tr, ok := resp.(kmsg.ThrottleResponse)
	if !ok {
		return true
	}
	resp.SetVersion(version)
	_, after := tr.Throttle()
	return after
}

func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), 1<<31-1))
}
