package config

import (
	"errors"
	"reflect"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Value types that map straight onto the storage packages' own types.
var (
	// tCleanup is cleanup.policy: a list of delete and compact, stored as
	// segment.CleanupPolicy.
	tCleanup = &valueType{"list", parseCleanup, func(v reflect.Value) string {
		return v.Interface().(segment.CleanupPolicy).String()
	}}
	// tTimestamp is message.timestamp.type: CreateTime or LogAppendTime,
	// stored as record.TimestampType.
	tTimestamp = &valueType{"string", parseTimestampType, func(v reflect.Value) string {
		return v.Interface().(record.TimestampType).String()
	}}
)

func parseCleanup(s string) (any, error) {
	items := splitList(s)
	if err := nonEmptyList(items); err != nil {
		return nil, errors.New("expected a comma-separated list of delete and compact")
	}
	if err := listOf("delete", "compact")(items); err != nil {
		return nil, err
	}
	var p segment.CleanupPolicy
	for _, it := range items {
		if it == "delete" {
			p |= segment.CleanupDelete
		} else {
			p |= segment.CleanupCompact
		}
	}
	return p, nil
}

func parseTimestampType(s string) (any, error) {
	switch s {
	case "CreateTime":
		return record.TimestampCreateTime, nil
	case "LogAppendTime":
		return record.TimestampLogAppendTime, nil
	}
	return nil, errors.New("expected one of CreateTime, LogAppendTime")
}
