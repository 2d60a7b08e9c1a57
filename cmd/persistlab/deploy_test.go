package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
