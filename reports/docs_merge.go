package reports

import (
	"regexp"
	"slices"
	"strings"
)

// The generated docs are merged into the user's files: Lima's content lives
// between marker lines
//
//	<!-- lima:begin SECTION -->
//	…
//	<!-- lima:end SECTION -->
//
// and everything outside them is the user's, kept byte for byte. A marker
// counts only on a line of its own; a begin marker without its end marker
// (before the next begin marker) is the user's text. Sections of names Lima
// does not generate are left as they are.

var (
	beginRE = regexp.MustCompile(`^<!-- lima:begin ([a-z0-9_-]+) -->$`)
	endRE   = regexp.MustCompile(`^<!-- lima:end ([a-z0-9_-]+) -->$`)
)

// docSection is one section Lima generates: its name and its body (each
// line ending in "\n").
type docSection struct {
	name string
	body string
}

// segment is a run of the file: the user's text (name "") or a section.
type segment struct {
	name string
	text string
}

func markerName(line string, re *regexp.Regexp) (string, bool) {
	line = strings.TrimRight(line, "\r\n")
	line = strings.TrimSpace(line)
	m := re.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// splitLines splits s after every "\n", keeping the line endings.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// splitSegments cuts a document into user text and marked sections.
func splitSegments(doc string) []segment {
	lines := splitLines(doc)
	var segs []segment
	var user strings.Builder
	flush := func() {
		if user.Len() > 0 {
			segs = append(segs, segment{text: user.String()})
			user.Reset()
		}
	}
	for i := 0; i < len(lines); i++ {
		name, ok := markerName(lines[i], beginRE)
		if !ok {
			user.WriteString(lines[i])
			continue
		}
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if _, isBegin := markerName(lines[j], beginRE); isBegin {
				break
			}
			if n, isEnd := markerName(lines[j], endRE); isEnd && n == name {
				end = j
				break
			}
		}
		if end < 0 {
			user.WriteString(lines[i])
			continue
		}
		flush()
		segs = append(segs, segment{name: name, text: strings.Join(lines[i:end+1], "")})
		i = end
	}
	flush()
	return segs
}

// sectionBody returns the body of a section segment (between its markers).
func sectionBody(seg segment) string {
	lines := splitLines(seg.text)
	if len(lines) < 2 {
		return ""
	}
	return strings.Join(lines[1:len(lines)-1], "")
}

func renderSection(s docSection) string {
	body := s.body
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return "<!-- lima:begin " + s.name + " -->\n" + body + "<!-- lima:end " + s.name + " -->\n"
}

// mergeDoc regenerates Lima's sections inside doc. Existing sections are
// replaced in place; a missing section goes after the nearest preceding
// section of Lima's order that is present (else before the nearest
// following one; in a file without any, below the user's text, after
// header when the file is new).
func mergeDoc(doc string, sections []docSection, header string) string {
	if doc == "" {
		doc = header
	}
	segs := splitSegments(doc)
	order := make([]string, len(sections))
	for i, s := range sections {
		order[i] = s.name
	}
	present := map[string]bool{}
	for i, seg := range segs {
		if seg.name == "" {
			continue
		}
		if k := slices.Index(order, seg.name); k >= 0 {
			segs[i].text = renderSection(sections[k])
			present[seg.name] = true
		}
	}
	for k, s := range sections {
		if present[s.name] {
			continue
		}
		at := -1 // insert before segs[at]
		for p := k - 1; p >= 0 && at < 0; p-- {
			if present[order[p]] {
				for i := len(segs) - 1; i >= 0; i-- {
					if segs[i].name == order[p] {
						at = i + 1
						break
					}
				}
			}
		}
		for n := k + 1; n < len(order) && at < 0; n++ {
			if present[order[n]] {
				at = slices.IndexFunc(segs, func(sg segment) bool { return sg.name == order[n] })
			}
		}
		text := renderSection(s)
		if at < 0 {
			// No section of Lima's yet: below the user's text, after a
			// blank line.
			if len(segs) > 0 {
				last := segs[len(segs)-1].text
				sep := "\n"
				if !strings.HasSuffix(last, "\n") {
					sep = "\n\n"
				} else if strings.HasSuffix(last, "\n\n") {
					sep = ""
				}
				if sep != "" {
					segs = append(segs, segment{text: sep})
				}
			}
			segs = append(segs, segment{name: s.name, text: text})
		} else {
			ins := []segment{{name: s.name, text: text}}
			if at > 0 && segs[at-1].name != "" {
				ins = append([]segment{{text: "\n"}}, ins...)
			}
			if at < len(segs) && segs[at].name != "" {
				ins = append(ins, segment{text: "\n"})
			}
			segs = slices.Insert(segs, at, ins...)
		}
		present[s.name] = true
	}
	var b strings.Builder
	for _, seg := range segs {
		b.WriteString(seg.text)
	}
	return b.String()
}

// existingSections returns the bodies of the sections named name in doc.
func existingSections(doc, name string) []string {
	var out []string
	for _, seg := range splitSegments(doc) {
		if seg.name == name {
			out = append(out, sectionBody(seg))
		}
	}
	return out
}
