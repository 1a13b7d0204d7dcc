package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/varve/varve/metadata"
	"github.com/varve/varve/quorum"
)

// isMetadataLog reports whether the .log file at path is decoded as
// KRaft metadata records: with --cluster-metadata-decoder, or when its
// directory is the metadata log's (__cluster_metadata-0).
func (d *dumper) isMetadataLog(path string) bool {
	return d.o.metadataDecoder || filepath.Base(filepath.Dir(path)) == quorum.MetadataLogDirName
}

// metadataPayload renders a record value of the metadata log as the one
// metadata record it holds, as Kafka's --cluster-metadata-decoder
// does: its type, then its fields. A value that is not exactly one
// metadata record is reported, and the dump goes on.
func metadataPayload(value []byte) string {
	rec, err := metadata.DecodeRecord(value)
	if err != nil {
		return "not a metadata record: " + err.Error()
	}
	name := fmt.Sprintf("%T", rec)
	return fmt.Sprintf("%s %+v", name[strings.LastIndexByte(name, '.')+1:], rec)
}
