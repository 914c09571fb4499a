//go:build race

package search

// Under the race detector TestSynonymTableGenerated's reading of all of WordNet takes ten
// times as long, for nothing a race could break: it runs without -race.
func init() { raceEnabled = true }
