package cluster

import (
	"os"
	"path/filepath"
	"testing"
)

// A certificate rotated by a rename within one tick of the kernel's file
// clock has the old file's size and modification time; its inode tells
// it apart (Kafka reloads a key store whose file changed, whatever the
// clock says).
func TestFileStampSeesARenameWithTheSameSizeAndTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "node.pem")
	if err := os.WriteFile(path, []byte("certificate-a"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := stampOf(path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", []byte("certificate-b"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path+".tmp", fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	if after := stampOf(path); after == before {
		t.Fatalf("a renamed file of the same size and time looks unchanged: %+v", after)
	}
}
