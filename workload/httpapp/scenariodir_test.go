package httpapp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// {scenario_dir} names the scenario file's directory in the command, its preparation, its
// environment and the k6 script; a relative k6 script is the scenario's too.
func TestScenarioDirIsTheScenarioFilesDirectory(t *testing.T) {
	dir := t.TempDir()
	w, err := New(scenario.Workload{Type: Name, Dir: dir, Sections: map[string]any{
		"command": []any{"python3", "{scenario_dir}/app.py", "--port", "{port}"},
		"prepare": []any{"python3", "{scenario_dir}/app.py", "--prepare"},
		"env":     map[string]any{"CONFIG": "{scenario_dir}/config.yml"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	app := w.(*Workload)
	want := filepath.Join(dir, "app.py")
	if app.command[1] != want || app.prepare[1] != want || app.env[0] != "CONFIG="+filepath.Join(dir, "config.yml") {
		t.Errorf("command %q, prepare %q, env %q: want %s", app.command, app.prepare, app.env, want)
	}
	for _, script := range []string{"test.js", "{scenario_dir}/test.js"} {
		s, err := read(workload.Resolve(Params, map[string]string{"k6_script": script}, nil), dir)
		if err != nil || s.k6Script != filepath.Join(dir, "test.js") {
			t.Errorf("k6_script %s: %q, %v; want %s", script, s.k6Script, err, filepath.Join(dir, "test.js"))
		}
	}
	// A built-in scenario has no directory: the placeholder is refused, naming the field.
	_, err = New(scenario.Workload{Type: Name, Sections: map[string]any{"command": []any{"python3", "{scenario_dir}/app.py", "{port}"}}})
	var fe *param.FieldError
	if !errors.As(err, &fe) || fe.Field != "workload.command" || !strings.Contains(fe.Allowed, "read from a file") {
		t.Errorf("{scenario_dir} in a built-in: %v", err)
	}
}

// A relative path to a file beside the scenario would name nothing in the backend's directory,
// where the app runs: it is refused with the fix; the program's own relative path is resolved.
func TestARelativePathBesideTheScenarioIsRefusedWithTheFix(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(scenario.Workload{Type: Name, Dir: dir, Sections: map[string]any{"command": []any{"python3", "app.py", "--port", "{port}"}}})
	var fe *param.FieldError
	if !errors.As(err, &fe) || fe.Field != "workload.command[1]" || !strings.Contains(fe.Allowed, "{scenario_dir}/app.py") {
		t.Fatalf("python3 app.py beside the scenario: %v; want workload.command[1] refused, naming {scenario_dir}/app.py", err)
	}
	// A word that names no file there (a subcommand, a data file the app makes), a directory, or
	// the module after -m, is the app's.
	for _, name := range []string{"data", "myapp"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, command := range [][]any{{"python3", "-m", "http.server", "{port}", "--directory", "data"}, {"python3", "-m", "myapp", "{port}"}} {
		if _, err := New(scenario.Workload{Type: Name, Dir: dir, Sections: map[string]any{"command": command}}); err != nil {
			t.Errorf("%v beside a directory of its words' names: %v", command, err)
		}
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "server"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := New(scenario.Workload{Type: Name, Dir: dir, Sections: map[string]any{"command": []any{"bin/server", "{port}"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.(*Workload).command[0]; got != filepath.Join(bin, "server") {
		t.Errorf("program bin/server: %q, want the scenario's %s", got, filepath.Join(bin, "server"))
	}
}
