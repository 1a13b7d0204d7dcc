package net

import (
	"errors"
	"fmt"
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown,
// and passed to Response.Done when a response could not be sent because the
// server shut down first.
var ErrServerClosed = errors.New("net: server closed")

// ErrConnClosed is passed to Response.Done when the connection closed before
// the whole response was written.
var ErrConnClosed = errors.New("net: connection closed before the response was written")

// FrameSizeError reports a size prefix outside [0, socket.request.max.bytes].
// Kafka's NetworkReceive throws InvalidReceiveException for it and the
// connection is closed without a response; Varve does the same.
type FrameSizeError struct {
	Size int32 // the size prefix as received
	Max  int32 // socket.request.max.bytes in force
}

func (e *FrameSizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("net: invalid receive (negative size %d)", e.Size)
	}
	return fmt.Sprintf("net: invalid receive (size = %d larger than socket.request.max.bytes %d)", e.Size, e.Max)
}

// HeaderError reports a request header that does not parse: Kafka answers
// an unparsable header with InvalidRequestException and closes the
// connection; Varve closes the connection.
type HeaderError struct {
	Field  string // the header field being read ("client id", "tagged fields", ...)
	Offset int    // byte offset of that field in the frame
	Reason string
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("net: bad request header: %s at byte %d: %s", e.Field, e.Offset, e.Reason)
}

// ConfigError names the Kafka property whose value is not acceptable.
type ConfigError struct {
	Property string // Kafka's name, e.g. "num.network.threads"
	Value    any
	Reason   string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("net: invalid value %v for configuration %s: %s", e.Value, e.Property, e.Reason)
}
