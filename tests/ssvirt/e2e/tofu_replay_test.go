//go:build e2e

package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// recording is what OpenTofu with terraform-provider-vcd sent ssvirt-api in one run (apply, a second plan,
// import, destroy), and what it was answered; testdata/tofu/README.md says how it was made.
type recording struct {
	// Passwords of the logins the run used, by "user@org".
	Passwords map[string]string `json:"passwords"`
	Exchanges []exchange        `json:"exchanges"`
}

// exchange is one request and its answer. As is the login whose token the request carried ("" for none).
type exchange struct {
	As            string          `json:"as"`
	Method        string          `json:"method"`
	Path          string          `json:"path"`
	Query         string          `json:"query,omitempty"`
	TenantContext string          `json:"tenantContext,omitempty"`
	Accept        string          `json:"accept,omitempty"`
	ContentType   string          `json:"contentType,omitempty"`
	Body          json.RawMessage `json:"body,omitempty"`
	Status        int             `json:"status"`
	// Location is the task a 202 names (its path).
	Location string          `json:"location,omitempty"`
	Answer   json.RawMessage `json:"answer,omitempty"`
}

// urnPattern finds the ids a run makes: replayed, the same requests make other ids, which the replay maps.
var urnPattern = regexp.MustCompile(`urn:vcloud:[A-Za-z]+:[0-9a-f-]{36}`)

// volatile answer fields differ from run to run by nature.
var volatile = []string{"creationDate", "createdAt", "namespace", "sessionExpiresAt"}

// Replays each recorded run against the suite's ssvirt-api: every request as the provider sent it (with the
// ids this run's answers gave in place of the recorded ones), every answer with the recorded status and, for
// JSON, the recorded content. So the protocol the provider speaks is kept without the provider.
func TestTofuProviderReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/tofu/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in testdata/tofu: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var rec recording
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatal(err)
			}
			replay(t, rec)
		})
	}
}

func replay(t *testing.T, rec recording) {
	ids := map[string]string{}
	// tasks maps recorded task paths to this run's.
	tasks := map[string]string{}
	mapIDs := func(s string) string {
		return urnPattern.ReplaceAllStringFunc(s, func(id string) string {
			if live, ok := ids[id]; ok {
				return live
			}
			return id
		})
	}
	tokens := map[string]string{}
	for i, ex := range rec.Exchanges {
		path := mapIDs(ex.Path)
		if live, ok := tasks[ex.Path]; ok {
			path = live
		}
		u := srv.url + path
		if ex.Query != "" {
			q, err := url.ParseQuery(ex.Query)
			if err != nil {
				t.Fatalf("exchange %d: %v", i, err)
			}
			for k, vs := range q {
				for j := range vs {
					vs[j] = mapIDs(vs[j])
				}
				q[k] = vs
			}
			u += "?" + q.Encode()
		}
		req, err := http.NewRequestWithContext(t.Context(), ex.Method, u, bytes.NewReader([]byte(mapIDs(string(ex.Body)))))
		if err != nil {
			t.Fatal(err)
		}
		login := ex.Method == http.MethodPost && strings.HasPrefix(ex.Path, "/cloudapi/1.0.0/sessions")
		switch {
		case login:
			user, org, _ := strings.Cut(ex.As, "@")
			req.SetBasicAuth(user+"@"+org, rec.Passwords[ex.As])
		case ex.As != "":
			req.Header.Set("Authorization", "bearer "+tokens[ex.As])
		}
		for h, v := range map[string]string{"Accept": ex.Accept, "Content-Type": ex.ContentType,
			api.HeaderTenantContext: mapIDs(ex.TenantContext)} {
			if v != "" {
				req.Header.Set(h, v)
			}
		}
		status, header, answer := send(t, req, strings.HasPrefix(ex.Path, "/api/task/"))
		what := ex.Method + " " + ex.Path
		if status != ex.Status {
			t.Fatalf("exchange %d, %s: %d, recorded %d: %s", i, what, status, ex.Status, answer)
		}
		if login {
			tokens[ex.As] = header.Get(api.HeaderAccessToken)
		}
		if ex.Location != "" {
			live, err := url.Parse(header.Get("Location"))
			if err != nil || live.Path == "" {
				t.Fatalf("exchange %d, %s: no Location for the recorded %s", i, what, ex.Location)
			}
			tasks[ex.Location] = live.Path
		}
		if len(ex.Answer) == 0 || !json.Valid(answer) {
			continue
		}
		learnIDs(ids, ex.Answer, answer)
		want, got := normalize(t, []byte(mapIDs(string(ex.Answer)))), normalize(t, answer)
		if !reflect.DeepEqual(want, got) {
			w, _ := json.Marshal(want)
			g, _ := json.Marshal(got)
			t.Errorf("exchange %d, %s %s: answered\n%s\nrecorded\n%s", i, what, ex.Query, g, w)
		}
	}
}

// send sends req; a task is read until it has ended, as the provider reads it before its next request (the
// recording holds as many reads as the recorded run needed, which a replay's timing need not match).
func send(t *testing.T, req *http.Request, task bool) (int, http.Header, []byte) {
	var status int
	var header http.Header
	var answer []byte
	// A task still running after 30 s: its last answer is returned, and compared with the recorded one.
	_ = poll.Wait(req.Context(), 30*time.Second, "task "+req.URL.Path+" ended", func() (bool, string, error) {
		resp, err := http.DefaultClient.Do(req.Clone(req.Context()))
		if err != nil {
			t.Fatal(err)
		}
		answer, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		status, header = resp.StatusCode, resp.Header
		return !task || !bytes.Contains(answer, []byte(`status="running"`)) && !bytes.Contains(answer, []byte(`status="queued"`)), "", nil
	})
	return status, header, answer
}

// learnIDs maps the ids of a recorded answer to those at the same places in the live one.
func learnIDs(ids map[string]string, recorded, live []byte) {
	var walk func(r, l any)
	walk = func(r, l any) {
		switch rv := r.(type) {
		case string:
			if lv, ok := l.(string); ok && urnPattern.MatchString(rv) && urnPattern.MatchString(lv) {
				if _, known := ids[rv]; !known {
					ids[rv] = lv
				}
			}
		case map[string]any:
			if lm, ok := l.(map[string]any); ok {
				for k, v := range rv {
					walk(v, lm[k])
				}
			}
		case []any:
			if ll, ok := l.([]any); ok && len(ll) == len(rv) {
				for i := range rv {
					walk(rv[i], ll[i])
				}
			}
		}
	}
	var r, l any
	_ = json.Unmarshal(recorded, &r)
	_ = json.Unmarshal(live, &l)
	walk(r, l)
}

// normalize decodes an answer with its volatile fields blanked.
func normalize(t *testing.T, data []byte) any {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				if slices.Contains(volatile, k) {
					x[k] = "*"
					continue
				}
				walk(child)
			}
		case []any:
			for _, child := range x {
				walk(child)
			}
		}
	}
	walk(v)
	return v
}
