package archtest

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLinks checks every link and image of README.md and docs/*.md:
// a relative one must name a file or folder of the repository (a tracked or
// new, not ignored, file) without leaving it, and an anchor (#section) must
// name a heading of the page it points to. Links to other sites (http, https,
// mailto) are not fetched. Links inside code blocks and code spans are not
// links, and are not checked.
func TestReadmeLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pages {
		pages[i] = filepath.ToSlash(strings.TrimPrefix(p, repoRoot+string(filepath.Separator)))
	}
	pages = append([]string{"README.md"}, pages...)
	files, err := repoFiles(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range pages {
		problems, n, err := checkLinks(repoRoot, p, files)
		if err != nil {
			t.Fatal(err)
		}
		checked += n
		for _, pr := range problems {
			t.Error(pr)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d links found in %d pages: the link scanner is broken", checked, len(pages))
	}
	t.Logf("%d links and images in %d pages", checked, len(pages))
}

// TestLinkCheckerCatchesBadLinks runs the checker on a small repository of
// its own, so that TestReadmeLinks is known to fail on each kind of bad link.
func TestLinkCheckerCatchesBadLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/a.md", "# Page A\n\n## Set-up: the `ADDR` flag (and more)\n\n## Set-up: the `ADDR` flag (and more)\n\n<a id=\"custom\"></a>\n")
	write("docs/pic.png", "png")
	write("README.md", strings.Join([]string{
		"# Title",
		"[good](docs/a.md) [good anchor](docs/a.md#set-up-the-addr-flag-and-more)",
		"[second heading](docs/a.md#set-up-the-addr-flag-and-more-1) [html anchor](docs/a.md#custom)",
		"![good image](docs/pic.png \"a title\") [folder](docs/) [own heading](#title)",
		"[site](https://example.com/x) <http://127.0.0.1:8080/>",
		"[missing](docs/b.md)",
		"![missing image](docs/none.png)",
		"[outside](../shared/DESIGN.md)",
		"[absolute](/etc/passwd)",
		"[bad anchor](docs/a.md#nowhere)",
		"[bad own anchor](#nowhere)",
		"[ref]: docs/gone.md",
		"`[in code](nowhere.md)`",
		"```",
		"[in a block](nowhere.md)",
		"```",
		"<img src=\"docs/nothere.png\">",
	}, "\n"))
	files, err := repoFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, n, err := checkLinks(root, "README.md", files)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"docs/b.md", "docs/none.png", "../shared/DESIGN.md", "/etc/passwd",
		"docs/a.md#nowhere", "#nowhere", "docs/gone.md", "docs/nothere.png",
	}
	if n != 16 {
		t.Errorf("found %d links, want 16", n)
	}
	if len(problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for _, w := range want {
		found := false
		for _, p := range problems {
			if strings.Contains(p, "("+w+")") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem reported for %s", w)
		}
	}
}

// repoFiles lists the repository's files under root (slash paths relative to
// it): tracked ones and new ones that git does not ignore. Outside a git
// checkout every file on disk counts.
func repoFiles(root string) (map[string]bool, error) {
	out := map[string]bool{}
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	if b, err := cmd.Output(); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				out[l] = true
			}
		}
		return out, nil
	}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = true
		return err
	})
	return out, err
}

var (
	fence       = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan    = regexp.MustCompile("(`+)[^`]*?(`+)")
	inlineLink  = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)`)
	refLink     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	htmlLink    = regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`)
	htmlAnchor  = regexp.MustCompile(`(?i)<a\s[^>]*\b(?:id|name)\s*=\s*"([^"]*)"`)
	heading     = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	notSlugChar = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// checkLinks returns a line per bad link of one page (a slash path relative
// to root), and how many links it checked.
func checkLinks(root, page string, files map[string]bool) ([]string, int, error) {
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		return nil, 0, err
	}
	var problems []string
	n := 0
	inFence := false
	for i, line := range strings.Split(string(text), "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, re := range []*regexp.Regexp{inlineLink, refLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				targets = append(targets, strings.Trim(m[1], "<>"))
			}
		}
		for _, target := range targets {
			n++
			if msg := checkLink(root, page, target, files); msg != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: (%s) %s", page, i+1, target, msg))
			}
		}
	}
	return problems, n, nil
}

// checkLink says what is wrong with one link target of page, or "".
func checkLink(root, page, target string, files map[string]bool) string {
	u, err := url.Parse(target)
	if err != nil {
		return "does not parse: " + err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		switch u.Scheme {
		case "http", "https", "mailto":
			return ""
		}
		return "links outside the repository"
	}
	p := u.Path
	if strings.HasPrefix(p, "/") {
		return "is an absolute path: use a path relative to the page"
	}
	file := page
	if p != "" {
		file = path.Clean(path.Join(path.Dir(page), p))
		if file == ".." || strings.HasPrefix(file, "../") {
			return "leaves the repository"
		}
		if !files[file] && !isDir(files, file) {
			return "names no file of the repository"
		}
	}
	if u.Fragment == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	anchors, err := pageAnchors(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return err.Error()
	}
	if !anchors[u.Fragment] {
		return "names no heading of " + file
	}
	return ""
}

// isDir reports whether some repository file lies under dir.
func isDir(files map[string]bool, dir string) bool {
	if dir == "." {
		return true
	}
	for f := range files {
		if strings.HasPrefix(f, dir+"/") {
			return true
		}
	}
	return false
}

// pageAnchors returns the anchors GitHub gives a Markdown page: one per
// heading (lower case, punctuation dropped, spaces made hyphens; a repeated
// heading gets -1, -2, ...), and the id or name of each HTML <a>.
func pageAnchors(file string) (map[string]bool, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(text), "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := strings.ToLower(m[2])
		slug = notSlugChar.ReplaceAllString(slug, "")
		slug = strings.ReplaceAll(slug, " ", "-")
		if k := seen[slug]; k > 0 {
			out[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out, nil
}
