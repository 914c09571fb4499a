package keeper

import "path/filepath"

// protocol changes whenever a message changes: a client and a keeper of different
// builds then do not talk.
const protocol = 4

// Names in the turn's state directory.
const (
	socketName = "keeper.sock"
	lockName   = "keeper.lock"
)

// socketPath is where the keeper of the turn whose state is in dir listens.
func socketPath(dir string) string {
	return filepath.Join(dir, socketName)
}

// maxSocketPath is the longest socket path: sun_path holds 108 bytes, its NUL included.
const maxSocketPath = 107
