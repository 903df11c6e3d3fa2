package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestCmdWizardNeedsTerminal(t *testing.T) {
	old := wizardTerminal
	defer func() { wizardTerminal = old }()
	wizardTerminal = func() bool { return false }
	var out, errb bytes.Buffer
	if code := cmdWizard(context.Background(), nil, &out, &errb); code != exitUsage {
		t.Fatalf("exit = %d, want %d", code, exitUsage)
	}
	if !strings.Contains(errb.String(), "needs a terminal") || !strings.Contains(errb.String(), "lima-tui run --plan") {
		t.Errorf("stderr should name the headless commands:\n%s", errb.String())
	}
}

func TestCmdWizardBadTheme(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	var out, errb bytes.Buffer
	if code := cmdWizard(context.Background(), []string{"--theme", "neon"}, &out, &errb); code != exitUsage {
		t.Fatalf("exit = %d, want %d", code, exitUsage)
	}
	if !strings.Contains(errb.String(), "unknown theme") {
		t.Errorf("stderr = %q", errb.String())
	}
}
