package main

import (
	"strings"
	"testing"
)

// report opens with the answer; --brief stops there, the default adds the tables, and --detail
// what still differs from the seed; asking for both is refused, naming them.
func TestReportViews(t *testing.T) {
	const file = "../../report/testdata/cloudrun-sqlite-quick.json"
	brief, _, err := persistlab(t, "report", file, "--brief")
	if err != nil || !strings.Contains(brief, "ANSWER") || strings.Contains(brief, "backend local") {
		t.Errorf("--brief: %v\n%s", err, brief)
	}
	tables, _, err := persistlab(t, "report", file)
	answerAt, tableAt := strings.Index(tables, "ANSWER"), strings.Index(tables, "backend local")
	if err != nil || answerAt < 0 || tableAt < answerAt || strings.Contains(tables, "what still differs") {
		t.Errorf("default: %v\n%s", err, tables)
	}
	detail, _, err := persistlab(t, "report", file, "--detail")
	if err != nil || !strings.Contains(detail, "what still differs") {
		t.Errorf("--detail: %v\n%s", err, detail)
	}
	_, stderr, err := persistlab(t, "report", file, "--brief", "--detail")
	if err == nil || !strings.Contains(stderr, "--brief and --detail") {
		t.Errorf("--brief --detail: %v %s", err, stderr)
	}
}
