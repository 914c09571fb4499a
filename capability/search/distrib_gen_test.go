package search

// The distributional thesaurus's generator: the words that software prose uses alike (rename:
// move, remove, delete; wildcard: glob, pattern, slash; compress: decompress, uncompress, xz),
// which a general dictionary does not link. It reads a corpus of software prose (corpusSources),
// describes each word by the words found at each position up to distribWindow either side of it
// in a sentence (stop words included: "delete the" and "remove the" say the two are used alike),
// weighs each such context by its positive pointwise mutual information (the contexts'
// frequencies raised to 0.75, which keeps rare ones from dominating), and keeps, for each word of
// distribMinFreq or more, the distribNeighbours words whose vectors (their distribContexts
// strongest contexts) are nearest by cosine, of distribMinCosine or more. It writes
// testdata/distrib.txt, "word neighbour...", every word as Words gives it, which related.txt's
// generator reads (related_gen_test.go). Only neighbours are kept: no text of the corpus.
//
// go test ./capability/search -run TestDistribTableGenerated -args -update-distrib (about 20 s
// of CPU; nice it). The corpus is what corpusSources names on a machine such as the one it was
// generated on (docs/mcp.md, Quality): the manual pages depend on what is installed.

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	distribWindow     = 2    // positions either side of a word that describe it
	distribMinFreq    = 100  // the least count of a word given neighbours
	distribMinContext = 20   // the least count of a context used
	distribContexts   = 1000 // a word's strongest contexts kept for the cosine
	distribNeighbours = 3
	distribMinCosine  = 0.1
	// a context found with more than this share of the words says nothing of any
	distribMaxContextShare = 0.5
)

var updateDistrib = flag.Bool("update-distrib", false, "rewrite testdata/distrib.txt from the corpus")

// corpusSources are the corpus: Debian bookworm's package descriptions (the one-line
// descriptions of the Packages list of its main archive, and the English summaries and
// descriptions of its AppStream components), the English manual pages installed in sections 1,
// 5, 7 and 8 but Google Cloud's CLI reference (16,600 generated pages of one program, which would
// outweigh the rest), and the comments of the Go distribution's own sources (GOROOT/src, not its
// tests).
var corpusSources = struct {
	packages, dep11 string
	man             []string
	manSkip         *regexp.Regexp
}{
	packages: "/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4",
	dep11:    "/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_dep11_Components-amd64.yml.gz",
	man:      []string{"/usr/share/man/man1", "/usr/share/man/man5", "/usr/share/man/man7", "/usr/share/man/man8"},
	manSkip:  regexp.MustCompile(`^(gcloud|bq|gsutil)[_.]`),
}

func TestDistribTableGenerated(t *testing.T) {
	if !*updateDistrib {
		t.Skip("-update-distrib regenerates testdata/distrib.txt from the corpus (minutes of CPU)")
	}
	c := newCooccur()
	if err := readCorpus(c); err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus: %d sentences, %d words, vocabulary %d", c.sentences, c.tokens, len(c.vocab))
	if err := os.WriteFile("testdata/distrib.txt", c.neighbours(), 0o644); err != nil {
		t.Fatal(err)
	}
}

type cooccur struct {
	vocab     map[string]int32 // targets and contexts, one space of ids
	words     []string
	freq      []float64          // as a target
	pairs     map[uint64]float64 // (target << 32 | context) -> count
	sentences int
	tokens    int
}

func newCooccur() *cooccur {
	return &cooccur{vocab: map[string]int32{}, pairs: map[uint64]float64{}}
}

func (c *cooccur) id(w string) int32 {
	i, ok := c.vocab[w]
	if !ok {
		i = int32(len(c.words))
		c.vocab[w] = i
		c.words = append(c.words, w)
		c.freq = append(c.freq, 0)
	}
	return i
}

// sentence counts one sentence's words and, for each, the words at each position within the
// window (stop words too: "delete the" and "remove the" say the two are used alike).
func (c *cooccur) sentence(s string) {
	type tok struct {
		w    string
		stop bool
	}
	var toks []tok
	eachPart(s, func(w string) {
		w = lower(w)
		if !isASCIILetters(w) {
			toks = append(toks, tok{"#", true})
			return
		}
		if isStopWord(w) {
			toks = append(toks, tok{w, true})
			return
		}
		toks = append(toks, tok{stem(w), len(w) < 2})
	})
	if len(toks) < 2 {
		return
	}
	c.sentences++
	for i, t := range toks {
		if t.stop {
			continue
		}
		c.tokens++
		a := c.id(t.w)
		c.freq[a]++
		for d := -distribWindow; d <= distribWindow; d++ {
			j := i + d
			if d == 0 || j < 0 || j >= len(toks) {
				continue
			}
			ctx := c.id(string(rune('a'+d+distribWindow)) + ":" + toks[j].w)
			c.pairs[uint64(a)<<32|uint64(ctx)]++
		}
	}
}

// sentenceEnd cuts prose at the end of a sentence or clause.
var sentenceEnd = regexp.MustCompile(`[.;:!?]\s|\n\s*\n`)

func (c *cooccur) text(s string) {
	for _, part := range sentenceEnd.Split(s, -1) {
		c.sentence(part)
	}
}

func readCorpus(c *cooccur) error {
	// Packages: each package's one-line description, once per distinct line (a source's
	// binary packages often share theirs).
	out, err := exec.Command("lz4cat", corpusSources.packages).Output()
	if err != nil {
		return fmt.Errorf("%s: %w", corpusSources.packages, err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if d, ok := strings.CutPrefix(line, "Description: "); ok && !seen[d] {
			seen[d] = true
			c.text(d)
		}
	}
	if err := readDep11(c, corpusSources.dep11); err != nil {
		return err
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	if err := readGoComments(c, filepath.Join(strings.TrimSpace(string(goroot)), "src")); err != nil {
		return err
	}
	for _, dir := range corpusSources.man {
		names, err := filepath.Glob(filepath.Join(dir, "*.gz"))
		if err != nil {
			return err
		}
		for _, n := range names {
			if corpusSources.manSkip.MatchString(filepath.Base(n)) {
				continue
			}
			if err := readMan(c, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// readGoComments reads the comments of the Go distribution's own sources (not its tests or
// test data): a comment block is a paragraph.
func readGoComments(c *cooccur, root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var para strings.Builder
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			text, ok := strings.CutPrefix(line, "//")
			if !ok || strings.HasPrefix(text, "go:") || strings.HasPrefix(text, "\t") || strings.Contains(text, "Copyright") {
				if para.Len() > 0 {
					c.text(para.String())
					para.Reset()
				}
				continue
			}
			para.WriteString(text + "\n")
		}
		c.text(para.String())
		return nil
	})
}

// readDep11 reads the English (C) summaries and descriptions of the AppStream components.
func readDep11(c *cooccur, file string) error {
	b, err := readGzip(file)
	if err != nil {
		return err
	}
	field := ""
	var desc strings.Builder
	flush := func() {
		c.text(dep11Markup.Replace(strings.TrimPrefix(desc.String(), ">-")))
		desc.Reset()
	}
	inDesc := false
	for _, line := range strings.Split(string(b), "\n") {
		if inDesc && strings.HasPrefix(line, "    ") {
			desc.WriteString(" " + strings.TrimSpace(line))
			continue
		}
		if inDesc {
			flush()
			inDesc = false
		}
		if !strings.HasPrefix(line, " ") {
			field, _, _ = strings.Cut(line, ":")
			continue
		}
		text, isC := strings.CutPrefix(line, "  C: ")
		switch {
		case isC && field == "Summary":
			c.text(text)
		case isC && field == "Description":
			inDesc = true
			desc.WriteString(text)
		}
	}
	if inDesc {
		flush()
	}
	return nil
}

// readGzip reads a gzipped file, of 64 MB at the most once unpacked.
func readGzip(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return io.ReadAll(io.LimitReader(z, 64<<20))
}

var dep11Markup = strings.NewReplacer("<p>", "\n\n", "</p>", "\n\n", "<li>", "\n\n", "</li>", "\n\n", "<ul>", "", "</ul>", "", "<ol>", "", "</ol>", "", "<em>", "", "</em>", "", "<code>", "", "</code>", "")

// troffEscape is what a manual page's prose holds besides words: font and size changes, named
// characters, strings, and the other one-letter escapes.
var troffEscape = regexp.MustCompile(`\\(f(\[[^]]*\]|\(..|.)|s[-+]?\d+|\(..|\[[^]]*\]|\*(\(..|\[[^]]*\]|.)|n(\(..|\[[^]]*\]|.)|.)`)

// readMan reads one gzipped manual page's prose: its text lines and the text of its font and
// heading requests; every other request, and a paragraph or heading, ends a sentence.
func readMan(c *cooccur, file string) error {
	b, err := readGzip(file)
	if err != nil {
		return err
	}
	var para strings.Builder
	flush := func() {
		c.text(para.String())
		para.Reset()
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		s := string(line)
		if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
			req, arg, _ := strings.Cut(strings.TrimSpace(s[1:]), " ")
			switch req {
			case "B", "I", "BR", "RB", "IR", "RI", "BI", "IB", "SM", "SB":
				para.WriteString(" " + strings.ReplaceAll(arg, `"`, "") + " ")
				continue
			case "SH", "SS":
				flush()
				c.text(strings.ReplaceAll(arg, `"`, ""))
				continue
			}
			flush()
			continue
		}
		s = troffEscape.ReplaceAllStringFunc(s, func(e string) string {
			switch e {
			case `\-`:
				return "-"
			case `\ `, `\~`:
				return " "
			}
			return ""
		})
		para.WriteString(s + "\n")
	}
	flush()
	return nil
}

// neighbours reduces the counts to each word's nearest words, as distrib.txt's lines.
func (c *cooccur) neighbours() []byte {
	n := len(c.words)
	// the contexts' smoothed distribution
	var total, ctxTotal float64
	ctxFreq := make([]float64, n)
	for _, f := range c.freq {
		total += f
	}
	for k, v := range c.pairs {
		ctxFreq[int32(k&0xffffffff)] += v
	}
	for i := range ctxFreq {
		ctxFreq[i] = math.Pow(ctxFreq[i], 0.75)
		ctxTotal += ctxFreq[i]
	}
	var pairTotal float64
	for _, v := range c.pairs {
		pairTotal += v
	}
	wordTotal := make([]float64, n)
	for k, v := range c.pairs {
		wordTotal[k>>32] += v
	}
	keep := func(i int32) bool { return c.freq[i] >= distribMinFreq }
	ctxCount := make([]float64, n)
	for k, v := range c.pairs {
		ctxCount[k&0xffffffff] += v
	}
	keepCtx := func(i int32) bool { return ctxCount[i] >= distribMinContext }
	// contexts found with too many words say nothing
	ctxDegree := make([]int, n)
	for k := range c.pairs {
		if keep(int32(k >> 32)) {
			ctxDegree[k&0xffffffff]++
		}
	}
	kept := 0
	for i := range n {
		if keep(int32(i)) {
			kept++
		}
	}
	maxDegree := int(float64(kept) * distribMaxContextShare)
	type entry struct {
		id int32
		v  float64
	}
	vecs := make([][]entry, n)
	for k, v := range c.pairs {
		w, ctx := int32(k>>32), int32(k&0xffffffff)
		if !keep(w) || !keepCtx(ctx) || v < 2 || ctxDegree[ctx] > maxDegree {
			continue
		}
		pmi := math.Log((v / pairTotal) / ((wordTotal[w] / pairTotal) * (ctxFreq[ctx] / ctxTotal)))
		if pmi > 0 {
			vecs[w] = append(vecs[w], entry{ctx, pmi})
		}
	}
	post := make([][]entry, n) // by context, the words whose kept vectors hold it
	for w, v := range vecs {
		slices.SortFunc(v, func(a, b entry) int {
			if a.v != b.v {
				if a.v > b.v {
					return -1
				}
				return 1
			}
			return int(a.id - b.id)
		})
		v = v[:min(len(v), distribContexts)]
		var norm float64
		for _, e := range v {
			norm += e.v * e.v
		}
		norm = math.Sqrt(norm)
		for i := range v {
			v[i].v /= norm
			post[v[i].id] = append(post[v[i].id], entry{int32(w), v[i].v})
		}
		vecs[w] = v
	}
	order := make([]int32, 0, kept)
	for i := range n {
		if len(vecs[i]) > 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(c.words[a], c.words[b]) })
	sim := make([]float64, n)
	var touched []int32
	var buf bytes.Buffer
	for _, w := range order {
		touched = touched[:0]
		for _, e := range vecs[w] {
			for _, p := range post[e.id] {
				if p.id == w {
					continue
				}
				if sim[p.id] == 0 {
					touched = append(touched, p.id)
				}
				sim[p.id] += e.v * p.v
			}
		}
		var near []entry
		for _, o := range touched {
			if sim[o] >= distribMinCosine {
				near = append(near, entry{o, sim[o]})
			}
			sim[o] = 0
		}
		slices.SortFunc(near, func(a, b entry) int {
			if a.v != b.v {
				if a.v > b.v {
					return -1
				}
				return 1
			}
			return strings.Compare(c.words[a.id], c.words[b.id])
		})
		if len(near) == 0 {
			continue
		}
		buf.WriteString(c.words[w])
		for _, e := range near[:min(len(near), distribNeighbours)] {
			buf.WriteString(" " + c.words[e.id])
		}
		buf.WriteString("\n")
	}
	return buf.Bytes()
}
