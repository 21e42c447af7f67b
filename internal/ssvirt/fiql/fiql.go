// Package fiql parses the part of FIQL that Cloud Director's CloudAPI filters use (filter=name==web;isEnabled==true)
// into data. A filter is never evaluated as code: the API turns it into parameterised SQL or compares values with
// Matches. What the parser does not understand is an error, so that no filter is ever silently dropped.
package fiql

import (
	"fmt"
	"regexp"
	"strings"
)

// Op is a comparison.
type Op int

// Comparisons: a value with "*" in it is a wildcard pattern for both.
const (
	Eq Op = iota // ==
	Ne           // !=
)

// Constraint is "selector op value".
type Constraint struct {
	Selector string
	Op       Op
	Value    string
}

// Wildcard says whether the value is a pattern ("*" stands for any run of characters).
func (c Constraint) Wildcard() bool { return strings.Contains(c.Value, "*") }

// Filter is a disjunction (",") of conjunctions (";"): FIQL's precedence. Groups in parentheses, which Cloud
// Director's clients send ("(name==a;region.id==b)"), are multiplied out into this form.
type Filter [][]Constraint

// Limits keep a filter's cost bounded: its length, and the comparisons it has once multiplied out.
const (
	MaxLength      = 2048
	MaxConstraints = 16
)

var constraintPattern = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.]*)(==|!=|=[A-Za-z]*=)(.*)$`)

// Parse reads a filter; "" is no filter.
func Parse(s string) (Filter, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > MaxLength {
		return nil, fmt.Errorf("filter: at most %d characters", MaxLength)
	}
	p := parser{s: s}
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i < len(s) {
		return nil, fmt.Errorf("filter %q: unexpected %q at %d", s, s[p.i], p.i)
	}
	return f, nil
}

// parser reads or := and ("," and)*; and := term (";" term)*; term := "(" or ")" | constraint. A value runs to the
// next ";", "," or ")".
type parser struct {
	s     string
	i     int
	depth int
}

func (p *parser) or() (Filter, error) {
	var f Filter
	for {
		g, err := p.and()
		if err != nil {
			return nil, err
		}
		f = append(f, g...)
		if err := checkSize(f); err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return f, nil
		}
		p.i++
	}
}

func (p *parser) and() (Filter, error) {
	f := Filter{nil}
	for {
		g, err := p.term()
		if err != nil {
			return nil, err
		}
		// (a,b);(c,d) is a;c, a;d, b;c, b;d.
		var product Filter
		for _, left := range f {
			for _, right := range g {
				product = append(product, append(append([]Constraint(nil), left...), right...))
			}
		}
		if err := checkSize(product); err != nil {
			return nil, err
		}
		f = product
		if p.i >= len(p.s) || p.s[p.i] != ';' {
			return f, nil
		}
		p.i++
	}
}

func (p *parser) term() (Filter, error) {
	if p.i < len(p.s) && p.s[p.i] == '(' {
		if p.depth++; p.depth > MaxConstraints {
			return nil, fmt.Errorf("filter: groups nested too deep")
		}
		p.i++
		f, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("filter %q: a group is not closed", p.s)
		}
		p.i++
		p.depth--
		return f, nil
	}
	end := p.i + strings.IndexAny(p.s[p.i:], ";,()")
	if end < p.i {
		end = len(p.s)
	}
	c, err := parseConstraint(p.s[p.i:end])
	if err != nil {
		return nil, err
	}
	p.i = end
	return Filter{{c}}, nil
}

func checkSize(f Filter) error {
	n := 0
	for _, and := range f {
		n += len(and)
	}
	if n > MaxConstraints {
		return fmt.Errorf("filter: at most %d comparisons", MaxConstraints)
	}
	return nil
}

func parseConstraint(raw string) (Constraint, error) {
	m := constraintPattern.FindStringSubmatch(raw)
	if m == nil {
		return Constraint{}, fmt.Errorf("filter: %q is not <field><op><value> with op == or !=", raw)
	}
	c := Constraint{Selector: m[1], Value: m[3]}
	switch m[2] {
	case "==":
		c.Op = Eq
	case "!=":
		c.Op = Ne
	default:
		return Constraint{}, fmt.Errorf("filter: operator %s is not supported (only == and !=, with * as wildcard)", m[2])
	}
	if c.Value == "" {
		return Constraint{}, fmt.Errorf("filter: %q compares with nothing", raw)
	}
	return c, nil
}

// Matches says whether value satisfies the constraint: exactly, or for a wildcard pattern case-insensitively (as
// the SQL the API makes of a pattern does).
func (c Constraint) Matches(value string) bool {
	var eq bool
	if c.Wildcard() {
		eq = globMatch(strings.ToLower(c.Value), strings.ToLower(value))
	} else {
		eq = value == c.Value
	}
	return eq == (c.Op == Eq)
}

// globMatch matches s against pattern, where "*" is any run of characters.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(parts) == 1 && s == "" || len(parts) > 1 && strings.HasSuffix(s, last)
}

// Eval says whether the values (by selector) satisfy the filter; every selector must have been checked to exist.
func (f Filter) Eval(values func(selector string) string) bool {
	if len(f) == 0 {
		return true
	}
	for _, and := range f {
		ok := true
		for _, c := range and {
			if !c.Matches(values(c.Selector)) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
