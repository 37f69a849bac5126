package main

import (
	"bytes"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"
)

// Every flag run defines is in the usage text; --calibration-budget was
// once missing from it and from run's synopsis.
func TestRunFlagsInUsage(t *testing.T) {
	var out bytes.Buffer
	if _, err := parseRunFlags(&env{stdout: &out, stderr: &out}, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h: %v, want flag.ErrHelp", err)
	}
	names := regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(out.String(), -1)
	if len(names) < 10 {
		t.Fatalf("run -h lists %d flags:\n%s", len(names), out.String())
	}
	for _, m := range names {
		flag := "--" + m[1]
		if m[1] == "o" {
			flag = "-o"
		}
		if !regexp.MustCompile(regexp.QuoteMeta(flag) + `[ :\n]`).MatchString(usageText) {
			t.Errorf("usage text does not list %s", flag)
		}
	}
	const want = "[--calibration-budget SIZE]"
	if !strings.Contains(synopses["run"], want) || !strings.Contains(out.String(), want) {
		t.Errorf("run's synopsis does not contain %s:\n%s", want, out.String())
	}
	c, err := parseRunFlags(&env{stdout: &out, stderr: &out}, []string{"--calibration-budget", "64K"})
	if err != nil || c.calibBudget != 64<<10 {
		t.Errorf("--calibration-budget 64K: %+v, %v; want 65536 bytes", c, err)
	}
}
