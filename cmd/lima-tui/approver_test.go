package main

import (
	"context"
	"testing"
)

func TestApproverNameFromGitElseTheOSUser(t *testing.T) {
	old := gitUserName
	t.Cleanup(func() { gitUserName = old })
	for _, c := range []struct{ git, want, from string }{
		{"Ada Lovelace", "Ada Lovelace", "git config user.name"},
		{"", defaultBy(), "the OS user"},
		{"evil\x1b[2J", defaultBy(), "the OS user"}, // a terminal escape is not a name
	} {
		gitUserName = func(context.Context, string) string { return c.git }
		if got, from := approverName(context.Background(), t.TempDir()); got != c.want || from != c.from {
			t.Errorf("git %q: approverName = %q (%s), want %q (%s)", c.git, got, from, c.want, c.from)
		}
	}
}
