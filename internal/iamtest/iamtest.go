// Package iamtest is a local HTTP endpoint that speaks the AWS IAM Query
// protocol (POST / with a form body Action=…&Version=2010-05-08, XML
// answers) for the one operation Lima calls, GetRole, with its roles in
// memory, so tests can point the real aws-sdk-go-v2 IAM client at it
// (AWS_ENDPOINT_URL_IAM). Signatures are not checked; it is not IAM.
package iamtest

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
)

// Server is the endpoint.
type Server struct {
	srv   *httptest.Server
	mu    sync.Mutex
	roles map[string]string // name -> ARN
	calls []string          // "GetRole lima-glue"
}

// New starts the endpoint on loopback; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{roles: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the endpoint (AWS_ENDPOINT_URL_IAM).
func (s *Server) URL() string { return s.srv.URL }

// PutRole creates a role.
func (s *Server) PutRole(name, arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[name] = arn
}

// Calls lists the requests received as "Action RoleName", in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

const ns = "https://iam.amazonaws.com/doc/2010-05-08/"

type role struct {
	Path       string `xml:"Path"`
	RoleName   string `xml:"RoleName"`
	RoleID     string `xml:"RoleId"`
	Arn        string `xml:"Arn"`
	CreateDate string `xml:"CreateDate"`
}

type getRoleResponse struct {
	XMLName   xml.Name `xml:"GetRoleResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	Role      role     `xml:"GetRoleResult>Role"`
	RequestID string   `xml:"ResponseMetadata>RequestId"`
}

type errorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	Type      string   `xml:"Error>Type"`
	Code      string   `xml:"Error>Code"`
	Message   string   `xml:"Error>Message"`
	RequestID string   `xml:"RequestId"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	if r.Method != http.MethodPost || err != nil {
		writeXML(w, http.StatusBadRequest, errorResponse{Xmlns: ns, Type: "Sender", Code: "MalformedInput", Message: "expected POST with a form body"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	action, name := form.Get("Action"), form.Get("RoleName")
	s.calls = append(s.calls, action+" "+name)
	id := "iamtest-" + strconv.Itoa(len(s.calls))
	switch {
	case form.Get("Version") != "2010-05-08":
		writeXML(w, http.StatusBadRequest, errorResponse{Xmlns: ns, Type: "Sender", Code: "InvalidParameterValue", Message: "Version must be 2010-05-08", RequestID: id})
	case action != "GetRole":
		writeXML(w, http.StatusBadRequest, errorResponse{Xmlns: ns, Type: "Sender", Code: "InvalidAction", Message: fmt.Sprintf("iamtest does not implement %s", action), RequestID: id})
	default:
		arn, ok := s.roles[name]
		if !ok {
			writeXML(w, http.StatusNotFound, errorResponse{Xmlns: ns, Type: "Sender", Code: "NoSuchEntity", Message: fmt.Sprintf("The role with name %s cannot be found.", name), RequestID: id})
			return
		}
		writeXML(w, http.StatusOK, getRoleResponse{Xmlns: ns, Role: role{Path: "/", RoleName: name, RoleID: "AROAIAMTEST" + strconv.Itoa(len(name)), Arn: arn, CreateDate: "2026-01-01T00:00:00Z"}, RequestID: id})
	}
}

func writeXML(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(v)
}
