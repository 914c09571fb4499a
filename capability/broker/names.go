// Package broker is SPEC 14's broker: one process per user and configuration that starts,
// initialises, lists and calls the shared entries' servers (upstreams) for every turn that may
// reach them, supervises them (restart after restart_delay, held down after flapping), and
// serves the answering processes of every face over a unix socket in the state parent, with
// provlink's protocol. It judges nothing of SPEC 5: it checks only that a request's entry,
// share key and launch keys are in the configuration it reads itself, and that no program or
// env_file it starts lies in a registered project root. It also holds the client side
// (Reach, Stop, Release, Status, RunForeground). Layer 4, beside capability/keeper: it imports
// capability/provlink, capability/providers, policy, policy/paths, mcpstdio and audit, never
// the keeper or capability.
package broker

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/spear-shell/spear-shell/capability/providers"
)

// Flag is the hidden option that runs spear-shell as an on-demand broker (Serve), started by
// the first caller that finds none.
const Flag = "--spear-broker"

// protocol changes whenever a message changes. hello, stop and drain keep their form across
// versions: a newer caller asks an older broker to drain, an older caller leaves a newer one be.
const protocol = 1

// listenFd is where an on-demand broker finds its listening socket.
const listenFd = 3

// Where is where the broker of one configuration lives, in the state parent.
type Where struct {
	Socket string // broker-<h>.sock
	Lock   string // broker-<h>.lock: its start and end
	Procs  string // broker-<h>-: the prefix of each broker's record of its upstreams
	Home   string // SPEAR_HOME, absolute
	Caps   string // the capabilities file, absolute
	Parent string // the state parent
}

// Locate names the broker of SPEAR_HOME home and capabilities file caps ("" for
// home/capabilities.json) in stateParent: the hash of both paths tells configurations apart.
func Locate(stateParent, home, caps string) Where {
	if caps == "" {
		caps = filepath.Join(home, "capabilities.json")
	}
	home, caps = filepath.Clean(home), filepath.Clean(caps)
	sum := sha256.Sum256([]byte(home + "\x00" + caps))
	h := hex.EncodeToString(sum[:16])
	base := filepath.Join(stateParent, "broker-"+h)
	return Where{Socket: base + ".sock", Lock: base + ".lock", Procs: base + "-", Home: home, Caps: caps, Parent: stateParent}
}

// Stages of a broker's provider_failed besides mcpstdio's.
const (
	StageTrust   = "trust"                // a program, #! interpreter or env_file in a project root
	StageEnvFile = providers.StageEnvFile // the env_file cannot be used (policy.ErrEnvFile)
	StageExit    = "exit"                 // the upstream exited between calls
	StageStop    = "stop"                 // it could not be stopped cleanly
)

// Reasons a broker ends (broker_ended).
const (
	reasonIdle    = "idle"
	reasonStopped = "stopped"
	reasonDrained = "drained"
	reasonGone    = "socket removed"
)
