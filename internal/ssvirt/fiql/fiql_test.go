package fiql

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f, err := Parse("name==web;isEnabled!=false,name==*db*")
	if err != nil {
		t.Fatal(err)
	}
	want := Filter{
		{{Selector: "name", Op: Eq, Value: "web"}, {Selector: "isEnabled", Op: Ne, Value: "false"}},
		{{Selector: "name", Op: Eq, Value: "*db*"}},
	}
	if len(f) != 2 || len(f[0]) != 2 || f[0][0] != want[0][0] || f[0][1] != want[0][1] || f[1][0] != want[1][0] {
		t.Errorf("parsed %+v", f)
	}
	if f, err := Parse(""); err != nil || f != nil {
		t.Errorf("empty filter: %v %v", f, err)
	}
	// A value may hold "=": only the first operator splits.
	if f, err := Parse("description==a=b"); err != nil || f[0][0].Value != "a=b" {
		t.Errorf("value with '=': %+v %v", f, err)
	}
	// Groups, as Cloud Director's clients send them, are multiplied out.
	for filter, want := range map[string]string{
		"(name==a;region.id==b)":  "[[name==a region.id==b]]",
		"(a==1,a==2);b==3":        "[[a==1 b==3] [a==2 b==3]]",
		"x==0,((a==1;b==2),c==3)": "[[x==0] [a==1 b==2] [c==3]]",
		"(a==1,a==2);(b==1,b==2)": "[[a==1 b==1] [a==1 b==2] [a==2 b==1] [a==2 b==2]]",
	} {
		f, err := Parse(filter)
		if got := f.String(); err != nil || got != want {
			t.Errorf("Parse(%q) = %s, %v; want %s", filter, got, err, want)
		}
	}
	for _, bad := range []string{
		"name", "name==", "==web", "name=gt=3", "name=lt=3", "(name==a", "name==a)", "()", "(name==a;)",
		"(a==1,a==2);(b==1,b==2);(c==1,c==2)", "name==a;", ";name==a",
		"na me==a", strings.Repeat("a==b;", 17) + "a==b", "name==" + strings.Repeat("x", MaxLength),
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

func TestMatches(t *testing.T) {
	cases := []struct {
		filter, value string
		want          bool
	}{
		{"n==web", "web", true},
		{"n==web", "Web", false},
		{"n!=web", "web", false},
		{"n!=web", "db", true},
		{"n==*eb", "WEB", true},
		{"n==w*", "web", true},
		{"n==w*", "awe", false},
		{"n==*e*", "web", true},
		{"n==*x*", "web", false},
		{"n==w*b", "web", true},
		{"n==w*b", "webs", false},
		{"n==a*a", "a", false},
		{"n!=*e*", "web", false},
		{"n==*", "", true},
	}
	for _, c := range cases {
		f, err := Parse(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := f[0][0].Matches(c.value); got != c.want {
			t.Errorf("%s on %q: %v", c.filter, c.value, got)
		}
	}
	f, _ := Parse("a==1;b==2,c==3")
	vals := map[string]string{"a": "1", "b": "x", "c": "3"}
	if !f.Eval(func(s string) string { return vals[s] }) {
		t.Error("a==1;b==2,c==3 is true when c==3")
	}
	vals["c"] = "x"
	if f.Eval(func(s string) string { return vals[s] }) {
		t.Error("a==1;b==2,c==3 is false when neither side holds")
	}
}

// String shows a filter's conjunctions, for comparing in tests.
func (f Filter) String() string {
	var ors []string
	for _, and := range f {
		var cs []string
		for _, c := range and {
			cs = append(cs, c.Selector+[]string{"==", "!="}[c.Op]+c.Value)
		}
		ors = append(ors, "["+strings.Join(cs, " ")+"]")
	}
	return "[" + strings.Join(ors, " ") + "]"
}
