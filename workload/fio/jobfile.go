package fio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"persistlab/lib/readfile"
	"persistlab/param"
)

// MaxJobFileBytes bounds a user's job file.
const MaxJobFileBytes = 1 << 20

// maxLineBytes bounds a line of a job: fio reads a longer line than its buffer (4 KiB) as two,
// the second an option of its own.
const maxLineBytes = 1024

// jobSection is one [section] of a user's job file.
type jobSection struct {
	name    string
	options []jobOption
}

// jobOption is one option, by fio's name for it.
type jobOption struct {
	name, value string
	bare        bool // written without '=': a flag
}

// UserJob reads a user's own fio job file and renders it pointed at dir: a [global] section
// first sets directory=dir and lat_percentiles=1 (for the percentiles persistlab reports), then
// the file's sections, each option written as fio's name=value. Only a regular file is read, and
// only options on persistlab's list (allowedOptions); include is refused. Errors quote at most
// the offending option of the file, never its other lines.
func UserJob(jobPath, dir string) (string, error) {
	if !path.IsAbs(dir) || strings.ContainsAny(dir, ":$") || hasControl(dir) {
		return "", fmt.Errorf("fio job file %s: directory %q: want an absolute path without ':' or '$'", jobPath, dir)
	}
	data, err := readJobFile(jobPath)
	if err != nil {
		return "", err
	}
	sections, err := parseJob(string(data))
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			value := fmt.Sprintf("%s line %d", jobPath, le.line)
			if le.quote != "" {
				value += ": " + le.quote
			}
			return "", &param.FieldError{Field: "workload.job_file", Value: value, Allowed: le.allowed}
		}
		return "", err
	}
	var b strings.Builder
	b.WriteString("; persistlab: the job's files live on the backend under test\n[global]\ndirectory=" + dir + "\nlat_percentiles=1\n")
	for _, s := range sections {
		b.WriteString("\n[" + s.name + "]\n")
		for _, o := range s.options {
			if o.bare {
				b.WriteString(o.name + "\n")
			} else {
				b.WriteString(o.name + "=" + o.value + "\n")
			}
		}
	}
	return b.String(), nil
}

// readJobFile reads a regular file of at most MaxJobFileBytes: a FIFO would block the read (and
// with it persistlab's handling of SIGINT), a device like /dev/zero would never end.
func readJobFile(jobPath string) ([]byte, error) {
	bad := func(allowed string) error {
		return &param.FieldError{Field: "workload.job_file", Value: jobPath, Allowed: allowed}
	}
	data, err := readfile.Regular(jobPath, MaxJobFileBytes)
	var notRegular *readfile.NotRegularError
	var tooLarge *readfile.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return nil, bad("a regular file, not " + notRegular.Kind)
	case errors.As(err, &tooLarge):
		return nil, bad(fmt.Sprintf("a job file of at most %d KiB", MaxJobFileBytes>>10))
	case err != nil:
		return nil, bad("a readable fio job file: " + pathErr(err))
	}
	return data, nil
}

// pathErr is err without the path, which the error's value already names.
func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// lineError is a problem on one line of a job file: quote is what of the line may be shown
// (its option, cut), never the line's other text.
type lineError struct {
	line    int
	quote   string
	allowed string
}

func (e *lineError) Error() string {
	return fmt.Sprintf("line %d: %s: want %s", e.line, e.quote, e.allowed)
}

// maxQuote bounds how much of a line an error shows.
const maxQuote = 80

func quote(s string) string {
	if len(s) <= maxQuote {
		return s
	}
	return strings.ToValidUTF8(s[:maxQuote], "") + "..."
}

// parseJob reads a job file as fio does (fio's __parse_jobs_ini): after leading blanks, a line
// starting with ';' or '#' is a comment, '[name]' starts a section, a line starting with
// "include" (any text after it, '=' too) includes a file, and any other is an option, name=value
// or a bare name, fio's name ending at the first '='. fio matches names exactly (case too); fio
// ends a value at ';' or '#', so a value holding either is refused (checkOption).
func parseJob(text string) ([]jobSection, error) {
	var sections []jobSection
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		if len(raw) > maxLineBytes {
			return nil, &lineError{n, "", fmt.Sprintf("a line of at most %d bytes", maxLineBytes)}
		}
		if hasControl(strings.TrimSuffix(raw, "\r")) {
			return nil, &lineError{n, "", "a line of text, without control characters"}
		}
		line := strings.Trim(raw, " \t\r")
		switch {
		case line == "" || line[0] == ';' || line[0] == '#':
			continue
		case len(line) >= len("include") && strings.EqualFold(line[:len("include")], "include"):
			return nil, &lineError{n, "include", "no include: persistlab checks only the options it reads; put them in the file"}
		case line[0] == '[':
			name, ok := strings.CutSuffix(line[1:], "]")
			if !ok || !jobName(name) {
				return nil, &lineError{n, "", "a section [name], the name of letters, digits, _ . -"}
			}
			sections = append(sections, jobSection{name: name})
			continue
		}
		name, value, hasValue := strings.Cut(line, "=")
		name, value = strings.TrimRight(name, " \t"), strings.Trim(value, " \t")
		if !optionName.MatchString(name) {
			// Not an option: the line is not shown, whatever file it came from.
			return nil, &lineError{n, "", "an option (name=value or a bare name), a [section] or a ; comment"}
		}
		if len(sections) == 0 {
			return nil, &lineError{n, quote(name), "options inside a [section]"}
		}
		canonical, problem, ofValue := checkOption(name, value)
		if problem != "" {
			shown := name
			if ofValue {
				shown = name + "=" + value
			}
			return nil, &lineError{n, quote(shown), problem}
		}
		s := &sections[len(sections)-1]
		s.options = append(s.options, jobOption{name: canonical, value: value, bare: !hasValue})
	}
	return sections, nil
}

// CheckFile asks fio to read a job file's text without running it. Only fio's first line of
// complaint is kept: fio may quote several lines of the file.
func CheckFile(ctx context.Context, bin, text string) error {
	stdout, stderr, err := runFioInput(ctx, bin, "", []byte(text), "--parse-only", "-")
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(stderr)), "\n")
		if first == "" {
			first, _, _ = strings.Cut(strings.TrimSpace(string(stdout)), "\n")
		}
		return withFio(fmt.Errorf("fio refuses the job file: %w", err), []byte(quote(first)), nil)
	}
	return nil
}

// RunFile runs a job file's text with fio and reads its report, like Run.
func RunFile(ctx context.Context, bin, text, workDir string) (*Output, []byte, error) {
	jobPath := filepath.Join(workDir, JobFile)
	if err := os.WriteFile(jobPath, []byte(text), 0o644); err != nil {
		return nil, nil, err
	}
	stdout, stderr, err := runFio(ctx, bin, workDir, "--output-format=json+", jobPath)
	return finish("fio job file", stdout, stderr, err)
}
