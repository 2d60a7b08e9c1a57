package fio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxJobFileBytes bounds a user's job file.
const MaxJobFileBytes = 1 << 20

// UserJob reads a user's own fio job file and points it at dir: every `directory=` is replaced by
// dir (a [global] section first sets it, and lat_percentiles=1 for the percentiles persistlab
// reports). Options that would reach outside dir are refused: an absolute filename=, and include
// directives, whose files persistlab would not see.
func UserJob(path, dir string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("fio job file %s: %w", path, err)
	}
	if st.Size() > MaxJobFileBytes {
		return "", fmt.Errorf("fio job file %s: %d bytes: want under %d KiB", path, st.Size(), MaxJobFileBytes>>10)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("fio job file %s: %w", path, err)
	}
	var out []string
	out = append(out, "; persistlab: the job's files live on the backend under test", "[global]", "directory="+dir, "lat_percentiles=1", "")
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		key, value, _ := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case strings.HasPrefix(line, "include ") || strings.HasPrefix(line, "include\t"):
			return "", fmt.Errorf("fio job file %s line %d: %q: include is not supported; put the options in the file", path, i+1, line)
		case key == "directory":
			continue // the backend's directory, set above
		case (key == "filename" || key == "filename_format") && strings.Contains(value, "/"):
			return "", fmt.Errorf("fio job file %s line %d: %s=%s: want a name inside the backend's directory (no /)", path, i+1, key, value)
		case key == "opendir":
			return "", fmt.Errorf("fio job file %s line %d: %s: opendir reads a directory outside the backend's; name the files with filename=", path, i+1, line)
		case key == "stonewall" || key == "wait_for" || key == "new_group" || key == "wait_for_previous":
			// persistlab sums its jobs' bandwidth over the run: jobs that run one after another
			// would be added as if they had run at once.
			return "", fmt.Errorf("fio job file %s line %d: %s: jobs that wait for each other are not supported (their bandwidths would be summed as if concurrent); use a job file per phase", path, i+1, line)
		}
		out = append(out, raw)
	}
	return strings.Join(out, "\n") + "\n", nil
}

// CheckFile asks fio to read a job file's text without running it.
func CheckFile(ctx context.Context, bin, text, workDir string) error {
	path := filepath.Join(workDir, JobFile)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	stdout, stderr, err := runFio(ctx, bin, workDir, "--parse-only", path)
	if err != nil {
		return withFio(fmt.Errorf("fio refuses the job file: %w", err), stderr, stdout)
	}
	return nil
}

// RunFile runs a job file's text with fio and reads its report, like Run.
func RunFile(ctx context.Context, bin, text, workDir string) (*Output, []byte, error) {
	path := filepath.Join(workDir, JobFile)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return nil, nil, err
	}
	stdout, stderr, err := runFio(ctx, bin, workDir, "--output-format=json+", path)
	return finish("fio job file", stdout, stderr, err)
}
