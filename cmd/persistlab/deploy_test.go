package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"persistlab/internal/proc"
	"persistlab/report"
	"persistlab/results"
	"persistlab/scenario"
)

type job struct {
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Image           string          `yaml:"image"`
					Command         []string        `yaml:"command"`
					Args            []string        `yaml:"args"`
					SecurityContext securityContext `yaml:"securityContext"`
					Resources       struct {
						Limits map[string]any `yaml:"limits"`
					} `yaml:"resources"`
				} `yaml:"containers"`
				Volumes []map[string]any `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type securityContext struct {
	Privileged   *bool `yaml:"privileged"`
	Capabilities struct {
		Add  []string `yaml:"add"`
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
	AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	SeccompProfile           struct {
		Type string `yaml:"type"`
	} `yaml:"seccompProfile"`
}

func readJob(t *testing.T, name string) job {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	var j job
	if err := yaml.Unmarshal(data, &j); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want one container", name)
	}
	return j
}

// The Indexed Job gives pod I share I of as many shards as it runs, writes each to a file of its
// own, and the merge Job reads every one of them: for each index Kubernetes sets, the --shard
// value parses, no two pods write one file, and the merge's pattern matches every file.
func TestDeployJobWiresItsIndexIntoTheShard(t *testing.T) {
	shards, merge := readJob(t, "job.yaml"), readJob(t, "merge.yaml")
	spec := shards.Spec
	if spec.CompletionMode != "Indexed" || spec.Completions < 1 || spec.Parallelism < 1 || spec.Parallelism > spec.Completions {
		t.Fatalf("job: mode %q, completions %d, parallelism %d", spec.CompletionMode, spec.Completions, spec.Parallelism)
	}
	args := spec.Template.Spec.Containers[0].Args
	flag := func(name string) string {
		for i, a := range args {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
		t.Fatalf("job args %v lack %s", args, name)
		return ""
	}
	if len(args) < 2 || args[0] != "run" {
		t.Fatalf("job args %v: want persistlab run SCENARIO ...", args)
	}
	if _, err := scenario.Load(args[1]); err != nil {
		t.Errorf("job scenario: %v", err)
	}
	mergeCmd := strings.Join(merge.Spec.Template.Spec.Containers[0].Command, " ")
	pattern := ""
	for _, f := range strings.Fields(mergeCmd) {
		if strings.Contains(f, "*") {
			pattern = f
		}
	}
	outs := map[string]bool{}
	for i := 0; i < spec.Completions; i++ {
		index := strconv.Itoa(i)
		s, err := scenario.ParseShard(strings.ReplaceAll(flag("--shard"), "$(JOB_COMPLETION_INDEX)", index), "")
		if err != nil || s.Index != i || s.Of != spec.Completions {
			t.Errorf("pod %d: --shard %s gives %+v, %v; want %d/%d", i, flag("--shard"), s, err, i, spec.Completions)
		}
		out := strings.ReplaceAll(flag("--out"), "$(JOB_COMPLETION_INDEX)", index)
		if outs[out] {
			t.Errorf("pod %d writes %s, as another pod does", i, out)
		}
		outs[out] = true
		if ok, _ := filepath.Match(pattern, out); !ok {
			t.Errorf("merge pattern %q misses pod %d's %s", pattern, i, out)
		}
	}
	if shards.Spec.Template.Spec.Containers[0].Image != merge.Spec.Template.Spec.Containers[0].Image {
		t.Error("the merge runs another image than the shards: merge refuses other versions")
	}
	if !strings.Contains(mergeCmd, "persistlab merge") || !strings.Contains(mergeCmd, "--out") {
		t.Errorf("merge command %q", mergeCmd)
	}
	// The image is made by the repository's own setup script, as a fresh machine is.
	docker, err := os.ReadFile(filepath.Join("..", "..", "deploy", "Dockerfile"))
	if err != nil || !strings.Contains(string(docker), "scripts/setup") || !strings.Contains(string(docker), "make build") {
		t.Errorf("Dockerfile: %v", err)
	}
}

// Each Job asks for the least it needs: every capability dropped but what it adds, no privilege
// escalation, the runtime's seccomp profile, no hostPath volume (the baseline Pod Security level
// refuses them; /dev/fuse comes from a device plugin). The shards add CAP_SYS_ADMIN alone.
func TestDeployJobsAskForTheLeastPrivilege(t *testing.T) {
	for _, name := range []string{"job.yaml", "merge.yaml"} {
		j := readJob(t, name)
		c := j.Spec.Template.Spec.Containers[0]
		sc := c.SecurityContext
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s: privileged", name)
		}
		if !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) {
			t.Errorf("%s: drops %v, want [ALL]", name, sc.Capabilities.Drop)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation is not false", name)
		}
		if sc.SeccompProfile.Type != "RuntimeDefault" {
			t.Errorf("%s: seccomp profile %q, want RuntimeDefault", name, sc.SeccompProfile.Type)
		}
		for _, v := range j.Spec.Template.Spec.Volumes {
			if _, ok := v["hostPath"]; ok {
				t.Errorf("%s: a hostPath volume %v", name, v["name"])
			}
		}
		want := []string(nil)
		if name == "job.yaml" {
			want = []string{"SYS_ADMIN"}
			if _, ok := c.Resources.Limits[fuseDevice]; !ok {
				t.Errorf("%s: no %s in the limits: the pod has no /dev/fuse", name, fuseDevice)
			}
		}
		if !slices.Equal(sc.Capabilities.Add, want) {
			t.Errorf("%s: adds %v, want %v", name, sc.Capabilities.Add, want)
		}
	}
}

// fuseDevice is the resource the generic device plugin gives /dev/fuse as.
const fuseDevice = "squat.ai/fuse"

// The Job's own scenario runs with exactly the Job's capabilities and no_new_privs: the bounding
// set of every process persistlab starts (gcsfuse, fio) holds what the manifest adds, no more.
func TestDeployJobsScenarioRunsWithTheJobsCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, as the Job's container runs")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	j := readJob(t, "job.yaml")
	c := j.Spec.Template.Spec.Containers[0]
	bounding := "-all"
	for _, capability := range c.SecurityContext.Capabilities.Add {
		bounding += ",+" + strings.ToLower(capability)
	}
	work := t.TempDir()
	out := filepath.Join(work, "r.json")
	args := []string{"--bounding-set=" + bounding, "--inh-caps=-all"}
	if p := c.SecurityContext.AllowPrivilegeEscalation; p != nil && !*p {
		args = append(args, "--no-new-privs")
	}
	// The Job's scenario (args[1]), a few short cells of it.
	args = append(args, binary, "run", c.Args[1], "--quick", "--sweep", "file_size=10KiB", "--sweep", "rw=read",
		"--set", "runtime=1s", "--repeat", "1", "--out", out, "--workdir", filepath.Join(work, "scratch"))
	cmd := exec.Command("setpriv", args...)
	output, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s under the Job's capabilities: %v\n%s", c.Args[1], err, proc.Tail(string(output), 20))
	}
	r, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusComplete || len(r.Cells) == 0 {
		t.Fatalf("status %s, %d cells", r.Status, len(r.Cells))
	}
	for _, cell := range r.Cells {
		if cell.Failure != "" {
			t.Errorf("%s %v: %s", cell.Backend, cell.Params, cell.Failure)
		}
	}
}

// The image's build context is the source alone: every COPY source exists, every script a RUN
// calls is there and executable, and .dockerignore keeps this machine's builds, tools and results
// out (bin/, .tools, .venv, out/, a binary at the root, test binaries) but nothing the build uses.
func TestDeployImageContextIsTheSourceAlone(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	instructions := strings.Split(strings.ReplaceAll(string(data), "\\\n", " "), "\n")
	copies := 0
	for _, line := range instructions {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "COPY", "ADD":
			var args []string
			for _, f := range fields[1:] {
				if strings.HasPrefix(f, "--from=") {
					args = nil // another stage's files, not the context's
					break
				}
				if !strings.HasPrefix(f, "--") {
					args = append(args, f)
				}
			}
			if len(args) == 0 {
				continue
			}
			copies++
			for _, src := range args[:len(args)-1] {
				if matches, _ := filepath.Glob(filepath.Join(root, src)); len(matches) == 0 {
					t.Errorf("Dockerfile: %s: %s is not in the repository", line, src)
				}
			}
		case "RUN":
			for _, script := range regexp.MustCompile(`\bscripts/[\w.-]+`).FindAllString(line, -1) {
				if st, err := os.Stat(filepath.Join(root, script)); err != nil || st.Mode()&0o111 == 0 {
					t.Errorf("Dockerfile: %s: %s is missing or not executable (%v)", line, script, err)
				}
			}
			if strings.Contains(line, "make build") {
				mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
				if !regexp.MustCompile(`(?m)^build:`).Match(mk) {
					t.Errorf("Dockerfile: %s: the Makefile has no build target", line)
				}
			}
		}
	}
	if copies == 0 {
		t.Error("Dockerfile copies nothing from the repository")
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(ignore), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "!"):
			t.Errorf(".dockerignore: %s takes a file back in: this test reads no exceptions", line)
		default:
			patterns = append(patterns, strings.Trim(filepath.Clean(line), "/"))
		}
	}
	excluded := func(path string) bool {
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, path); ok {
				return true
			}
		}
		return false
	}
	for _, path := range []string{"bin", ".tools", ".venv", "out", "persistlab", "persistlab.test"} {
		if !excluded(path) {
			t.Errorf(".dockerignore does not keep %s out of the image's context", path)
		}
	}
	for _, path := range []string{"scripts", "Makefile", "go.mod", "go.sum", "cmd", "examples", "deploy"} {
		if excluded(path) {
			t.Errorf(".dockerignore keeps %s, which the build uses, out", path)
		}
	}
}

// The image builds, and its persistlab runs, wherever a container engine answers; the build
// installs everything scripts/setup does (many minutes, and the network).
func TestDeployImageBuilds(t *testing.T) {
	var engine string
	var why []string
	for _, name := range []string{"docker", "podman"} {
		path, err := exec.LookPath(name)
		if err != nil {
			why = append(why, name+": not installed")
			continue
		}
		if out, err := exec.Command(path, "info").CombinedOutput(); err != nil {
			why = append(why, name+": "+proc.Tail(strings.TrimSpace(string(out)), 1))
			continue
		}
		engine = path
		break
	}
	if engine == "" {
		t.Skipf("no container engine answers here (%s): the image build is untested, as deploy/Dockerfile says", strings.Join(why, "; "))
	}
	if testing.Short() {
		t.Skip("-short: the image build installs everything scripts/setup does")
	}
	tag := "persistlab-test-" + strconv.Itoa(os.Getpid())
	build := exec.Command(engine, "build", "-f", "deploy/Dockerfile", "-t", tag, ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s build: %v\n%s", engine, err, proc.Tail(string(out), 30))
	}
	defer exec.Command(engine, "rmi", "-f", tag).Run() // the image this test made
	out, err := exec.Command(engine, "run", "--rm", tag, "scenarios").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cloudrun-sqlite") {
		t.Errorf("persistlab scenarios in the image: %v\n%s", err, out)
	}
}
