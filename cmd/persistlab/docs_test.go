package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README is a page a newcomer finishes in five minutes; reference material lives in docs/.
func TestREADMEIsUnder150Lines(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n >= 150 {
		t.Errorf("README.md has %d lines, the limit is 149: move reference material into docs/", n)
	}
}

// Every relative link in README.md and docs/*.md names a file that exists, and an #anchor a
// heading of that file.
func TestDocsLinksResolve(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	links := 0
	for _, f := range files {
		n, broken, err := brokenLinks(f)
		if err != nil {
			t.Fatal(err)
		}
		links += n
		for _, b := range broken {
			t.Errorf("%s: %s", strings.TrimPrefix(f, "../../"), b)
		}
	}
	if links == 0 {
		t.Error("no relative link found in README.md or docs/*.md: the link reader is broken")
	}
}

// The link check finds a missing file, a missing heading in another file and in the same file,
// and passes the links that resolve, including those a code span or block only shows.
func TestDocsLinkCheckFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("other.md", "# Other\n\n## Privileges on a cluster\n\n## Killed runs and `persistlab clean`\n\n## Twice\n\n## Twice\n")
	write("page.md", strings.Join([]string{
		"# Page",
		"## What's (new): here",
		"[ok](other.md) [ok](other.md#privileges-on-a-cluster) [ok](#whats-new-here)",
		"[ok](other.md#killed-runs-and-persistlab-clean) [ok](other.md#twice-1) [ok](https://example.com/x#y)",
		"[ok](other.md \"a title\") ![ok](other.md)",
		"[missing file](nothere.md) [missing anchor](other.md#privileges) [missing here](#nowhere)",
		"[missing twin](other.md#twice-2)",
		"`[in code](gone.md)`",
		"```",
		"[in a block](gone.md)",
		"```",
	}, "\n"))
	n, broken, err := brokenLinks(filepath.Join(dir, "page.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"link nothere.md: no such file",
		"link other.md#privileges: other.md has no heading with anchor #privileges",
		"link #nowhere: page.md has no heading with anchor #nowhere",
		"link other.md#twice-2: other.md has no heading with anchor #twice-2",
	}
	if !slices.Equal(broken, want) {
		t.Errorf("broken links:\n%s\nwant:\n%s", strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
	if n != 11 {
		t.Errorf("%d relative links read, want 11", n)
	}
}

var (
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	mdScheme   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	notInSlug  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	linkInHead = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// brokenLinks reads the Markdown file path and returns how many relative links it holds (outside
// code) and a line for each that names no file, or no heading of its file.
func brokenLinks(path string) (int, []string, error) {
	lines, err := markdownLines(path)
	if err != nil {
		return 0, nil, err
	}
	var n int
	var broken []string
	for _, line := range lines {
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if mdScheme.MatchString(target) {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			full := path
			if file != "" {
				full = filepath.Join(filepath.Dir(path), file)
				if _, err := os.Stat(full); err != nil {
					broken = append(broken, fmt.Sprintf("link %s: no such file", target))
					continue
				}
			}
			if anchor == "" {
				continue
			}
			anchors, err := headingAnchors(full)
			if err != nil {
				broken = append(broken, fmt.Sprintf("link %s: %v", target, err))
				continue
			}
			if !slices.Contains(anchors, anchor) {
				broken = append(broken, fmt.Sprintf("link %s: %s has no heading with anchor #%s", target, filepath.Base(full), anchor))
			}
		}
	}
	return n, broken, nil
}

// markdownLines returns the lines of a Markdown file outside fenced code blocks.
func markdownLines(path string) ([]string, error) {
	data, err := readDoc(path)
	if err != nil {
		return nil, err
	}
	var out []string
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out, nil
}

// headingAnchors returns the anchors GitHub gives a Markdown file's headings: the heading's text
// in lower case, without punctuation, spaces as hyphens, and -1, -2, ... on repeats.
func headingAnchors(path string) ([]string, error) {
	if !strings.HasSuffix(path, ".md") {
		return nil, fmt.Errorf("%s is not Markdown, so it has no headings", filepath.Base(path))
	}
	lines, err := markdownLines(path)
	if err != nil {
		return nil, err
	}
	var anchors []string
	seen := map[string]int{}
	for _, line := range lines {
		text, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		text = linkInHead.ReplaceAllString(strings.TrimSpace(text), "$1")
		slug := strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if k := seen[slug]; k > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", slug, k))
		} else {
			anchors = append(anchors, slug)
		}
		seen[slug]++
	}
	return anchors, nil
}

// readDoc reads a documentation file through a size limit: no page of ours comes near it.
func readDoc(path string) ([]byte, error) {
	const limit = 4 << 20
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is over %d bytes", path, limit)
	}
	return data, nil
}
