package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"feedservice/api/settings"
)

// The modes of the data directory and its files: the database holds the
// password hashes and token-secret signs every token, so nobody but the
// server's own user may read them.
const (
	dataDirMode  fs.FileMode = 0o700
	dataFileMode fs.FileMode = 0o600
)

// sqliteFile is the embedded database's file under the data directory.
const sqliteFile = "feed.db"

// dataFiles are the files the server keeps under the data directory: the
// embedded database with its write-ahead log and shared-memory index, and
// the generated token secret.
var dataFiles = []string{sqliteFile, sqliteFile + "-wal", sqliteFile + "-shm", "token-secret"}

// secureDataDir makes the data directory, or narrows an existing one, to
// dataDirMode, and creates the embedded database's file with dataFileMode
// when it will be used, before SQLite creates it with the umask's mode
// (SQLite gives its -wal and -shm files the database file's mode). Chmod
// rather than the mode of MkdirAll and OpenFile, which the umask narrows
// and which leave an existing directory or file as it is.
func secureDataDir(dir string, sqlite bool) error {
	if err := os.MkdirAll(dir, dataDirMode); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := os.Chmod(dir, dataDirMode); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if sqlite {
		f, err := os.OpenFile(filepath.Join(dir, sqliteFile), os.O_RDWR|os.O_CREATE, dataFileMode)
		if err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
		f.Close()
	}
	return secureDataFiles(dir)
}

// secureDataFiles narrows the files of the data directory that exist to
// dataFileMode.
func secureDataFiles(dir string) error {
	for _, name := range dataFiles {
		err := os.Chmod(filepath.Join(dir, name), dataFileMode)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("data dir: %w", err)
		}
	}
	return nil
}

// tokenSecret is the configured secret (TOKEN_SECRET), or the one kept under the data
// directory, made on first start.
func tokenSecret(c settings.Settings) ([]byte, error) {
	if len(c.TokenSecret) > 0 {
		return c.TokenSecret, nil
	}
	path := filepath.Join(c.DataDir, "token-secret")
	if b, err := os.ReadFile(path); err == nil {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return nil, err
	}
	secret := hex.EncodeToString(buf)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("keep token secret: %w", err)
	}
	return []byte(secret), nil
}
