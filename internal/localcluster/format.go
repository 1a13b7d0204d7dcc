package localcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/varve/varve/config"
	"github.com/varve/varve/internal/kuuid"
)

// metaPropertiesFile is the file kafka-storage.sh format writes at the
// root of every log directory.
const metaPropertiesFile = "meta.properties"

// format writes dir's meta.properties as `kafka-storage.sh format
// --ignore-formatted` does (MetaProperties version 1):
//
//	version=1
//	cluster.id=<base64url uuid>
//	node.id=<id>
//	directory.id=<base64url uuid, this directory's own>
//
// A directory already formatted for the same cluster and node is left
// as it is (its directory.id stays); one formatted for another cluster
// or node is an error, as Kafka refuses to start on it.
func format(dir, clusterID string, nodeID int) error {
	path := filepath.Join(dir, metaPropertiesFile)
	old, err := readMetaProperties(path)
	switch {
	case err == nil:
		if old["cluster.id"] != clusterID || old["node.id"] != strconv.Itoa(nodeID) {
			return fmt.Errorf("%s belongs to cluster.id %s node.id %s, not cluster.id %s node.id %d",
				path, old["cluster.id"], old["node.id"], clusterID, nodeID)
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dirID, err := randomUUID()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "#\n#%s\n", time.Now().UTC().Format(time.UnixDate))
	fmt.Fprintf(&b, "cluster.id=%s\ndirectory.id=%s\nnode.id=%d\nversion=1\n", clusterID, dirID, nodeID)
	return writeFileSynced(path, b.Bytes())
}

func readMetaProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := config.ReadProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if props["version"] != "1" {
		return nil, fmt.Errorf("%s: version %q, expected 1 (KRaft)", path, props["version"])
	}
	return props, nil
}

// clusterID is Options.ClusterID, else the one node 1 was formatted
// with (so a cluster comes back up over its old data), else a new one.
func (c *Cluster) clusterID() (string, error) {
	if c.opts.ClusterID != "" {
		return c.opts.ClusterID, nil
	}
	props, err := readMetaProperties(filepath.Join(c.nodes[0].LogDir(), metaPropertiesFile))
	switch {
	case err == nil && props["cluster.id"] != "":
		return props["cluster.id"], nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("localcluster: %w", err)
	}
	return randomUUID()
}

// randomUUID is Kafka's Uuid.randomUuid() in its string form: a
// version 4 UUID in URL-safe base64 without padding (22 characters),
// never one that starts with '-' (it would read as a command-line
// flag), as kafka-storage.sh random-uuid prints.
func randomUUID() (string, error) { return kuuid.String(kuuid.Random()), nil }

// writeFileSynced writes data to path through a temporary file: write,
// fsync, rename, fsync the directory.
func writeFileSynced(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
