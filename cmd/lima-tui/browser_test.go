package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestCmdBrowserNeedsTerminal(t *testing.T) {
	old := wizardTerminal
	defer func() { wizardTerminal = old }()
	wizardTerminal = func() bool { return false }
	var out, errb bytes.Buffer
	if code := cmdBrowser(context.Background(), []string{"--owner", "Ji-woo"}, &out, &errb); code != exitUsage {
		t.Fatalf("exit = %d, want %d", code, exitUsage)
	}
	for _, want := range []string{"needs a terminal", "lima-tui exceptions list", "lima-tui exceptions replay"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q", out.String())
	}
}

func TestCmdBrowserRejectsArguments(t *testing.T) {
	var out, errb bytes.Buffer
	if code := cmdBrowser(context.Background(), []string{"--owner", "x", "extra"}, &out, &errb); code != exitUsage {
		t.Fatalf("exit = %d, want %d", code, exitUsage)
	}
	if !strings.Contains(errb.String(), `unexpected argument "extra"`) {
		t.Errorf("stderr = %q", errb.String())
	}
}
