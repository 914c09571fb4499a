//go:build race

package main

// With -race the face itself is built with the race detector too: its calls are served
// concurrently, and a race in it is a failure of the test that met it.
func init() { raceEnabled = true }
