package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

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
					Image   string   `yaml:"image"`
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
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
