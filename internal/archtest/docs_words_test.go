package archtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// inHouseWords are references that only the people who built the service
// can follow: their issue tracker ("issue 12", "issues 11, 13"), the design
// notes they worked from ("seed 002's figure", "as the seed articles
// derive", DESIGN.md), and their working sessions. A reader of the
// documentation has none of these; the text must say what was meant.
var inHouseWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bissues? #?[0-9]+`),
	regexp.MustCompile(`(?i)\bseeds? (articles?\b|0[0-9]{2}\b)`),
	regexp.MustCompile(`\bDESIGN(\.md)?\b`),
	regexp.MustCompile(`(?i)\b(this|that|the lead's) session\b|\bthe lead\b`),
}

// docPages are the pages a reader of the repository meets: the README,
// docs/ and the benchmark's README, which the README's table lists.
func docPages(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "bench", "README.md")}, pages...), nil
}

// inHouseReferences lists each in-house reference of the pages as
// "page:line: text".
func inHouseReferences(pages []string) ([]string, error) {
	var found []string
	for _, page := range pages {
		f, err := os.Open(page)
		if err != nil {
			return nil, err
		}
		lines := bufio.NewScanner(f)
		lines.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; lines.Scan(); n++ {
			for _, re := range inHouseWords {
				if m := re.FindString(lines.Text()); m != "" {
					found = append(found, fmt.Sprintf("%s:%d: %q in %q", page, n, m, strings.TrimSpace(lines.Text())))
				}
			}
		}
		err = lines.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// TestDocsSpeakToOutsiders fails for a reference in README.md, docs/ or
// bench/README.md that only the service's authors can follow (see
// inHouseWords): say it in a reader's words instead.
func TestDocsSpeakToOutsiders(t *testing.T) {
	pages, err := docPages(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 5 {
		t.Fatalf("only %d pages found: %v", len(pages), pages)
	}
	found, err := inHouseReferences(pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("an in-house reference, which a reader cannot follow (say what it means instead): %s", f)
	}
}

// TestInHouseWordsAreCaught: the check finds each kind of reference that
// the pages once had, and leaves alone the words that look like them
// (random seeds, a seed flag, the design as a word).
func TestInHouseWordsAreCaught(t *testing.T) {
	dir := t.TempDir()
	caught := []string{
		"The cache tiers (issue 12) took the SQL out.",
		"- Issue 12's throughput targets are missed",
		"the work of issues 11, 13 and 15",
		"pack the kind into the id (seed 000's packing)",
		"revalidated after 1 s, seed 002's figure",
		"laid out to shard by user id, as the seed articles derive:",
		"the project's design document (DESIGN.md, which is kept outside)",
		"after this session's changes",
	}
	kept := []string{
		"which seeds ran, how long each took",
		"make soak-model MODEL_SEEDS=random",
		"`go run . -seed` loads a demo graph; the seed adds posts",
		"the design's first bar",
		"an issue tracker of your own",
	}
	page := filepath.Join(dir, "page.md")
	if err := os.WriteFile(page, []byte(strings.Join(append(caught, kept...), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err := inHouseReferences([]string{page})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != len(caught) {
		t.Fatalf("found %d references, want the %d of:\n%s\ngot:\n%s", len(found), len(caught), strings.Join(caught, "\n"), strings.Join(found, "\n"))
	}
	for i, line := range caught {
		if !strings.Contains(found[i], fmt.Sprintf(":%d: ", i+1)) {
			t.Errorf("line %d (%q) not caught; found %v", i+1, line, found)
		}
	}
}
