package metadata

// The broker records: RegisterBrokerRecord, BrokerRegistrationChange-
// Record, FenceBrokerRecord, UnfenceBrokerRecord, and the cluster-wide
// ProducerIdsRecord and FeatureLevelRecord. Fields are listed in each
// schema's order; tagged fields come last, whatever their place in the
// schema.

// Kafka's SecurityProtocol ids (org.apache.kafka.common.security.auth.
// SecurityProtocol).
var securityProtocolIDs = map[string]int16{"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}

func securityProtocolName(id int16) (string, bool) {
	for name, v := range securityProtocolIDs {
		if v == id {
			return name, true
		}
	}
	return "", false
}

// RegisterBrokerRecord (api key 0), versions 0-4:
//
//	BrokerId             int32
//	IsMigratingZkBroker  bool, v2+: written false; read and dropped (no
//	                     ZooKeeper migration in Kafka 4, nor in Varve)
//	IncarnationId        uuid
//	BrokerEpoch          int64
//	EndPoints            [] {Name string, Host string, Port uint16,
//	                     SecurityProtocol int16, tagged fields}
//	Features             [] {Name string, MinSupportedVersion int16,
//	                     MaxSupportedVersion int16, tagged fields}:
//	                     written empty; read and dropped (the feature
//	                     ranges a broker supports are the controller's
//	                     concern when it registers, no client sees them)
//	Rack                 nullable string: null is Varve's ""
//	Fenced               bool
//	InControlledShutdown bool, v1+
//	tag 0 LogDirs        []uuid, v3+: written empty (Kafka's default,
//	                     left out); read and dropped (Varve does not
//	                     assign replicas to directories, KIP-858)
//	tag 1 CordonedLogDirs nullable []uuid, v4+: written null; read and
//	                     dropped (KIP-1066)
func appendRegisterBroker(b []byte, r RegisterBrokerRecord) []byte {
	b = header(b, keyRegisterBroker, writeRegisterBrokerVersion)
	b = appendInt32(b, r.BrokerID)
	b = appendBool(b, false) // IsMigratingZkBroker
	b = append(b, r.IncarnationID[:]...)
	b = appendInt64(b, r.BrokerEpoch)
	b = appendUvarint(b, uint32(len(r.Endpoints))+1)
	for _, e := range r.Endpoints {
		b = appendString(b, e.Listener)
		b = appendString(b, e.Host)
		b = appendInt16(b, int16(uint16(e.Port)))
		id, ok := securityProtocolIDs[e.SecurityProtocol]
		if !ok {
			id = -1
		}
		b = appendInt16(b, id)
		b = append(b, 0) // the endpoint's tagged fields
	}
	b = appendUvarint(b, 1) // Features: empty
	if r.Rack == "" {
		b = appendNullableString(b, nil)
	} else {
		b = appendString(b, r.Rack)
	}
	b = appendBool(b, r.Fenced)
	b = appendBool(b, r.InControlledShutdown)
	return append(b, 0) // no tagged fields
}

func decodeRegisterBroker(r *reader, version uint32) Record {
	var rec RegisterBrokerRecord
	rec.BrokerID = r.int32()
	if version >= 2 {
		r.bool() // IsMigratingZkBroker
	}
	rec.IncarnationID = r.uuid()
	rec.BrokerEpoch = r.int64()
	rec.Endpoints = decodeEndpoints(r)
	decodeBrokerFeatures(r)
	if rack := r.nullableString("Rack"); rack != nil {
		rec.Rack = *rack
	}
	rec.Fenced = r.bool()
	if version >= 1 {
		rec.InControlledShutdown = r.bool()
	}
	r.tags(func(tag uint32, sub *reader) bool {
		switch {
		case tag == 0 && version >= 3:
			sub.skipUUIDs("LogDirs")
		case tag == 1 && version >= 4:
			sub.skipUUIDs("CordonedLogDirs")
		default:
			return false
		}
		return true
	})
	return rec
}

// endpointMinSize is the smallest encoded BrokerEndpoint: two empty
// strings, port, protocol, no tagged fields.
const endpointMinSize = 1 + 1 + 2 + 2 + 1

func decodeEndpoints(r *reader) []Endpoint {
	n, null := r.length("EndPoints", endpointMinSize)
	if null {
		r.fail("EndPoints: null in a non-nullable array")
	}
	if n == 0 || r.err != nil {
		return nil
	}
	eps := make([]Endpoint, n)
	for i := range eps {
		e := &eps[i]
		e.Listener, e.Host = r.string("EndPoints.Name"), r.string("EndPoints.Host")
		e.Port = int32(uint16(r.int16()))
		proto := r.int16()
		r.noTags()
		if r.err != nil {
			return nil
		}
		var ok bool
		if e.SecurityProtocol, ok = securityProtocolName(proto); !ok {
			r.fail("endpoint %s: unknown security protocol %d", e.Listener, proto)
			return nil
		}
	}
	return eps
}

func decodeBrokerFeatures(r *reader) {
	n, null := r.length("Features", 1+2+2+1)
	if null {
		r.fail("Features: null in a non-nullable array")
	}
	for i := 0; i < n && r.err == nil; i++ {
		r.string("Features.Name")
		r.int16()
		r.int16()
		r.noTags()
	}
}

// BrokerRegistrationChangeRecord (api key 17), versions 0-3:
//
//	BrokerId                   int32
//	BrokerEpoch                int64
//	tag 0 Fenced               int8: -1 unfence, 0 no change, 1 fence
//	tag 1 InControlledShutdown int8, v1+: 0 no change, 1 in controlled
//	                           shutdown; anything else is corrupt
//	tag 2 LogDirs              []uuid, v2+: read and dropped (KIP-858)
//	tag 3 CordonedLogDirs      nullable []uuid, v3+: read and dropped
//
// Written at version 0, or 1 when InControlledShutdown is set, as
// Kafka's ClusterControlManager writes them.
func appendBrokerChange(b []byte, r BrokerRegistrationChangeRecord) []byte {
	version := uint32(0)
	if r.InControlledShutdown {
		version = brokerChangeShutdownVersion
	}
	b = header(b, keyBrokerRegistrationChange, version)
	b = appendInt32(b, r.BrokerID)
	b = appendInt64(b, r.BrokerEpoch)
	var fields []taggedField
	if r.Fenced != FenceUnchanged {
		fields = append(fields, taggedField{0, func(p []byte) []byte { return append(p, byte(r.Fenced)) }})
	}
	if r.InControlledShutdown {
		fields = append(fields, taggedField{1, func(p []byte) []byte { return append(p, 1) }})
	}
	return appendTags(b, fields)
}

func decodeBrokerChange(r *reader, version uint32) Record {
	var rec BrokerRegistrationChangeRecord
	rec.BrokerID, rec.BrokerEpoch = r.int32(), r.int64()
	r.tags(func(tag uint32, sub *reader) bool {
		switch {
		case tag == 0:
			rec.Fenced = FenceChange(sub.int8())
		case tag == 1 && version >= brokerChangeShutdownVersion:
			switch v := sub.int8(); v {
			case 0, 1:
				rec.InControlledShutdown = v == 1
			default:
				sub.fail("InControlledShutdown change %d", v)
			}
		case tag == 2 && version >= 2:
			sub.skipUUIDs("LogDirs")
		case tag == 3 && version >= 3:
			sub.skipUUIDs("CordonedLogDirs")
		default:
			return false
		}
		return true
	})
	return rec
}

// FenceBrokerRecord (api key 7) and UnfenceBrokerRecord (api key 8),
// version 0: Id int32, Epoch int64.
func appendBrokerIDEpoch(b []byte, id int32, epoch int64) []byte {
	b = appendInt32(b, id)
	b = appendInt64(b, epoch)
	return append(b, 0)
}

func decodeFenceBroker(r *reader, _ uint32) Record {
	rec := FenceBrokerRecord{BrokerID: r.int32(), BrokerEpoch: r.int64()}
	r.noTags()
	return rec
}

func decodeUnfenceBroker(r *reader, _ uint32) Record {
	rec := UnfenceBrokerRecord{BrokerID: r.int32(), BrokerEpoch: r.int64()}
	r.noTags()
	return rec
}

// ProducerIdsRecord (api key 15), version 0: BrokerId int32,
// BrokerEpoch int64, NextProducerId int64.
func appendProducerIDs(b []byte, r ProducerIdsRecord) []byte {
	b = header(b, keyProducerIds, 0)
	b = appendInt32(b, r.BrokerID)
	b = appendInt64(b, r.BrokerEpoch)
	b = appendInt64(b, r.NextProducerID)
	return append(b, 0)
}

func decodeProducerIDs(r *reader, _ uint32) Record {
	rec := ProducerIdsRecord{BrokerID: r.int32(), BrokerEpoch: r.int64(), NextProducerID: r.int64()}
	r.noTags()
	return rec
}

// FeatureLevelRecord (api key 12), version 0 (Kafka never raises it: a
// log begins with one, read before the reader knows the
// metadata.version): Name string, FeatureLevel int16.
func appendFeatureLevel(b []byte, r FeatureLevelRecord) []byte {
	b = header(b, keyFeatureLevel, 0)
	b = appendString(b, r.Name)
	b = appendInt16(b, r.FeatureLevel)
	return append(b, 0)
}

func decodeFeatureLevel(r *reader, _ uint32) Record {
	rec := FeatureLevelRecord{Name: r.string("Name"), FeatureLevel: r.int16()}
	r.noTags()
	return rec
}
